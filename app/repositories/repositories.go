package repositories

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/field"
	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// MaxRepositoryNameLen is the longest repository name ("acme/api"), in characters.
const MaxRepositoryNameLen = repository.MaxNameLen

// Audit actions of repositories and policies (GET /v1/audit).
const (
	ActionPolicyUpdate     = "policy.update"
	ActionPolicyDefaults   = "policy.defaults"
	ActionRepositoryCreate = "repository.create"
	ActionRepositoryUpdate = "repository.update"
)

// CreateRepository is the command of POST /v1/repositories. The HTTP
// adapter checks the shape with validator tags; the rules themselves are
// checked here, so every caller gets them.
type CreateRepository struct {
	Name       string
	Visibility string
}

// UpdateRepository is the command of PATCH /v1/repositories/{id}.
type UpdateRepository struct {
	ID         string
	Visibility string
}

// Deps are the ports the module's use cases share: the tenant store, the
// clock, the source of new ids and the gates.
type Deps struct {
	Tenants ports.Tenants
	Clock   ports.Clock
	NewID   ports.NewID
	Gates   app.Gates
}

// CreateRepositoryHandler creates a repository (tenant:manage). Safe for
// concurrent use.
type CreateRepositoryHandler struct{ d Deps }

// NewCreateRepositoryHandler returns a [CreateRepositoryHandler].
func NewCreateRepositoryHandler(d Deps) *CreateRepositoryHandler {
	return &CreateRepositoryHandler{d: d}
}

// GetRepository is the query of GET /v1/repositories/{id}.
type GetRepository struct{ ID string }

// GetRepositoryHandler reads a repository. Safe for concurrent use.
type GetRepositoryHandler struct{ d Deps }

// NewGetRepositoryHandler returns a [GetRepositoryHandler].
func NewGetRepositoryHandler(d Deps) *GetRepositoryHandler { return &GetRepositoryHandler{d: d} }

// UpdateRepositoryHandler changes a repository's visibility
// (tenant:manage). Safe for concurrent use.
type UpdateRepositoryHandler struct{ d Deps }

// NewUpdateRepositoryHandler returns an [UpdateRepositoryHandler].
func NewUpdateRepositoryHandler(d Deps) *UpdateRepositoryHandler {
	return &UpdateRepositoryHandler{d: d}
}

// Handle stores a new repository and its audit event repository.create.
// Errors: validation_failed (fields name, visibility), name_taken for a
// name the tenant already uses.
func (h *CreateRepositoryHandler) Handle(ctx context.Context, p ports.Principal, cmd CreateRepository) (*repository.Repository, error) {
	fields := map[string]string{}
	v, err := policy.ParseVisibility(cmd.Visibility)
	if err != nil {
		fields["visibility"] = fieldReason(err)
	}
	// The stored name is the normalised one (NFC), see repository.ParseName.
	r, err := repository.New(h.d.NewID(), cmd.Name, v)
	if err != nil {
		for _, e := range app.Flatten(err) {
			var fe *field.Error
			switch {
			case errors.As(e, &fe) && fe.Field == "name":
				fields["name"] = fe.Reason
			case errors.As(e, &fe) && fe.Field == "visibility":
				// ParseVisibility said it already.
			default:
				// A malformed new id is this service's fault, not the caller's.
				return nil, fmt.Errorf("new repository: %w", e)
			}
		}
	}
	if len(fields) > 0 {
		return nil, app.Invalid(fields)
	}
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		if err := tx.Repositories().Insert(ctx, r); err != nil {
			if errors.Is(err, ports.ErrConflict) {
				return &app.Error{Code: app.CodeNameTaken, Message: "the repository name is already used in the tenant", Cause: err}
			}
			return fmt.Errorf("insert repository: %w", err)
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionRepositoryCreate, Actor: app.Actor(p), Target: r.ID(), At: h.d.Clock.Now(),
			Details: map[string]any{"name": r.Name(), "visibility": r.Visibility().String()},
		})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Handle returns a repository of the tenant; not_found for an unknown id,
// another tenant's id or a malformed id.
func (h *GetRepositoryHandler) Handle(ctx context.Context, p ports.Principal, q GetRepository) (*repository.Repository, error) {
	id, ok := id.Parse(q.ID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "repository not found")
	}
	var r *repository.Repository
	err := h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		var err error
		r, err = tx.Repositories().Get(ctx, id)
		return app.NotFound(err, "repository")
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Handle changes a repository's visibility and records repository.update.
// A repository that turns public keeps its stored policy, but the gate
// stops MCP context for it at its next review.
func (h *UpdateRepositoryHandler) Handle(ctx context.Context, p ports.Principal, cmd UpdateRepository) (*repository.Repository, error) {
	id, ok := id.Parse(cmd.ID)
	if !ok {
		return nil, app.Fail(app.CodeNotFound, "repository not found")
	}
	v, err := policy.ParseVisibility(cmd.Visibility)
	if err != nil {
		return nil, app.Invalid(map[string]string{"visibility": fieldReason(err)})
	}
	var r *repository.Repository
	err = h.d.Tenants.InTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		// Read locked: the previous visibility the audit event records is
		// the one this change replaced, even under concurrent changes.
		var before policy.Visibility
		var err error
		r, err = tx.Repositories().Update(ctx, id, func(repo *repository.Repository) error {
			before = repo.Visibility()
			return repo.ChangeVisibility(v)
		})
		if err != nil {
			return app.NotFound(err, "repository")
		}
		return tx.Audit().Append(ctx, ports.AuditEvent{
			Action: ActionRepositoryUpdate, Actor: app.Actor(p), Target: r.ID(), At: h.d.Clock.Now(),
			Details: map[string]any{"visibility": r.Visibility().String(), "previousVisibility": before.String()},
		})
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// fieldReason is the user-safe reason of a domain field error.
func fieldReason(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return "is invalid"
}
