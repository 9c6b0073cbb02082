package porttest

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/repository"
	"github.com/codelotse/codelotse/ports"
)

// RepositoryRepo is the contract of [ports.RepositoryRepo] (uses Tenants
// and Accounts).
func RepositoryRepo(t *testing.T, open Open) {
	t.Run("Insert then Get; Update returns and stores what fn changed", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		r := newRepository(t, NewID(t), "acme/api", policy.VisibilityInternal)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Repositories().Insert(ctx, r); err != nil {
				return err
			}
			got, err := tx.Repositories().Get(ctx, r.ID())
			sameRepository(t, "Get", got, err, r.ID(), "acme/api", policy.VisibilityInternal)
			got, err = tx.Repositories().Update(ctx, r.ID(), func(r *repository.Repository) error {
				if r.Visibility() != policy.VisibilityInternal {
					t.Errorf("Update passes visibility %v, want internal", r.Visibility())
				}
				return r.ChangeVisibility(policy.VisibilityPublic)
			})
			sameRepository(t, "Update", got, err, r.ID(), "acme/api", policy.VisibilityPublic)
			return nil
		})
		h.read(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, r.ID())
			sameRepository(t, "Get after Update", got, err, r.ID(), "acme/api", policy.VisibilityPublic)
			return nil
		})
	})

	t.Run("a refused change stores nothing and returns fn's error", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		id := h.seedRepository(t, tenant, "acme/api")
		refused := errors.New("refused")
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Update(ctx, id, func(r *repository.Repository) error {
				if err := r.ChangeVisibility(policy.VisibilityPublic); err != nil {
					return err
				}
				return refused
			})
			if got != nil || !errors.Is(err, refused) {
				t.Errorf("Update = %v, %v; want fn's error", got, err)
			}
			_, err = tx.Repositories().Update(ctx, id, func(r *repository.Repository) error {
				return r.ChangeVisibility(policy.Visibility{})
			})
			if err == nil {
				t.Error("Update stored the zero visibility")
			}
			return nil
		})
		h.read(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, id)
			sameRepository(t, "Get after refused updates", got, err, id, "acme/api", policy.VisibilityPrivate)
			return nil
		})
	})

	t.Run("a repository the caller changes after Insert, Get or List is not the stored one", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		r := newRepository(t, NewID(t), "acme/api", policy.VisibilityPrivate)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Repositories().Insert(ctx, r); err != nil {
				return err
			}
			if err := r.ChangeVisibility(policy.VisibilityPublic); err != nil {
				return err
			}
			got, err := tx.Repositories().Get(ctx, r.ID())
			if err != nil {
				return err
			}
			if err := got.ChangeVisibility(policy.VisibilityPublic); err != nil {
				return err
			}
			list, err := tx.Repositories().List(ctx, "", 10)
			if err != nil || len(list) != 1 {
				t.Fatalf("List = %d, %v; want 1", len(list), err)
			}
			if err := list[0].ChangeVisibility(policy.VisibilityPublic); err != nil {
				return err
			}
			got, err = tx.Repositories().Get(ctx, r.ID())
			sameRepository(t, "Get", got, err, r.ID(), "acme/api", policy.VisibilityPrivate)
			return nil
		})
	})

	t.Run("a missing, malformed or other tenant's id is ErrNotFound", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		foreign := h.seedRepository(t, other, "acme/api")
		for _, id := range []string{NewID(t), "not-a-uuid", "", foreign} {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				_, err := tx.Repositories().Get(ctx, id)
				isErr(t, "Get "+id, err, ports.ErrNotFound)
				called := false
				_, err = tx.Repositories().Update(ctx, id, func(r *repository.Repository) error {
					called = true
					return r.ChangeVisibility(policy.VisibilityPublic)
				})
				isErr(t, "Update "+id, err, ports.ErrNotFound)
				if called {
					t.Errorf("Update %s called fn", id)
				}
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, foreign)
			sameRepository(t, "the other tenant's repository", got, err, foreign, "acme/api", policy.VisibilityPrivate)
			return nil
		})
	})

	t.Run("Insert refuses a used name or id in the tenant with ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		id := h.seedRepository(t, tenant, "acme/api")
		h.seedRepository(t, other, "acme/api") // a name is unique per tenant only
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			err := tx.Repositories().Insert(ctx, newRepository(t, NewID(t), "acme/api", policy.VisibilityPublic))
			isErr(t, "used name", err, ports.ErrConflict)
			err = tx.Repositories().Insert(ctx, newRepository(t, id, "acme/other", policy.VisibilityPublic))
			isErr(t, "used id", err, ports.ErrConflict)
			// The transaction goes on, and the stored row is unchanged.
			got, err := tx.Repositories().Get(ctx, id)
			sameRepository(t, "after refused inserts", got, err, id, "acme/api", policy.VisibilityPrivate)
			list, err := tx.Repositories().List(ctx, "", 10)
			if err != nil || len(list) != 1 {
				t.Errorf("after refused inserts: %d repositories, %v; want 1", len(list), err)
			}
			return nil
		})
	})

	t.Run("List pages by name in byte order, after the given name, within the tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		names := []string{"acme/ab", "acme/B", "Zeta/x", "acme/a-b", "acme/é", "acme/a_b", "acme/a"}
		for _, n := range names {
			h.seedRepository(t, tenant, n)
		}
		h.seedRepository(t, other, "acme/aa")
		want := []string{"Zeta/x", "acme/B", "acme/a", "acme/a-b", "acme/a_b", "acme/ab", "acme/é"}
		h.read(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			var got []string
			after := ""
			for page := 0; page < 10; page++ {
				list, err := tx.Repositories().List(ctx, after, 3)
				if err != nil {
					return err
				}
				if len(list) > 3 {
					t.Fatalf("a page of %d, limit 3", len(list))
				}
				if len(list) == 0 {
					break
				}
				for _, r := range list {
					got = append(got, r.Name())
				}
				after = list[len(list)-1].Name()
			}
			if !slices.Equal(got, want) {
				t.Errorf("pages %q, want %q", got, want)
			}
			for _, c := range []struct {
				after string
				limit int
				want  []string
			}{
				{"acme/a", 2, []string{"acme/a-b", "acme/a_b"}},
				{"acme/aa", 10, []string{"acme/ab", "acme/é"}}, // after need not be stored
				{"acme/é", 10, nil},
				{"", 0, nil},
				{"", -1, nil},
			} {
				list, err := tx.Repositories().List(ctx, c.after, c.limit)
				if err != nil {
					return err
				}
				var got []string
				for _, r := range list {
					got = append(got, r.Name())
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("List(%q, %d) = %q, want %q", c.after, c.limit, got, c.want)
				}
			}
			return nil
		})
	})
}

// newRepository builds a repository through the domain's constructor.
func newRepository(t *testing.T, id, name string, v policy.Visibility) *repository.Repository {
	t.Helper()
	r, err := repository.New(id, name, v)
	if err != nil {
		t.Fatalf("repository.New(%q, %q, %v): %v", id, name, v, err)
	}
	return r
}

// sameRepository fails unless got is the repository {id, name, v}.
func sameRepository(t *testing.T, what string, got *repository.Repository, err error, id, name string, v policy.Visibility) {
	t.Helper()
	if err != nil || got == nil {
		t.Errorf("%s = %v, %v; want {%s %q %v}", what, got, err, id, name, v)
		return
	}
	if got.ID() != id || got.Name() != name || got.Visibility() != v {
		t.Errorf("%s = {%s %q %v}, want {%s %q %v}", what, got.ID(), got.Name(), got.Visibility(), id, name, v)
	}
}
