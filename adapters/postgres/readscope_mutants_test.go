package postgres_test

import (
	"context"
	"testing"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestReadScopeRunsAsTheTenantRole: a read scope switches to the tenant
// role, not only to the tenant's rows: it cannot read API tokens, which
// the owner (forced row-level security or not) can.
func TestReadScopeRunsAsTheTenantRole(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	a := seedTenant(t, db, "a")
	err := db.ReadTenant(ctx, a.tenant, func(ctx context.Context, tx bun.IDB) error {
		var user string
		if err := tx.NewRaw("SELECT current_user").Scan(ctx, &user); err != nil {
			return err
		}
		if user != postgres.TenantRole {
			t.Errorf("read scope runs as %q, want %q", user, postgres.TenantRole)
		}
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM api_tokens").Scan(ctx, &n); err == nil {
			t.Errorf("a read scope read api_tokens (%d rows), want permission denied", n)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
