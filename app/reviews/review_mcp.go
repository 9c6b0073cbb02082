package reviews

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

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
	// servers is what became of each server of the effective policy
	// (stats.mcp.servers): the disabled and unreadable ones first, then
	// the others in the policy's order.
	servers []review.ServerOutcome
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
// acknowledged) and opens their credentials. A server that cannot be read
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
		if !s.Enabled() || !s.Acknowledged() {
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
// their decoded views, then the run's taint) → tools/call → text and
// structuredContent only, a structured copy of the text dropped
// (resultText) → 64 KiB → invisible characters removed, escaped ones too,
// and counted (removeInvisible) → secret scan of the result → redaction →
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

	out, err := t.session.CallTool(ctx, t.snap.Name(), checked)
	switch {
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
	text := resultText(out)
	rec.ResponseBytes = len(text)
	if len(text) > limits.ToolResultCap {
		_ = res.Commit(len(text)) // keeps the whole reservation
		return finish(review.CallTooLarge, refusal(string(review.CallTooLarge)))
	}
	text, rec.RemovedCharacters = removeInvisible(text)
	findings := r.deps.Scanner.Scan(text)
	if hasSecret(findings) || r.hidesSecret(text) {
		return finish(review.CallBlocked, refusal(string(review.CallBlocked)+": the result contained a secret and was dropped"))
	}
	text = capChars(r.deps.Scanner.Redact(text, findings), limits.ResultPromptChars)
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
	// the model reads can still assign one the scanner does not know.
	r.taint.Add(egress.Collect(text, nil)...)
	_ = res.Commit(rec.ResponseBytes)
	if out.IsError {
		return finish(review.CallError, wrapped)
	}
	return finish(review.CallOK, wrapped)
}

// hidesSecret reports whether text holds a secret only in JSON escapes
// ("\u0041KIA…", a "\/" or "\n" inside a token): JSON text items and
// structuredContent carry strings escaped, and the model reads them as
// decoded. The text as written is scanned apart; this scans its
// unescaped view, when there is one.
func (r *mcpRun) hidesSecret(text string) bool {
	view, changed := unescapeJSON(text)
	return changed && hasSecret(r.deps.Scanner.Scan(view))
}

// unescapeJSON replaces every JSON string escape in s (\" \\ \/ \b \f
// \n \r \t and \uXXXX, surrogate pairs joined, a lone surrogate as
// U+FFFD) by the character it stands for, wherever it stands: in a JSON
// document or in prose around one. Anything else is kept as written.
// changed is false when s holds no escape.
func unescapeJSON(s string) (view string, changed bool) {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s, false
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		if r, n := jsonEscape(s, i); n > 0 {
			b.WriteRune(r)
			i += n
			changed = true
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), changed
}

// jsonEscape reads the JSON string escape at s[i:]: the character it
// stands for (a surrogate pair joined, a lone surrogate as U+FFFD) and its
// length, 0 when s[i:] starts none.
func jsonEscape(s string, i int) (rune, int) {
	if i+1 >= len(s) || s[i] != '\\' {
		return 0, 0
	}
	if r, ok := simpleEscapes[s[i+1]]; ok {
		return rune(r), 2
	}
	r1, ok := hex4(s, i+2)
	if s[i+1] != 'u' || !ok {
		return 0, 0
	}
	if !utf16.IsSurrogate(r1) {
		return r1, 6
	}
	if r2, ok := hex4(s, i+8); ok && s[i+6] == '\\' && s[i+7] == 'u' {
		if dec := utf16.DecodeRune(r1, r2); dec != utf8.RuneError {
			return dec, 12
		}
	}
	return utf8.RuneError, 6
}

// removeInvisible is the result text the model reads (MC3): without the
// characters [tool.StripInvisible] removes, nor the JSON escapes of such
// characters (\u200b, \u202e, a tag character as \udb40\udc41, \r),
// which a model reads decoded; n counts what it removed, an escape as one.
// The text is built from the left, and whenever it ends with an escape of
// an invisible character that escape is taken off, so an escape completed
// by the removal of another ("\u20\u200b0b") goes too. A backslash starts
// an escape when an even number of backslashes precedes it.
func removeInvisible(s string) (string, int) {
	s, n := tool.StripInvisible(s)
	if !mayEscapeInvisible(s) {
		return s, n
	}
	out := make([]byte, 0, len(s))
	starts := make([]bool, 0, len(s)) // out[i] is a backslash that starts an escape
	for i := 0; i < len(s); i++ {
		c := s[i]
		out = append(out, c)
		starts = append(starts, c == '\\' && (len(starts) == 0 || !starts[len(starts)-1]))
		for _, w := range [...]int{12, 6, 2} {
			p := len(out) - w
			if p < 0 || !starts[p] {
				continue
			}
			if r, m := jsonEscape(string(out[p:]), 0); m == w && tool.Invisible(r) {
				out, starts = out[:p], starts[:p]
				n++
				break
			}
		}
	}
	return string(out), n
}

// mayEscapeInvisible reports a backslash before u, b, f or r: the only
// JSON escapes that can stand for an invisible character.
func mayEscapeInvisible(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		if strings.IndexByte("ubfr", s[i+1]) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+2:], '\\')
		if j < 0 {
			return false
		}
		i += 2 + j
	}
	return false
}

// simpleEscapes are JSON's one-letter escapes and what they stand for.
var simpleEscapes = map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:i+4], 16, 16)
	return rune(v), err == nil
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

// resultText keeps the text items and structuredContent (as JSON),
// structuredContent only when it does not merely repeat the text
// ([repeatsText], review_result.go); images, audio, resources and links
// were dropped by the adapter. It is all that the result scan, the caps,
// the byte budget and the model see.
func resultText(out ports.ToolResult) string {
	parts := append([]string{}, out.Texts...)
	if len(out.Structured) > 0 && !repeatsText(out.Texts, out.Structured) {
		parts = append(parts, string(out.Structured))
	}
	return strings.Join(parts, "\n\n")
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
