package repositories

import (
	"context"
	"fmt"
	"slices"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// RepositoriesUsingServer asks which repositories would use a server.
type RepositoriesUsingServer struct{ ServerID string }

// RepositoriesUsingServerHandler finds the repositories whose effective
// policy (their own section merged with the tenant default) is on and
// names a server: the ones that lose it when its allowlist is emptied.
// The web interface asks before such a save (tenant:manage). Safe for
// concurrent use.
type RepositoriesUsingServerHandler struct{ d Deps }

// NewRepositoriesUsingServerHandler returns a [RepositoriesUsingServerHandler].
func NewRepositoriesUsingServerHandler(d Deps) *RepositoriesUsingServerHandler {
	return &RepositoriesUsingServerHandler{d: d}
}

// Handle returns the repositories by name, reading the tenant's
// repositories a page at a time and each page's policies in one query.
// Public repositories are left out: they never use MCP context.
func (h *RepositoriesUsingServerHandler) Handle(ctx context.Context, p ports.Principal, q RepositoriesUsingServer) ([]*repository.Repository, error) {
	out := []*repository.Repository{}
	err := h.d.Tenants.ReadInTenant(ctx, p.TenantID, func(ctx context.Context, tx ports.TenantTx) error {
		after := ""
		for {
			repos, err := tx.Repositories().List(ctx, after, MaxRepositoryPage)
			if err != nil {
				return fmt.Errorf("list repositories: %w", err)
			}
			if len(repos) == 0 {
				return nil
			}
			ids := make([]string, len(repos))
			for i, r := range repos {
				ids[i] = r.ID()
			}
			def, stored, err := tx.Policies().Repositories(ctx, ids)
			if err != nil {
				return fmt.Errorf("read policies: %w", err)
			}
			for _, r := range repos {
				s, ok := stored[r.ID()]
				if !ok {
					s = app.InheritSection()
				}
				eff := policy.Merge(def, s)
				if eff.Mode() == policy.ModeOn && r.Visibility() != policy.VisibilityPublic && slices.Contains(eff.Servers(), q.ServerID) {
					out = append(out, r)
				}
			}
			if len(repos) < MaxRepositoryPage {
				return nil
			}
			after = repos[len(repos)-1].Name()
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
