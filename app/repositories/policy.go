package repositories

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/gate"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// McpInput is the "mcp" section as a client sends it. MaxCalls nil means
// the default ([limits.DefaultCallsPerRun]).
type McpInput struct {
	Mode     string
	Servers  []string
	MaxCalls *int
}

// PutPolicy is the command of PUT /v1/repositories/{id}/policy.
type PutPolicy struct {
	RepositoryID string
	Mcp          McpInput
}

// PolicyView is a repository's policy as GET and PUT answer it: the stored
// section (mode inherit when none is stored), the effective one after
// [policy.Merge] and the gate's answer for the repository.
type PolicyView struct {
	Stored    policy.McpSection
	Effective policy.Effective
	McpActive bool
}

// GetPolicy is the query of GET /v1/repositories/{id}/policy.
type GetPolicy struct{ RepositoryID string }

// GetPolicyHandler reads a repository's policy (repo:manage). Safe for
// concurrent use.
type GetPolicyHandler struct{ d Deps }

// NewGetPolicyHandler returns a [GetPolicyHandler].
func NewGetPolicyHandler(d Deps) *GetPolicyHandler { return &GetPolicyHandler{d: d} }

// PutPolicyHandler writes a repository's policy (repo:manage). Safe for
// concurrent use.
type PutPolicyHandler struct{ d Deps }

// NewPutPolicyHandler returns a [PutPolicyHandler].
func NewPutPolicyHandler(d Deps) *PutPolicyHandler { return &PutPolicyHandler{d: d} }

// Handle returns the repository's policy; not_found for an unknown, foreign
// or malformed id.
func (h *GetPolicyHandler) Handle(ctx context.Context, p ports.Principal, q GetPolicy) (PolicyView, error) {
	id, ok := id.Parse(q.RepositoryID)
	if !ok {
		return PolicyView{}, app.Fail(app.CodeNotFound, "repository not found")
	}
	var view PolicyView
	err := h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		repo, err := tx.Repositories().Get(ctx, id)
		if err != nil {
			return app.NotFound(err, "repository")
		}
		stored, ok, err := tx.Policies().Repository(ctx, id)
		if err != nil {
			return fmt.Errorf("read policy: %w", err)
		}
		if !ok {
			stored = app.InheritSection()
		}
		view, err = h.d.view(ctx, tx, repo, stored)
		return err
	})
	return view, err
}

// Handle stores the repository's MCP section and records policy.update. The
// checks run in this order: the gates (not_signed_off,
// instance_disabled: every PUT is an MCP change, mode off included), the
// fields (validation_failed on mcp.mode, mcp.servers, mcp.maxCalls), the
// repository (not_found), the servers (unknown_server for any id that is
// not a server of the tenant, malformed ids included), and mode on for a
// public repository (public_repository).
func (h *PutPolicyHandler) Handle(ctx context.Context, p ports.Principal, cmd PutPolicy) (PolicyView, error) {
	if err := h.d.Gates.Check(); err != nil {
		return PolicyView{}, err
	}
	id, ok := id.Parse(cmd.RepositoryID)
	if !ok {
		return PolicyView{}, app.Fail(app.CodeNotFound, "repository not found")
	}
	section, err := parseSection(cmd.Mcp, true)
	if err != nil {
		return PolicyView{}, err
	}
	var view PolicyView
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		repo, err := tx.Repositories().Get(ctx, id)
		if err != nil {
			return app.NotFound(err, "repository")
		}
		if err := checkServers(ctx, tx, cmd.Mcp.Servers, section); err != nil {
			return err
		}
		if section.Mode() == policy.ModeOn && !privateOrInternal(repo.Visibility()) {
			return app.Fail(app.CodePublicRepository, "MCP context cannot be turned on for a public repository")
		}
		if err := tx.Policies().PutRepository(ctx, id, section); err != nil {
			return app.NotFound(err, "repository")
		}
		if err := tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionPolicyUpdate, Actor: app.Actor(p), Target: id, At: h.d.Clock.Now(),
			Details: sectionDetails(section),
		}); err != nil {
			return err
		}
		view, err = h.d.view(ctx, tx, repo, section)
		return err
	})
	return view, err
}

// view merges stored with the tenant default and asks the gate.
func (d Deps) view(ctx context.Context, tx ports.TenantTx, repo *repository.Repository, stored policy.McpSection) (PolicyView, error) {
	def, err := tx.Policies().Default(ctx)
	if err != nil {
		return PolicyView{}, fmt.Errorf("read tenant default: %w", err)
	}
	eff := policy.Merge(def, stored)
	exists, err := tx.Policies().ServersExist(ctx, eff.Servers())
	if err != nil {
		return PolicyView{}, fmt.Errorf("check policy servers: %w", err)
	}
	eff = eff.Existing(exists)
	active := gate.EffectiveMcpContext(eff, repo.Visibility(), d.Gates.SignedOff, d.Gates.Instance.Allowed())
	return PolicyView{Stored: stored, Effective: eff, McpActive: active}, nil
}

// privateOrInternal is the visibility rule of the gate: anything else,
// the zero value included, counts as public.
func privateOrInternal(v policy.Visibility) bool {
	return v == policy.VisibilityPrivate || v == policy.VisibilityInternal
}

// parseSection validates in as an "mcp" section. Field errors are keyed
// "mcp.<field>". A server id that is not a UUID is not a field error but
// an unknown server, like any id that is not the tenant's: it is left out
// here and reported by [checkServers], after the repository is known.
// allowInherit is false for the tenant default, where inherit has nothing
// above it to inherit from.
func parseSection(in McpInput, allowInherit bool) (policy.McpSection, error) {
	fields := map[string]string{}
	servers := make([]string, 0, len(in.Servers))
	for _, s := range in.Servers {
		if id, ok := id.Parse(s); ok {
			servers = append(servers, id)
		}
	}
	if len(in.Servers) > limits.MaxPolicyServers {
		fields["mcp.servers"] = fmt.Sprintf("must list at most %d servers", limits.MaxPolicyServers)
		servers = nil
	}
	section, err := policy.NewMcpSection(in.Mode, servers, in.MaxCalls)
	if err != nil {
		for _, e := range app.Flatten(err) {
			var fe *field.Error
			if errors.As(e, &fe) {
				if _, seen := fields["mcp."+fe.Field]; !seen {
					fields["mcp."+fe.Field] = fe.Reason
				}
				continue
			}
			return policy.McpSection{}, fmt.Errorf("parse mcp section: %w", e)
		}
	}
	if !allowInherit && in.Mode == policy.ModeInherit.String() {
		fields["mcp.mode"] = "must be on or off"
	}
	if len(fields) > 0 {
		return policy.McpSection{}, app.Invalid(fields)
	}
	return section, nil
}

// checkServers answers unknown_server unless every id the client sent is
// a server of the transaction's tenant. Row-level security already hides
// other tenants' servers; asking the store is what makes a foreign id
// unknown rather than usable (MC9).
func checkServers(ctx context.Context, tx ports.TenantTx, sent []string, section policy.McpSection) error {
	ids := section.Servers()
	if len(ids) != len(sent) {
		return unknownServer()
	}
	if len(ids) == 0 {
		return nil
	}
	exist, err := tx.Policies().ServersExist(ctx, ids)
	if err != nil {
		return fmt.Errorf("check servers: %w", err)
	}
	for _, id := range ids {
		if !exist[id] {
			return unknownServer()
		}
	}
	return nil
}

func unknownServer() *app.Error {
	return app.Fail(app.CodeUnknownServer, "the policy lists a server that is not one of the tenant's servers")
}

// sectionDetails is what the audit keeps of a section: no ids, only counts.
func sectionDetails(s policy.McpSection) map[string]any {
	return map[string]any{"mode": s.Mode().String(), "servers": len(s.Servers()), "maxCalls": s.MaxCalls()}
}
