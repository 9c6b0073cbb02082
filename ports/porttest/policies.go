package porttest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// PolicyRepo is the contract of [ports.PolicyRepo] (uses Tenants and
// Accounts; Repositories and Servers to make the rows policies point at).
func PolicyRepo(t *testing.T, open Open) {
	t.Run("Default is nil until put; PutDefault replaces it, per tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		first := section(t, "on", []string{NewID(t), NewID(t)}, 7)
		second := section(t, "off", nil, 3)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if d, err := tx.Policies().Default(ctx); err != nil || d != nil {
				t.Errorf("Default of a new tenant = %v, %v; want nil", d, err)
			}
			if err := tx.Policies().PutDefault(ctx, first); err != nil {
				return err
			}
			sameDefault(t, ctx, tx, first)
			if err := tx.Policies().PutDefault(ctx, second); err != nil {
				return err
			}
			sameDefault(t, ctx, tx, second)
			if err := tx.Policies().PutDefault(ctx, second); err != nil {
				t.Errorf("putting the same default again: %v", err)
			}
			return nil
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			sameDefault(t, ctx, tx, second)
			return nil
		})
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if d, err := tx.Policies().Default(ctx); err != nil || d != nil {
				t.Errorf("Default of another tenant = %v, %v; want nil", d, err)
			}
			return nil
		})
	})

	t.Run("PutDefault refuses inherit, which a default cannot have", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		kept := section(t, "on", nil, 5)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			if err := tx.Policies().PutDefault(ctx, kept); err != nil {
				return err
			}
			if err := tx.Policies().PutDefault(ctx, section(t, "inherit", nil, 5)); err == nil {
				t.Error("PutDefault(inherit) succeeded")
			}
			sameDefault(t, ctx, tx, kept) // the transaction goes on
			return nil
		})
	})

	t.Run("repository sections: stored, replaced, read one or many", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		a, b, none := h.seedRepository(t, tenant, "acme/a"), h.seedRepository(t, tenant, "acme/b"), h.seedRepository(t, tenant, "acme/c")
		sa, sb := section(t, "inherit", nil, 5), section(t, "on", []string{NewID(t)}, 20)
		h.in(t, h.tenant(t), func(ctx context.Context, tx ports.TenantTx) error { // another tenant's default
			return tx.Policies().PutDefault(ctx, section(t, "off", nil, 3))
		})
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			p := tx.Policies()
			if s, ok, err := p.Repository(ctx, a); err != nil || ok {
				t.Errorf("Repository before a put = %v, %v, %v; want not ok", s, ok, err)
			}
			if err := p.PutRepository(ctx, a, section(t, "off", nil, 1)); err != nil {
				return err
			}
			if err := p.PutRepository(ctx, a, sa); err != nil { // replaces
				return err
			}
			if err := p.PutRepository(ctx, b, sb); err != nil {
				return err
			}
			s, ok, err := p.Repository(ctx, a)
			if err != nil || !ok {
				t.Fatalf("Repository = %v, %v", ok, err)
			}
			sameSection(t, "Repository", s, sa)
			page := []string{a, b, none, NewID(t), "not-a-uuid"}
			def, got, err := p.Repositories(ctx, page)
			if err != nil {
				return err
			}
			if def != nil {
				t.Errorf("Repositories' default before a PutDefault = %v, want nil", def)
			}
			if len(got) != 2 {
				t.Errorf("Repositories returned %d sections, want 2 (a and b)", len(got))
			}
			sameSection(t, "Repositories[a]", got[a], sa)
			sameSection(t, "Repositories[b]", got[b], sb)
			sd := section(t, "on", []string{NewID(t)}, 7)
			if err := p.PutDefault(ctx, sd); err != nil {
				return err
			}
			for _, ids := range [][]string{nil, {}, page} {
				def, got, err := p.Repositories(ctx, ids)
				if err != nil || def == nil {
					t.Fatalf("Repositories(%v) default = %v, %v; want the stored default", ids, def, err)
				}
				sameSection(t, "Repositories' default", *def, sd)
				if want := map[bool]int{true: 2, false: 0}[len(ids) > 0]; got == nil || len(got) != want {
					t.Errorf("Repositories(%v) = %v; want %d sections", ids, got, want)
				}
			}
			return nil
		})
	})

	t.Run("PutRepository of a missing, malformed or other tenant's repository is ErrNotFound", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		foreign := h.seedRepository(t, other, "acme/api")
		for _, id := range []string{NewID(t), "not-a-uuid", foreign} {
			h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
				err := tx.Policies().PutRepository(ctx, id, section(t, "on", nil, 5))
				isErr(t, "PutRepository "+id, err, ports.ErrNotFound)
				if _, ok, err := tx.Policies().Repository(ctx, id); err != nil || ok {
					t.Errorf("Repository(%s) = %v, %v; want none", id, ok, err)
				}
				return nil
			})
		}
		h.in(t, other, func(ctx context.Context, tx ports.TenantTx) error {
			if _, ok, err := tx.Policies().Repository(ctx, foreign); err != nil || ok {
				t.Errorf("the other tenant's repository got a section: %v, %v", ok, err)
			}
			return nil
		})
	})

	t.Run("ServersExist answers for every id given: true only for the tenant's servers", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		mine := h.seedServer(t, tenant, "wiki", nil)
		gone := h.seedServer(t, tenant, "gone", nil)
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error { return tx.Servers().Delete(ctx, gone) })
		theirs := h.seedServer(t, other, "wiki", nil)
		missing := NewID(t)
		upper := strings.ToUpper(mine)
		ids := []string{mine, upper, theirs, gone, missing, "not-a-uuid", ""}
		h.in(t, tenant, func(ctx context.Context, tx ports.TenantTx) error {
			got, err := tx.Policies().ServersExist(ctx, ids)
			if err != nil {
				return err
			}
			want := map[string]bool{mine: true, upper: true, theirs: false, gone: false, missing: false, "not-a-uuid": false, "": false}
			if len(got) != len(want) {
				t.Errorf("ServersExist answered %d ids, want %d: %v", len(got), len(want), got)
			}
			for id, w := range want {
				if v, ok := got[id]; !ok || v != w {
					t.Errorf("ServersExist[%q] = %v (present %v), want %v", id, v, ok, w)
				}
			}
			if got, err := tx.Policies().ServersExist(ctx, nil); err != nil || len(got) != 0 {
				t.Errorf("ServersExist(nil) = %v, %v", got, err)
			}
			return nil
		})
	})
}

func section(t *testing.T, mode string, servers []string, maxCalls int) policy.McpSection {
	t.Helper()
	s, err := policy.NewMcpSection(mode, servers, &maxCalls)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameSection(t *testing.T, what string, got, want policy.McpSection) {
	t.Helper()
	if got.Mode() != want.Mode() || !slices.Equal(got.Servers(), want.Servers()) || got.MaxCalls() != want.MaxCalls() {
		t.Errorf("%s = %s %v %d, want %s %v %d", what, got.Mode(), got.Servers(), got.MaxCalls(),
			want.Mode(), want.Servers(), want.MaxCalls())
	}
}

func sameDefault(t *testing.T, ctx context.Context, tx ports.TenantTx, want policy.McpSection) {
	t.Helper()
	d, err := tx.Policies().Default(ctx)
	if err != nil || d == nil {
		t.Errorf("Default = %v, %v; want a section", d, err)
		return
	}
	sameSection(t, "Default", *d, want)
}
