package repositories

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// DefaultsHandler reads and writes the tenant's default MCP section
// (tenant:manage). Safe for concurrent use.
type DefaultsHandler struct {
	tenants ports.Tenants
	gates   app.Gates
	clock   ports.Clock
}

// NewDefaultsHandler returns a [DefaultsHandler].
func NewDefaultsHandler(tenants ports.Tenants, gates app.Gates, clock ports.Clock) *DefaultsHandler {
	return &DefaultsHandler{tenants: tenants, gates: gates, clock: clock}
}

// Get returns the tenant default; when none is stored, mode off, no
// servers and the default number of calls.
func (h *DefaultsHandler) Get(ctx context.Context, p ports.Principal) (policy.McpSection, error) {
	var s policy.McpSection
	err := h.tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
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

// Put stores the tenant default and records policy.defaults. Every PUT is
// an MCP change, so the gates come first. mode is on or off (inherit has
// nothing to inherit from); at most 5 servers, each the tenant's own
// (unknown_server otherwise); maxCalls 1–20, default 5.
func (h *DefaultsHandler) Put(ctx context.Context, p ports.Principal, in McpInput) (policy.McpSection, error) {
	if err := h.gates.Check(); err != nil {
		return policy.McpSection{}, err
	}
	section, err := parseSection(in, false)
	if err != nil {
		return policy.McpSection{}, err
	}
	err = h.tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if err := checkServers(ctx, tx, in.Servers, section); err != nil {
			return err
		}
		if err := tx.Policies().PutDefault(ctx, section); err != nil {
			return fmt.Errorf("store tenant default: %w", err)
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionPolicyDefaults, Actor: app.Actor(p), Target: "tenant:" + p.TenantID, At: h.clock.Now(),
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
