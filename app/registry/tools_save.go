package registry

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/poison"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// ToolChoice is one tool the admin allowlists: its name on the server,
// the description the model will see, the confirmation a write-capable
// tool needs, and the confirmation a tool with poisoning findings (MC4)
// needs. Nothing else comes from the client.
type ToolChoice struct {
	Name            string
	Description     string
	ConfirmWrite    bool
	ConfirmFindings bool
}

// SaveTools replaces a server's allowlist (PUT /v1/mcp/servers/{id}/tools).
type SaveTools struct {
	ID    string
	Tools []ToolChoice
}

// SaveToolsHandler saves allowlists.
type SaveToolsHandler struct{ d DiscoveryDeps }

// NewSaveToolsHandler returns the handler.
func NewSaveToolsHandler(d DiscoveryDeps) *SaveToolsHandler { return &SaveToolsHandler{d: d} }

// Handle checks the gates, discovers the server again, live, inside the
// request (not throttled), and builds every snapshot from that live
// result: schemas, annotations and hashes never come from the client.
// Each choice must name a live tool (unknown_tool) that is supported
// (unsupported_schema) and, when write-capable, be confirmed
// (write_not_confirmed) and, when it has findings, confirmed too
// (validation_failed on tools[i].confirmFindings); at most
// limits.MaxToolsPerServer (too_many_tools). The confirmed findings'
// codes are audited per tool.
// The new allowlist is stored only if the server's URL is still the one
// that was discovered; otherwise nothing is stored and the answer is
// unknown_tool.
//
// A save never approves a changed definition: a chosen tool that is
// changed (as stored, or because this live listing differs from its pin)
// keeps its stored snapshot and stays changed, blocked, until
// [ApproveToolHandler] approves it on its own. The listing is recorded
// like a discovery's (states, listed names, lastError).
func (h *SaveToolsHandler) Handle(ctx context.Context, p ports.Principal, cmd SaveTools) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	if err := checkChoices(cmd.Tools); err != nil {
		return nil, err
	}
	s, target, err := h.d.target(ctx, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	defs, err := h.d.listLive(ctx, p, id, target, map[string]any{"tools": 0, "save": true})
	if err != nil {
		return nil, err
	}
	sc, err := h.d.scope(ctx, p.TenantID, id, defs)
	if err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	live := make(map[string]ports.ListedTool, len(defs))
	for _, lt := range defs {
		live[lt.Name] = lt
	}
	kept := keptTools(s, live)
	fresh, confirmed, err := h.d.pinChoices(s, live, kept, sc, cmd.Tools, now)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(cmd.Tools))
	for i, c := range cmd.Tools {
		names[i] = c.Name
	}
	var (
		saved     *server.Server
		keptNames []string
	)
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		saved, err = tx.Servers().Update(ctx, id, func(cur *server.Server) (ports.CredentialUpdate, error) {
			if cur.URL().String() != s.URL().String() {
				// The contract has no conflict code: the tools were chosen
				// from a server the URL no longer names, and no discovery
				// of the current URL offered them, so they are unknown.
				return ports.CredentialUpdate{}, app.Fail(app.CodeUnknownTool, "the server's URL changed during the save: discover the server again and choose its tools")
			}
			cur.ObserveTools(liveTools(defs))
			var snaps []tool.Snapshot
			snaps, keptNames, err = allowlistOf(cur, names, kept, fresh)
			if err != nil {
				return ports.CredentialUpdate{}, err
			}
			if err := cur.ReplaceTools(snaps, now); err != nil {
				return ports.CredentialUpdate{}, err
			}
			cur.RecordError("")
			settleLastError(cur)
			return ports.CredentialUpdate{}, nil
		})
		if err != nil {
			return err
		}
		details := map[string]any{"tools": names}
		if len(keptNames) > 0 {
			details["keptChanged"] = keptNames
		}
		if len(confirmed) > 0 {
			details["confirmedFindings"] = confirmed
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionServerTools, Actor: app.Actor(p), Target: id, At: now, Details: details,
		})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return saved, nil
}

// keptTools are the allowlisted tools of s a save keeps as stored: the
// ones stored as changed, and the ones whose live definition differs
// from their pin. A save never approves a changed definition (that is
// ApproveTool's, one tool at a time), and does not check it against the
// live definition either.
func keptTools(s *server.Server, live map[string]ports.ListedTool) map[string]bool {
	kept := map[string]bool{}
	for _, snap := range s.Tools() {
		lt, listed := live[snap.Name()]
		if s.ToolStatus(snap.Name()).State == server.ToolChanged || listed && (lt.Err != nil || !snap.Matches(lt.Definition)) {
			kept[snap.Name()] = true
		}
	}
	return kept
}

// pinChoices pins every choice that is not kept from the live listing
// (pin's rules; unknown_tool when the server does not list it) and
// returns the snapshots and, per tool with findings, their codes. Every
// chosen tool with findings but without confirmFindings is named in one
// validation_failed.
func (d DiscoveryDeps) pinChoices(s *server.Server, live map[string]ports.ListedTool, kept map[string]bool, sc Scope, choices []ToolChoice, now time.Time) (map[string]tool.Snapshot, map[string]any, error) {
	fresh := map[string]tool.Snapshot{}
	confirmed := map[string]any{}
	unconfirmed := map[string]string{}
	for i, c := range choices {
		if kept[c.Name] {
			continue
		}
		lt, ok := live[c.Name]
		if !ok {
			return nil, nil, app.Fail(app.CodeUnknownTool, fmt.Sprintf("the server does not offer a tool named %q", c.Name))
		}
		a := d.assess(s, lt, sc)
		snap, err := pin(s.Name().String(), a, lt, c, "", now)
		if err != nil {
			return nil, nil, err
		}
		if len(a.Findings) > 0 {
			if !c.ConfirmFindings {
				unconfirmed[fmt.Sprintf("tools[%d].confirmFindings", i)] = findingsReason(a.Findings)
			}
			confirmed[c.Name] = findingCodes(a.Findings)
		}
		fresh[c.Name] = snap
	}
	if len(unconfirmed) > 0 {
		return nil, nil, app.Invalid(unconfirmed)
	}
	return fresh, confirmed, nil
}

// allowlistOf is the new allowlist of cur, the server as stored when the
// save commits: each name's fresh snapshot, or the stored one of a kept
// tool (still changed, or approved meanwhile), and the names kept as
// changed. A kept tool removed meanwhile fails the save: its live
// definition was never checked.
func allowlistOf(cur *server.Server, names []string, kept map[string]bool, fresh map[string]tool.Snapshot) ([]tool.Snapshot, []string, error) {
	stored := map[string]tool.Snapshot{}
	for _, t := range cur.Tools() {
		stored[t.Name()] = t
	}
	snaps := make([]tool.Snapshot, 0, len(names))
	var keptNames []string
	for _, name := range names {
		old, has := stored[name]
		changed := cur.ToolStatus(name).State == server.ToolChanged
		switch {
		case has && (kept[name] || changed):
			snaps = append(snaps, old)
			if changed {
				keptNames = append(keptNames, name)
			}
		case kept[name]:
			return nil, nil, app.Fail(app.CodeUnknownTool, "the allowlist changed during the save: discover the server again and choose its tools")
		default:
			snaps = append(snaps, fresh[name])
		}
	}
	return snaps, keptNames, nil
}

// checkChoices applies the request's own rules before any network access.
func checkChoices(choices []ToolChoice) error {
	if len(choices) > limits.MaxToolsPerServer {
		return app.Fail(app.CodeTooManyTools, fmt.Sprintf("at most %d tools per server", limits.MaxToolsPerServer))
	}
	fields := map[string]string{}
	seen := map[string]bool{}
	for i, c := range choices {
		switch {
		case c.Name == "":
			fields[fmt.Sprintf("tools[%d].name", i)] = "is required"
		case seen[c.Name]:
			fields[fmt.Sprintf("tools[%d].name", i)] = "is listed twice"
		}
		seen[c.Name] = true
		if utf8.RuneCountInString(tool.SanitizeDescription(c.Description)) == 0 {
			fields[fmt.Sprintf("tools[%d].description", i)] = "is required"
		} else if utf8.RuneCountInString(c.Description) > limits.MaxToolDescriptionLen {
			fields[fmt.Sprintf("tools[%d].description", i)] = fmt.Sprintf("must be at most %d characters", limits.MaxToolDescriptionLen)
		}
	}
	if len(fields) > 0 {
		return app.Invalid(fields)
	}
	return nil
}

// ListCalls lists a server's recent tool calls (GET /v1/mcp/servers/{id}/calls).
type ListCalls struct {
	ID string
}

// ListCallsHandler lists call records.
type ListCallsHandler struct{ d DiscoveryDeps }

// NewListCallsHandler returns the handler.
func NewListCallsHandler(d DiscoveryDeps) *ListCallsHandler { return &ListCallsHandler{d: d} }

// Handle returns the last limits.RecentCalls records of the server, newest
// first; not_found for a server the tenant does not have.
func (h *ListCallsHandler) Handle(ctx context.Context, p ports.Principal, cmd ListCalls) ([]ports.ToolCall, error) {
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	var out []ports.ToolCall
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Servers().Get(ctx, id); err != nil {
			return err
		}
		var err error
		out, err = tx.Calls().Recent(ctx, id, limits.RecentCalls)
		return err
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return out, nil
}

// pin approves a listed tool, assessed as a, as the admin chose it, with
// the rules the allowlist save and the one-tool approval share:
// supported (unsupported_schema); the definition the admin reviewed, when
// wantHash names one (validation_failed on hash); confirmed when
// write-capable (write_not_confirmed). The confirmation of findings is
// the caller's: a save names every unconfirmed tool at once.
func pin(serverName string, a DiscoveredTool, lt ports.ListedTool, c ToolChoice, wantHash string, now time.Time) (tool.Snapshot, error) {
	if !a.Supported {
		return tool.Snapshot{}, app.Fail(app.CodeUnsupportedSchema, fmt.Sprintf("tool %q cannot be allowlisted: %s", c.Name, a.Reason))
	}
	if wantHash != "" && wantHash != a.Hash {
		return tool.Snapshot{}, app.Invalid(map[string]string{"hash": "the server changed the tool again since it was shown: review its definition again"})
	}
	if a.WriteCapable && !c.ConfirmWrite {
		return tool.Snapshot{}, app.Fail(app.CodeWriteNotConfirmed, fmt.Sprintf("tool %q may change data: it needs confirmWrite", c.Name))
	}
	snap, err := tool.NewSnapshot(serverName, lt.Definition, c.Description, now)
	if err != nil {
		return tool.Snapshot{}, app.Fail(app.CodeUnsupportedSchema, fmt.Sprintf("tool %q cannot be allowlisted", c.Name))
	}
	return snap, nil
}

// findingsReason is the reason of an unconfirmed tool with findings.
func findingsReason(fs []poison.Finding) string {
	return fmt.Sprintf("must be true: the definition has findings (%s); read them, then confirm", strings.Join(findingCodes(fs), ", "))
}

// findingCodes lists the codes of findings, in their order.
func findingCodes(fs []poison.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Code
	}
	return out
}
