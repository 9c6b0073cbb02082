package porttest

import (
	"context"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// RepositoryRepo is the contract of [ports.RepositoryRepo] (uses Tenants
// and Accounts).
func RepositoryRepo(t *testing.T, open Open) {
	t.Run("Insert then Get; SetVisibility returns and stores the change", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		r := ports.Repository{ID: NewID(t), Name: "acme/api", Visibility: policy.VisibilityInternal}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Repositories().Insert(ctx, r); err != nil {
				return err
			}
			got, err := tx.Repositories().Get(ctx, r.ID)
			if err != nil || got != r {
				t.Errorf("Get = %+v, %v; want %+v", got, err, r)
			}
			r.Visibility = policy.VisibilityPublic
			got, err = tx.Repositories().SetVisibility(ctx, r.ID, policy.VisibilityPublic)
			if err != nil || got != r {
				t.Errorf("SetVisibility = %+v, %v; want %+v", got, err, r)
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, r.ID)
			if err != nil || got != r {
				t.Errorf("Get after SetVisibility = %+v, %v; want %+v", got, err, r)
			}
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
				_, err = tx.Repositories().SetVisibility(ctx, id, policy.VisibilityPublic)
				isErr(t, "SetVisibility "+id, err, ports.ErrNotFound)
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Repositories().Get(ctx, foreign)
			if err != nil || got.Visibility != policy.VisibilityPrivate {
				t.Errorf("the other tenant's repository changed: %+v, %v", got, err)
			}
			return nil
		})
	})

	t.Run("Insert refuses a used name or id in the tenant with ErrConflict", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		id := h.seedRepository(t, tenant, "acme/api")
		h.seedRepository(t, other, "acme/api") // a name is unique per tenant only
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			err := tx.Repositories().Insert(ctx, ports.Repository{ID: NewID(t), Name: "acme/api", Visibility: policy.VisibilityPublic})
			isErr(t, "used name", err, ports.ErrConflict)
			err = tx.Repositories().Insert(ctx, ports.Repository{ID: id, Name: "acme/other", Visibility: policy.VisibilityPublic})
			isErr(t, "used id", err, ports.ErrConflict)
			// The transaction goes on, and the stored row is unchanged.
			got, err := tx.Repositories().Get(ctx, id)
			if err != nil || got.Name != "acme/api" || got.Visibility != policy.VisibilityPrivate {
				t.Errorf("after refused inserts: %+v, %v", got, err)
			}
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
					got = append(got, r.Name)
				}
				after = list[len(list)-1].Name
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
					got = append(got, r.Name)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("List(%q, %d) = %q, want %q", c.after, c.limit, got, c.want)
				}
			}
			return nil
		})
	})
}
