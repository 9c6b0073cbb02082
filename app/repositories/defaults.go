package repositories

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// GetDefaults is the query of GET /v1/mcp/defaults.
type GetDefaults struct{}

// GetDefaultsHandler reads the tenant's default MCP section
// (tenant:manage). Safe for concurrent use.
type GetDefaultsHandler struct{ d Deps }

// NewGetDefaultsHandler returns a [GetDefaultsHandler].
func NewGetDefaultsHandler(d Deps) *GetDefaultsHandler { return &GetDefaultsHandler{d: d} }

// PutDefaults is the command of PUT /v1/mcp/defaults.
type PutDefaults struct{ Mcp McpInput }

// PutDefaultsHandler writes the tenant's default MCP section
// (tenant:manage). Safe for concurrent use.
type PutDefaultsHandler struct{ d Deps }

// NewPutDefaultsHandler returns a [PutDefaultsHandler].
func NewPutDefaultsHandler(d Deps) *PutDefaultsHandler { return &PutDefaultsHandler{d: d} }

// Handle returns the tenant default; when none is stored, mode off, no
// servers and the default number of calls.
func (h *GetDefaultsHandler) Handle(ctx context.Context, p ports.Principal, _ GetDefaults) (policy.McpSection, error) {
	var s policy.McpSection
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		def, err := tx.Policies().Default(ctx)
		if err != nil {
			return fmt.Errorf("read tenant default: %w", err)
		}
		if def == nil {
			s = offSection()
			return nil
		}
		s = *def
		return nil
	})
	return s, err
}

// Handle stores the tenant default and records policy.defaults. Every PUT is
// an MCP change, so the gates come first. mode is on or off (inherit has
// nothing to inherit from); at most 5 servers, each the tenant's own
// (unknown_server otherwise); maxCalls 1–20, default 5.
func (h *PutDefaultsHandler) Handle(ctx context.Context, p ports.Principal, cmd PutDefaults) (policy.McpSection, error) {
	if err := h.d.Gates.Check(); err != nil {
		return policy.McpSection{}, err
	}
	section, err := parseSection(cmd.Mcp, false)
	if err != nil {
		return policy.McpSection{}, err
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if err := checkServers(ctx, tx, cmd.Mcp.Servers, section); err != nil {
			return err
		}
		if err := tx.Policies().PutDefault(ctx, section); err != nil {
			return fmt.Errorf("store tenant default: %w", err)
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionPolicyDefaults, Actor: app.Actor(p), Target: "tenant:" + p.TenantID, At: h.d.Clock.Now(),
			Details: sectionDetails(section),
		})
	})
	if err != nil {
		return policy.McpSection{}, err
	}
	return section, nil
}

// offSection is the tenant default when none is stored.
func offSection() policy.McpSection {
	s, err := policy.NewMcpSection(policy.ModeOff.String(), []string{}, nil)
	if err != nil {
		panic(err) // constant input
	}
	return s
}
