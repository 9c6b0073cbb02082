package reviews

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/budget"
	"github.com/codelotse/codelotse/domain/egress"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/domain/untrusted"
	"github.com/codelotse/codelotse/ports"
)

// ToolChanged is the lastError of a server whose allowlisted tool no
// longer matches its pinned hash.
const ToolChanged = "tool_changed"

// personalDataRules are scanner rules whose matches are personal data,
// not secrets: in a result they are redacted, not a reason to drop it.
// In arguments every rule blocks the call.
var personalDataRules = map[string]bool{ports.SecretRuleEmail: true}

// mcpSetupTimeout bounds connecting to all of a run's servers and listing
// their tools, together: a slow or hanging server is skipped, it cannot
// eat the finder's time (a review never fails because of MCP).
const mcpSetupTimeout = 30 * time.Second

// mcpRun is the MCP context of one review run: its sessions and its
// budget. Created per attempt, closed in the run's finally; nothing is
// cached across runs. The budget and the stats come from the run's call
// records, so a retried attempt continues the run's budget.
type mcpRun struct {
	deps     ReviewDeps
	tenantID string
	reviewID string
	budget   *budget.RunBudget
	wrapper  *untrusted.Wrapper
	// taint keeps the secret-like values the run has seen: its request
	// and the results the model received (MC5).
	taint *egress.Taint
	// gated: the sign-off or the instance switch closed the gate, so the
	// run touches no MCP table, not even for its statistics.
	gated bool

	mu       sync.Mutex
	sessions []ports.MCPSession
	// held are the servers that answered 429 in this run, with the time
	// their Retry-After ends (the zero time: the rest of the run).
	held map[string]time.Time
	// servers is what became of each server of the effective policy
	// (stats.mcp.servers): the disabled and unreadable ones first, then
	// the others in the policy's order.
	servers []review.ServerOutcome
}

// hold keeps the server that answered 429 from the run's later calls: for
// its Retry-After, or for the rest of the run when it gave none.
func (r *mcpRun) hold(serverID string, err error) {
	var until time.Time
	var rl *ports.RateLimited
	if errors.As(err, &rl) && rl.RetryAfter > 0 {
		until = r.deps.Clock.Now().Add(rl.RetryAfter)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[string]time.Time{}
	}
	r.held[serverID] = until
}

// isHeld reports a server whose wait has not passed.
func (r *mcpRun) isHeld(serverID string) bool {
	r.mu.Lock()
	until, ok := r.held[serverID]
	r.mu.Unlock()
	return ok && (until.IsZero() || r.deps.Clock.Now().Before(until))
}

// takeCall counts the call against the server's calls-per-minute limit
// (the lower of the admin's and the instance's cap), shared by every
// review and replica through the store; a server without a limit costs
// no query. It reports whether the call may be sent. A store that cannot
// count it does not let it through (fail closed): the call is then
// rate_limited like one over the limit, not unavailable, which would
// count it as sent to the server.
func (r *mcpRun) takeCall(ctx context.Context, srv *server.Server) bool {
	limit, ok := r.deps.CallCap.Effective(srv.MaxCallsPerMinute())
	if !ok {
		return true
	}
	var taken bool
	err := r.deps.Tenants.InTenant(ctx, r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		taken, err = tx.Servers().TakeCall(ctx, srv.ID(), limit, limits.CallLimitWindow)
		return err
	})
	if err != nil {
		r.deps.warn("mcp call not sent: its calls-per-minute limit could not be counted",
			map[string]string{"server_id": srv.ID(), "review_id": r.reviewID, "error": err.Error()})
		return false
	}
	return taken
}

// outcome notes what became of one server of the run.
func (r *mcpRun) outcome(s *server.Server, reason review.ServerReason) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.servers = append(r.servers, review.ServerOutcome{ID: s.ID(), Name: s.Name().String(), Offered: reason == "", Reason: reason})
}

// close closes every session, concurrently; safe to call more than once.
func (r *mcpRun) close() {
	r.mu.Lock()
	sessions := r.sessions
	r.sessions = nil
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() {
			_ = s.Close()
		})
	}
	wg.Wait()
}

// usage reads the run's call records, over all its attempts.
func (r *mcpRun) usage(ctx context.Context) (ports.ReviewUsage, error) {
	var u ports.ReviewUsage
	err := r.deps.Tenants.InTenant(ctx, r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		u, err = tx.Calls().ReviewUsage(ctx, r.reviewID)
		return err
	})
	return u, err
}

// stats are the run's MCP statistics, read from its call records: calls
// that reached a server, bytes the budget kept, calls blocked.
func (r *mcpRun) stats(ctx context.Context, promptUsed bool) review.McpStats {
	var st review.McpStats
	if promptUsed {
		v := McpPromptVersion
		st.Prompt = &v
	}
	if r.gated {
		return st
	}
	u, err := r.usage(context.WithoutCancel(ctx))
	if err != nil {
		r.deps.warn("mcp stats not read", map[string]string{"review_id": r.reviewID, "error": err.Error()})
		return st
	}
	st.Calls, st.Bytes, st.Blocked = u.Sent, u.Bytes, u.Blocked
	r.mu.Lock()
	st.Servers = append([]review.ServerOutcome(nil), r.servers...)
	r.mu.Unlock()
	return st
}

// mcpServer is a selected server with its decrypted credential, for this
// run only.
type mcpServer struct {
	srv    *server.Server
	target ports.MCPTarget
}

// loadServers reads the run's servers (of the tenant, enabled,
// acknowledged, inside the operator's allowlist) and opens their
// credentials. A server that cannot be read
// or whose credential cannot be opened is skipped, not the run.
func (r *mcpRun) loadServers(ctx context.Context, ids []string) []mcpServer {
	var out []mcpServer
	for _, id := range ids {
		var (
			s   *server.Server
			enc []byte
		)
		err := r.deps.Tenants.InTenant(ctx, r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
			var err error
			if s, err = tx.Servers().Get(ctx, id); err != nil {
				return err
			}
			enc, err = tx.Servers().Credential(ctx, id)
			return err
		})
		if errors.Is(err, ports.ErrNotFound) {
			continue
		}
		if err != nil {
			r.deps.warn("mcp server skipped: cannot be read", map[string]string{"server_id": id, "review_id": r.reviewID, "error": err.Error()})
			r.deps.Metrics.McpCall(review.CallUnavailable)
			continue
		}
		if !s.Enabled() || !s.Acknowledged() || !r.deps.Allowed.Allows(s.URL()) {
			r.outcome(s, review.ServerDisabled)
			continue
		}
		cred, err := app.OpenCredential(r.deps.Cipher, s.ID(), enc)
		if err != nil {
			r.warn("mcp server skipped: credential cannot be opened", s)
			r.deps.Metrics.McpCall(review.CallUnavailable)
			r.outcome(s, review.ServerUnreachable)
			continue
		}
		out = append(out, mcpServer{srv: s, target: app.Target(r.deps.Tenants, r.deps.Cipher, r.tenantID, s, cred, enc)})
	}
	return out
}

// listed is one server's session and live tools, or why it is skipped.
type listed struct {
	sess  ports.MCPSession
	tools []ports.ListedTool
	err   error
}

// openTools connects to every server at once, under one deadline, lists
// its tools again and offers the allowlisted ones whose live definition
// still matches the pinned hash. A server that cannot be reached, times
// out or errs is skipped. A tool whose definition changed is dropped for
// this run, recorded as blocked, and its server's lastError becomes
// tool_changed.
func (r *mcpRun) openTools(ctx context.Context, servers []mcpServer) []ExternalTool {
	timeout := r.deps.McpSetupTimeout
	if timeout <= 0 {
		timeout = mcpSetupTimeout
	}
	setup, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	results := make([]listed, len(servers))
	var wg sync.WaitGroup
	for i, ms := range servers {
		wg.Go(func() {
			sess, err := r.deps.Connector.Open(setup, ms.target, limits.ReviewResponseCap)
			if err != nil {
				results[i].err = err
				return
			}
			r.mu.Lock()
			r.sessions = append(r.sessions, sess)
			r.mu.Unlock()
			results[i].sess = sess
			results[i].tools, results[i].err = sess.ListTools(setup)
		})
	}
	wg.Wait()

	var tools []ExternalTool
	names := map[string]bool{}
	for i, ms := range servers {
		res := results[i]
		if res.err != nil {
			r.warn("mcp server skipped: "+connectorCode(res.err), ms.srv)
			r.deps.Metrics.McpCall(review.CallUnavailable)
			r.unauthorized(ctx, ms.srv.ID(), res.err)
			reason := review.ServerUnreachable
			if errors.Is(res.err, ports.ErrServerUnauthorized) {
				reason = review.ServerUnauthorized
			}
			r.outcome(ms.srv, reason)
			continue
		}
		offered := 0
		live := make(map[string]ports.ListedTool, len(res.tools))
		for _, lt := range res.tools {
			live[lt.Name] = lt
		}
		var changed []ports.ListedTool
		for _, snap := range ms.srv.Tools() {
			lt, ok := live[snap.Name()]
			if !ok {
				continue // gone from the server: not offered
			}
			// A tool once changed stays blocked until the admin approves
			// it again, even when the server changes it back.
			if lt.Err != nil || !snap.Matches(lt.Definition) || ms.srv.ToolStatus(snap.Name()).State == server.ToolChanged {
				changed = append(changed, lt)
				r.record(ctx, ports.ToolCall{ServerID: ms.srv.ID(), Tool: snap.Name(), Status: review.CallBlocked})
				continue
			}
			name, err := tool.ModelToolName(ms.srv.Name().String(), snap.Name())
			if err != nil || names[name] {
				continue // a rename made it too long, or two servers collide
			}
			names[name] = true
			offered++
			tools = append(tools, &mcpTool{run: r, srv: ms.srv, snap: snap, session: res.sess, modelName: name})
		}
		if len(changed) > 0 {
			r.markChanged(ctx, ms.srv.ID(), changed)
		}
		if offered == 0 {
			r.outcome(ms.srv, review.ServerNoPinnedTools)
		} else {
			r.outcome(ms.srv, "")
		}
	}
	sort.Slice(tools, func(i, j int) bool { return tools[i].Spec().Name < tools[j].Spec().Name })
	return tools
}

// markServer records lastError on a server (tool_changed, or
// server_unauthorized when it refused the credential). A failure to store
// is logged: it must not fail the review.
func (r *mcpRun) markServer(ctx context.Context, serverID, lastError string) {
	err := r.deps.Tenants.InTenant(context.WithoutCancel(ctx), r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		_, err := tx.Servers().Update(ctx, serverID, func(s *server.Server) (ports.CredentialUpdate, error) {
			s.RecordError(lastError)
			return ports.CredentialUpdate{}, nil
		})
		return err
	})
	if err != nil {
		r.deps.warn("mcp server: cannot record "+lastError, map[string]string{"server_id": serverID, "error": err.Error()})
	}
}

// unauthorized records server_unauthorized as the server's lastError
// when err says the server refused the credential (401 or 403), so the
// admin sees a credential to fix rather than a flaky server.
func (r *mcpRun) unauthorized(ctx context.Context, serverID string, err error) {
	if errors.Is(err, ports.ErrServerUnauthorized) {
		r.markServer(ctx, serverID, ports.ErrServerUnauthorized.Error())
	}
}

// record stores one call record (counts only) and counts the outcome.
// A failure to store is logged: it must not fail the review.
func (r *mcpRun) record(ctx context.Context, c ports.ToolCall) {
	c.ReviewID = r.reviewID
	c.CreatedAt = r.deps.Clock.Now()
	r.deps.Metrics.McpCall(c.Status)
	err := r.deps.Tenants.InTenant(context.WithoutCancel(ctx), r.tenantID, func(ctx context.Context, tx ports.TenantTx) error {
		return tx.Calls().Record(ctx, c)
	})
	if err != nil {
		r.deps.warn("mcp call record not stored", map[string]string{"server_id": c.ServerID, "error": err.Error()})
	}
}

func (r *mcpRun) warn(msg string, srv *server.Server) {
	r.deps.warn(msg, map[string]string{"server_id": srv.ID(), "server": srv.Name().String(), "review_id": r.reviewID})
}

// connectorCode is the fixed code of a transport failure.
func connectorCode(err error) string {
	_, lastError := app.RemoteFailure(err)
	return lastError
}

// mcpTool is one allowlisted tool offered to the finder for one run.
type mcpTool struct {
	run       *mcpRun
	srv       *server.Server
	snap      tool.Snapshot
	session   ports.MCPSession
	modelName string
}

// Spec is the tool as the model sees it: the model-facing name, the
// admin's description with the fixed prefix, and the stored schema
// without property descriptions.
func (t *mcpTool) Spec() ports.ToolSpec {
	return ports.ToolSpec{
		Name:        t.modelName,
		Description: tool.ModelDescription(t.srv.Name().String(), t.snap.Description()),
		Parameters:  t.snap.Schema().ModelSchema(),
	}
}

func (t *mcpTool) source() string { return "mcp:" + t.srv.Name().String() + "/" + t.snap.Name() }

// refusal is the model's answer to a call that was not made or not kept.
func refusal(status string) string { return fmt.Sprintf(`{"error": %q}`, status) }

// Call runs the guarded call pipeline (threat analysis, Execution), in
// this order: run budget (waiting, under ctx, while calls in flight hold
// the bytes) → strict arguments → no invisible, format or bidi character
// in them → the egress check (admit: the scanner over the arguments and
// their decoded views, then the run's taint) → the server's wait after a
// 429, then its calls-per-minute limit, counted in the store across
// reviews (rate_limited, nothing sent) → tools/call → text and
// structuredContent only, a structured copy of the text dropped
// (resultText) → 64 KiB → read once (readResult): invisible characters
// removed, escaped ones too, and counted, and the JSON escapes decoded →
// secret scan of the result and of its decoded view → redaction →
// 8,000 characters → untrusted wrapper → what the text assigns to
// secret-named keys joins the run's taint. Every call is recorded with
// counts only. A panic inside is an error answer, never the worker's end.
func (t *mcpTool) Call(ctx context.Context, args json.RawMessage) (answer string) {
	r := t.run
	start := r.deps.Clock.Now()
	ctx, span := startCall(ctx, t.snap.Name())
	checked, invalid := t.snap.Schema().Check(args)
	rec := ports.ToolCall{ServerID: t.srv.ID(), Tool: t.snap.Name(), RequestBytes: checked.Len(), ArgumentsHash: checked.Hash()}
	finish := func(status review.CallStatus, answer string) string {
		endCall(span, status)
		rec.Status = status
		rec.Duration = r.deps.Clock.Now().Sub(start)
		r.record(ctx, rec)
		return answer
	}
	defer func() {
		if v := recover(); v != nil {
			r.deps.warn("mcp call panicked", map[string]string{"server_id": t.srv.ID(), "tool": t.snap.Name(), "panic_type": fmt.Sprintf("%T", v)})
			answer = finish(review.CallError, refusal(string(review.CallError)))
		}
	}()

	// Waits while calls in flight hold the bytes (under the finder's
	// deadline); a call that gets no reservation, also because the run
	// ended while it waited, is budget_exhausted: nothing was claimed or
	// sent, and the run's usage counts it neither as reserved nor as sent.
	res, err := r.budget.Reserve(ctx)
	if err != nil {
		return finish(review.CallBudgetExhausted, refusal(string(review.CallBudgetExhausted)))
	}
	defer res.Release() // no-op after Commit

	if invalid != nil {
		return finish(review.CallInvalidArguments, refusal(string(review.CallInvalidArguments)+": "+argumentReason(invalid)))
	}
	if hiddenCharacters(checked.Strings()) {
		return finish(review.CallInvalidArguments, refusal(string(review.CallInvalidArguments)+": the arguments hold invisible, format or direction characters"))
	}
	if !r.admit(checked) {
		return finish(review.CallBlocked, refusal(string(review.CallBlocked)+": the arguments look like a secret or personal data; nothing was sent"))
	}

	if r.isHeld(t.srv.ID()) {
		return finish(review.CallRateLimited, refusal(string(review.CallRateLimited)+": the server asked to wait; nothing was sent"))
	}
	if !r.takeCall(ctx, t.srv) {
		return finish(review.CallRateLimited, refusal(string(review.CallRateLimited)+": the server's calls-per-minute limit is reached; nothing was sent"))
	}
	out, err := t.session.CallTool(ctx, t.snap.Name(), checked)
	switch {
	case errors.Is(err, ports.ErrRateLimited):
		r.hold(t.srv.ID(), err)
		return finish(review.CallRateLimited, refusal(string(review.CallRateLimited)))
	case errors.Is(err, ports.ErrResponseTooLarge):
		// The server made the run read a whole reservation's worth.
		rec.ResponseBytes = limits.ReviewResponseCap
		_ = res.Commit(rec.ResponseBytes)
		return finish(review.CallTooLarge, refusal(string(review.CallTooLarge)))
	case errors.Is(err, ports.ErrProtocol):
		return finish(review.CallError, refusal(string(review.CallError)))
	case err != nil:
		r.unauthorized(ctx, t.srv.ID(), err)
		return finish(review.CallUnavailable, refusal(string(review.CallUnavailable)))
	}
	raw := resultText(out)
	rec.ResponseBytes = len(raw)
	if len(raw) > limits.ToolResultCap {
		_ = res.Commit(len(raw)) // keeps the whole reservation
		return finish(review.CallTooLarge, refusal(string(review.CallTooLarge)))
	}
	read := readResult(raw)
	rec.RemovedCharacters = read.removed
	findings := r.deps.Scanner.Scan(read.text)
	if hasSecret(findings) || read.escaped() && hasSecret(r.deps.Scanner.Scan(read.view)) {
		return finish(review.CallBlocked, refusal(string(review.CallBlocked)+": the result contained a secret and was dropped"))
	}
	text := capChars(r.deps.Scanner.Redact(read.text, findings), limits.ResultPromptChars)
	var wrapped string
	if out.IsError {
		wrapped, err = r.wrapper.WrapError(t.source(), text)
	} else {
		wrapped, err = r.wrapper.Wrap(t.source(), text)
	}
	if err != nil {
		return finish(review.CallError, refusal(string(review.CallError)))
	}
	// The scan found no secret here (else the result was dropped): what
	// the model reads can still assign one the scanner does not know (a
	// value assigned in JSON escapes too: the taint matches its fragments,
	// TestResultsJoinTheTaintDecoded).
	r.taint.Add(egress.Collect(text, nil)...)
	_ = res.Commit(rec.ResponseBytes)
	if out.IsError {
		return finish(review.CallError, wrapped)
	}
	return finish(review.CallOK, wrapped)
}

// hiddenCharacters reports an argument holding a character a reader
// cannot see or that reorders what they see: no search term needs one.
func hiddenCharacters(values []string) bool {
	for _, v := range values {
		if strings.IndexFunc(v, tool.Invisible) >= 0 {
			return true
		}
	}
	return false
}

// admit reports whether a call may be sent (MC5): the scanner finds
// nothing in the arguments as sent, and the run's taint admits them: the
// scanner finds nothing in any of their decoded views either, and no view
// holds enough of a value the run has seen, alone or with the run's
// earlier arguments (egress.Taint.Check).
func (r *mcpRun) admit(args tool.Arguments) bool {
	if len(r.deps.Scanner.Scan(string(args.Canonical()))) > 0 {
		return false
	}
	return r.taint.Check(args.Strings(), func(view string) bool { return len(r.deps.Scanner.Scan(view)) == 0 })
}

// see adds the secret-like values of a text the model can read to the
// run's taint. Personal data is not kept: the scanner blocks it in
// arguments, however it is encoded.
func (r *mcpRun) see(text string) {
	var spans []egress.Span
	for _, f := range r.deps.Scanner.Scan(text) {
		if !personalDataRules[f.Rule] {
			spans = append(spans, egress.Span{Start: f.Start, End: f.End})
		}
	}
	r.taint.Add(egress.Collect(text, spans)...)
}

// seeRequest adds the review's request to the taint: what the model reads
// before its first call.
func (r *mcpRun) seeRequest(req review.Request) {
	r.see(req.Title)
	r.see(req.Description)
	r.see(req.Diff)
	for path, content := range req.Files {
		r.see(path)
		r.see(content)
	}
}

// hasSecret reports a finding that is a secret (not only personal data).
func hasSecret(findings []ports.SecretFinding) bool {
	for _, f := range findings {
		if !personalDataRules[f.Rule] {
			return true
		}
	}
	return false
}

// argumentReason is the validation reason without any argument value.
func argumentReason(err error) string {
	var ae *tool.ArgumentError
	if errors.As(err, &ae) {
		return ae.Field + " " + ae.Reason
	}
	return "arguments do not match the schema"
}

// compile-time check
var _ ExternalTool = (*mcpTool)(nil)

// warn logs through the deps' Warn hook, if any.
func (d ReviewDeps) warn(msg string, fields map[string]string) {
	if d.Warn != nil {
		d.Warn(msg, fields)
	}
}
