package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// scopeState is what a query of a read scope runs under.
type scopeState struct {
	User, Tenant, ReadOnly string
	PID                    int
	XactStart              string // now(): the start of the transaction
}

const scopeStateQuery = `SELECT current_user, coalesce(current_setting('app.tenant_id', true), ''),
	current_setting('transaction_read_only'), pg_backend_pid(), now()::text`

func readState(ctx context.Context, q interface {
	NewRaw(string, ...any) *bun.RawQuery
}) (scopeState, error) {
	var s scopeState
	err := q.NewRaw(scopeStateQuery).Scan(ctx, &s.User, &s.Tenant, &s.ReadOnly, &s.PID, &s.XactStart)
	return s, err
}

// Every query of a read scope runs as the tenant role, for its tenant,
// read-only, each in a transaction of its own (no BEGIN spans them); and
// nothing of it is left on the (only) pooled connection afterwards.
func TestReadTenantScopesEveryQuery(t *testing.T) {
	ctx := t.Context()
	db := open(t, withPoolSize1(pgtest.DSN(t)))
	tenant := createTenant(t, db, "a")
	outside, err := readState(ctx, db.Bun())
	if err != nil {
		t.Fatal(err)
	}

	var first, second scopeState
	err = db.ReadTenant(ctx, tenant, func(ctx context.Context, tx bun.IDB) (err error) {
		if first, err = readState(ctx, tx); err != nil {
			return err
		}
		second, err = readState(ctx, tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []scopeState{first, second} {
		if s.User != postgres.TenantRole || s.Tenant != tenant || s.ReadOnly != "on" || s.PID != outside.PID {
			t.Errorf("query %d of the read scope ran as %+v; want %s, tenant %s, read-only, backend %d", i+1, s, postgres.TenantRole, tenant, outside.PID)
		}
	}
	if first.XactStart == second.XactStart {
		t.Errorf("both queries ran in one transaction (started %s): the read scope sent a BEGIN", first.XactStart)
	}

	after, err := readState(ctx, db.Bun())
	if err != nil {
		t.Fatal(err)
	}
	if after.User != outside.User || after.Tenant != "" || after.ReadOnly != "off" {
		t.Errorf("after the read scope: %+v; want %s, no tenant, read-write", after, outside.User)
	}
}

// Through a read scope a tenant sees its own rows of every tenant table
// and none of the other tenant's, though the test connects as a
// superuser: the scope's role switch is what makes row-level security
// apply, and its tenant setting what the policies compare with.
func TestReadTenantIsolation(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	a, b := seedTenant(t, db, "a"), seedTenant(t, db, "b")
	for _, tc := range []struct{ self, other string }{{a.tenant, b.tenant}, {b.tenant, a.tenant}} {
		err := db.ReadTenant(ctx, tc.self, func(ctx context.Context, tx bun.IDB) error {
			for table, col := range tenantTables {
				var own, foreign, all int
				q := fmt.Sprintf("SELECT count(*) FILTER (WHERE %[2]s = ?), count(*) FILTER (WHERE %[2]s = ?), count(*) FROM %[1]s", table, col)
				if err := tx.NewRaw(q, tc.self, tc.other).Scan(ctx, &own, &foreign, &all); err != nil {
					return fmt.Errorf("%s: %w", table, err)
				}
				if own == 0 || foreign != 0 || all != own {
					t.Errorf("%s as tenant %s: own %d, other tenant's %d, all %d; want own > 0 and nothing else", table, tc.self, own, foreign, all)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The tenant-scoped stores see the same through ReadInTenant.
	tenants := postgres.NewTenants(db)
	err := tenants.ReadInTenant(ctx, a.tenant, func(ctx context.Context, tx ports.TenantTx) error {
		if _, err := tx.Servers().Get(ctx, b.server); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("Servers().Get(other tenant's server) = %v, want ErrNotFound", err)
		}
		list, err := tx.Servers().List(ctx)
		if err != nil {
			return err
		}
		if len(list) != 1 || list[0].ID() != a.server {
			t.Errorf("Servers().List as a = %d servers, want a's one server %s", len(list), a.server)
		}
		// Writes through the stores fail: by the store (no transaction to
		// take a savepoint in) or by PostgreSQL (read-only).
		if err := tx.Servers().Insert(ctx, newServer(t, a.tenant, "new", server.NoCredential()), nil, 20); err == nil {
			t.Error("Servers().Insert in a read scope succeeded")
		}
		if err := tx.Servers().Delete(ctx, a.server); err == nil {
			t.Error("Servers().Delete in a read scope succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = tenants.InTenant(ctx, a.tenant, func(ctx context.Context, tx ports.TenantTx) error {
		list, err := tx.Servers().List(ctx)
		if err == nil && (len(list) != 1 || list[0].ID() != a.server) {
			t.Errorf("after the writes of the read scope: %d servers, want a's one server", len(list))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A read scope's queries are canceled with the caller's context, though
// fn's context does not carry the cancellation (ReadTenant).
func TestReadTenantCancel(t *testing.T) {
	db := open(t, withPoolSize1(pgtest.DSN(t)))
	tenant := createTenant(t, db, "a")
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := db.ReadTenant(ctx, tenant, func(ctx context.Context, tx bun.IDB) error {
		_, err := tx.ExecContext(ctx, "SELECT pg_sleep(5)")
		return err
	})
	if err == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("ReadTenant with a 200 ms deadline around pg_sleep(5) = %v after %v, want canceled", err, time.Since(start))
	}
	var one int
	if err := db.ReadTenant(t.Context(), tenant, func(ctx context.Context, tx bun.IDB) error {
		return tx.NewRaw("SELECT 1").Scan(ctx, &one)
	}); err != nil || one != 1 {
		t.Errorf("next read scope after the cancel: %d, %v", one, err)
	}
}

// Hostile and failing uses of a read scope: a tenant id that could smuggle
// SQL is refused before anything is sent; writes fail (also one that
// would stay inside the tenant); a failing query, a query whose rows are
// not read to the end, and fn's own error leave the (only) pooled
// connection clean: the next query on it runs as the connecting role
// without tenant, and the next read scope sees its own tenant only.
func TestReadTenantFailuresLeaveNoScope(t *testing.T) {
	ctx := t.Context()
	db := open(t, withPoolSize1(pgtest.DSN(t)))
	a, b := seedTenant(t, db, "a"), seedTenant(t, db, "b")
	outside, err := readState(ctx, db.Bun())
	if err != nil {
		t.Fatal(err)
	}

	for _, id := range []string{"", "tenant", "'; RESET ROLE; --", a.tenant + "'; RESET ROLE; --"} {
		called := false
		err := db.ReadTenant(ctx, id, func(context.Context, bun.IDB) error { called = true; return nil })
		if !errors.Is(err, postgres.ErrInvalidTenantID) || called {
			t.Errorf("ReadTenant(%q) = %v (fn called %v), want ErrInvalidTenantID", id, err, called)
		}
	}

	errBoom := errors.New("boom")
	cases := []struct {
		name    string
		fn      func(ctx context.Context, tx bun.IDB) error
		wantErr func(error) bool
	}{
		{"insert into own tenant", func(ctx context.Context, tx bun.IDB) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'x/new', 'private')", a.tenant)
			return err
		}, func(err error) bool { return sqlState(err) == "25006" }},
		{"update through a query", func(ctx context.Context, tx bun.IDB) error {
			var n int
			return tx.NewRaw("WITH u AS (UPDATE repositories SET name = 'x/renamed' RETURNING 1) SELECT count(*) FROM u").Scan(ctx, &n)
		}, func(err error) bool { return sqlState(err) == "25006" }},
		{"failing query", func(ctx context.Context, tx bun.IDB) error {
			var n int
			return tx.NewRaw("SELECT 1/0").Scan(ctx, &n)
		}, func(err error) bool { return sqlState(err) == "22012" }},
		{"rows not read to the end", func(ctx context.Context, tx bun.IDB) error {
			rows, err := tx.QueryContext(ctx, "SELECT g FROM generate_series(1, 10000) g")
			if err != nil {
				return err
			}
			if !rows.Next() {
				return errors.New("no first row")
			}
			return rows.Close()
		}, func(err error) bool { return err == nil }},
		{"fn fails", func(context.Context, bun.IDB) error { return errBoom }, func(err error) bool { return errors.Is(err, errBoom) }},
	}
	for _, tc := range cases {
		err := db.ReadTenant(ctx, a.tenant, tc.fn)
		if !tc.wantErr(err) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		after, err := readState(ctx, db.Bun())
		if err != nil {
			t.Fatalf("%s: next query on the connection: %v", tc.name, err)
		}
		if after.PID != outside.PID || after.User != outside.User || after.Tenant != "" || after.ReadOnly != "off" {
			t.Errorf("after %s: %+v; want backend %d as %s, no tenant, read-write", tc.name, after, outside.PID, outside.User)
		}
		var seen []string
		err = db.ReadTenant(ctx, b.tenant, func(ctx context.Context, tx bun.IDB) error {
			return tx.NewRaw("SELECT id::text FROM repositories").Scan(ctx, &seen)
		})
		if err != nil || len(seen) != 1 || seen[0] != b.repo {
			t.Errorf("after %s: tenant b's read scope sees repositories %v (err %v), want only %s", tc.name, seen, err, b.repo)
		}
	}
	var names []string
	err = db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT name FROM repositories ORDER BY name").Scan(ctx, &names)
	})
	if err != nil || len(names) != 2 || names[0] != "acme/api" || names[1] != "acme/api" {
		t.Errorf("repositories after the writes: %v (err %v), want the two seeded ones unchanged", names, err)
	}
}

// There is no token cache: a deleted token fails on its very next lookup.
func TestDeletedTokenFailsAtOnce(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	accounts := postgres.NewAccounts(db)
	tenant, err := accounts.CreateTenant(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte("secret"))
	id, err := accounts.CreateToken(ctx, tenant, hash[:], []string{"tenant:manage"})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := accounts.LookupToken(ctx, hash[:]); err != nil || p.TokenID != id || p.TenantID != tenant {
		t.Fatalf("LookupToken = %+v, %v; want token %s of tenant %s", p, err, id, tenant)
	}
	err = db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "DELETE FROM api_tokens WHERE id = ?", id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := accounts.LookupToken(ctx, hash[:]); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupToken after the delete = %+v, %v; want ErrNotFound", p, err)
	}
}
