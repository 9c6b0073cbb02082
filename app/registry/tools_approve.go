package registry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// Audit actions of the per-tool approval and removal.
const (
	ActionToolApprove = "server.tool.approve"
	ActionToolRemove  = "server.tool.remove"
)

// ApproveTool re-pins one allowlisted tool from its live definition
// (POST /v1/mcp/servers/{id}/tools/{name}/approve).
type ApproveTool struct {
	ID   string
	Name string
	// Description is the admin's description the model will see.
	Description  string
	ConfirmWrite bool
	// ConfirmFindings confirms the poisoning findings (MC4) of the live
	// definition; a tool with findings needs it whenever it is approved.
	ConfirmFindings bool
	// Hash, when set, is the hash of the definition the admin reviewed:
	// the approval is refused when the live definition is another one
	// (the server changed the tool again since the page was shown).
	Hash string
}

// ApproveToolHandler approves tools one at a time.
type ApproveToolHandler struct{ d DiscoveryDeps }

// NewApproveToolHandler returns the handler.
func NewApproveToolHandler(d DiscoveryDeps) *ApproveToolHandler { return &ApproveToolHandler{d: d} }

// Handle checks the gates and the description, discovers the server
// live inside the request (not throttled), and re-pins the one tool from
// the live result with the same rules as the allowlist save: it must be
// in the allowlist and listed (unknown_tool), supported
// (unsupported_schema), and confirmed when write-capable
// (write_not_confirmed: a write-capable tool needs its confirmation again
// whenever it is approved). Every other snapshot, and its state, stays as
// stored. The server's lastError tool_changed is cleared when no tool is
// changed any more. Audited as server.tool.approve.
func (h *ApproveToolHandler) Handle(ctx context.Context, p ports.Principal, cmd ApproveTool) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	choice := ToolChoice{Name: cmd.Name, Description: cmd.Description, ConfirmWrite: cmd.ConfirmWrite, ConfirmFindings: cmd.ConfirmFindings}
	if err := checkChoices([]ToolChoice{choice}); err != nil {
		return nil, renameFields(err)
	}
	s, target, err := h.d.target(ctx, p.TenantID, id)
	if err != nil {
		return nil, err
	}
	if !allowlisted(s, cmd.Name) {
		return nil, notAllowlisted(cmd.Name)
	}
	defs, err := h.d.listLive(ctx, p, id, target, map[string]any{"tools": 0, "approve": cmd.Name})
	if err != nil {
		return nil, err
	}
	var lt *ports.ListedTool
	for i := range defs {
		if defs[i].Name == cmd.Name {
			lt = &defs[i]
		}
	}
	if lt == nil {
		return nil, app.Fail(app.CodeUnknownTool, fmt.Sprintf("the server no longer offers a tool named %q: remove it from the allowlist", cmd.Name))
	}
	sc, err := h.d.scope(ctx, p.TenantID, id, defs)
	if err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	a := h.d.assess(s, *lt, sc)
	snap, err := pin(s.Name().String(), a, *lt, choice, cmd.Hash, now)
	if err != nil {
		return nil, err
	}
	details := map[string]any{"tool": cmd.Name, "hash": snap.Hash(), "writeCapable": snap.WriteCapable()}
	if len(a.Findings) > 0 {
		if !cmd.ConfirmFindings {
			return nil, app.Invalid(map[string]string{"confirmFindings": findingsReason(a.Findings)})
		}
		details["confirmedFindings"] = findingCodes(a.Findings)
	}
	var saved *server.Server
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		saved, err = tx.Servers().Update(ctx, id, func(cur *server.Server) (ports.CredentialUpdate, error) {
			if cur.URL().String() != s.URL().String() {
				return ports.CredentialUpdate{}, app.Fail(app.CodeUnknownTool, "the server's URL changed during the approval: discover the server again")
			}
			if err := cur.ApproveTool(snap, now); err != nil {
				return ports.CredentialUpdate{}, toolError(err, cmd.Name)
			}
			settleLastError(cur)
			return ports.CredentialUpdate{}, nil
		})
		if err != nil {
			return err
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionToolApprove, Actor: app.Actor(p), Target: id, At: now,
			Details: details,
		})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return saved, nil
}

// RemoveTool takes one tool off a server's allowlist (the web
// interface's "Remove from the allowlist" of a changed or gone tool).
type RemoveTool struct {
	ID   string
	Name string
}

// RemoveToolHandler removes tools one at a time.
type RemoveToolHandler struct{ d DiscoveryDeps }

// NewRemoveToolHandler returns the handler.
func NewRemoveToolHandler(d DiscoveryDeps) *RemoveToolHandler { return &RemoveToolHandler{d: d} }

// Handle checks the gates and removes the tool (unknown_tool when it is
// not in the allowlist); every other tool stays as stored. No network
// access: removing a tool only ever narrows what a review may call.
// Audited as server.tool.remove.
func (h *RemoveToolHandler) Handle(ctx context.Context, p ports.Principal, cmd RemoveTool) (*server.Server, error) {
	if err := h.d.Gates.Check(); err != nil {
		return nil, err
	}
	id, err := srvParseID(cmd.ID)
	if err != nil {
		return nil, err
	}
	now := h.d.Clock.Now()
	var saved *server.Server
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		saved, err = tx.Servers().Update(ctx, id, func(cur *server.Server) (ports.CredentialUpdate, error) {
			if err := cur.RemoveTool(cmd.Name, now); err != nil {
				return ports.CredentialUpdate{}, toolError(err, cmd.Name)
			}
			settleLastError(cur)
			return ports.CredentialUpdate{}, nil
		})
		if err != nil {
			return err
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionToolRemove, Actor: app.Actor(p), Target: id, At: now, Details: map[string]any{"tool": cmd.Name},
		})
	})
	if err != nil {
		return nil, srvStoreError(err)
	}
	return saved, nil
}

func allowlisted(s *server.Server, name string) bool {
	for _, t := range s.Tools() {
		if t.Name() == name {
			return true
		}
	}
	return false
}

func notAllowlisted(name string) error {
	return app.Fail(app.CodeUnknownTool, fmt.Sprintf("no tool named %q is in the allowlist: select it and save instead", name))
}

func toolError(err error, name string) error {
	if errors.Is(err, server.ErrToolNotAllowlisted) {
		return notAllowlisted(name)
	}
	return err
}

// renameFields turns checkChoices' tools[0].x field names into the
// approval body's own (description, name).
func renameFields(err error) error {
	var e *app.Error
	if !errors.As(err, &e) || e.Code != app.CodeValidationFailed {
		return err
	}
	fields := map[string]string{}
	for k, v := range e.Fields {
		fields[strings.TrimPrefix(k, "tools[0].")] = v
	}
	return app.Invalid(fields)
}
