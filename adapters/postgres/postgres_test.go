package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/migrations"
	"github.com/codelotse/codelotse/ports"
)

// tenantTables are the tables with row-level security, and the column that
// names the tenant.
var tenantTables = map[string]string{
	"tenants":             "id",
	"repositories":        "tenant_id",
	"mcp_servers":         "tenant_id",
	"mcp_tool_calls":      "tenant_id",
	"mcp_call_minutes":    "tenant_id",
	"tenant_mcp_defaults": "tenant_id",
	"repository_policies": "tenant_id",
	"review_runs":         "tenant_id",
	"audit_events":        "tenant_id",
}

func open(t *testing.T, dsn string) *postgres.DB {
	t.Helper()
	db, closeFn, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeFn)
	return db
}

func createTenant(t *testing.T, db *postgres.DB, name string) string {
	t.Helper()
	var id string
	err := db.WithSystem(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("INSERT INTO tenants (name) VALUES (?) RETURNING id", name).Scan(ctx, &id)
	})
	if err != nil {
		t.Fatalf("create tenant: %v", err)
	}
	return id
}

// ids of the rows seedTenant inserted.
type seeded struct{ tenant, repo, server, review string }

// seedTenant inserts one row into every tenant table, inside WithTenant.
func seedTenant(t *testing.T, db *postgres.DB, name string) seeded {
	t.Helper()
	s := seeded{tenant: createTenant(t, db, name)}
	// Tokens live outside the tenant role's reach: the system path writes them.
	err := db.WithSystem(t.Context(), func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO api_tokens (tenant_id, token_hash, permissions) VALUES (?, sha256(convert_to(?, 'UTF8')), '{tenant:manage}')", s.tenant, name)
		return err
	})
	if err != nil {
		t.Fatalf("seed token %s: %v", name, err)
	}
	err = db.WithTenant(t.Context(), s.tenant, func(ctx context.Context, tx bun.Tx) error {
		steps := []struct {
			query string
			dest  *string
		}{
			{"INSERT INTO repositories (tenant_id, name, visibility) VALUES (?0, 'acme/api', 'private') RETURNING id", &s.repo},
			{"INSERT INTO mcp_servers (tenant_id, name, url, acknowledged_at) VALUES (?0, 'wiki', 'https://wiki.example.com/mcp', now()) RETURNING id", &s.server},
			{"INSERT INTO review_runs (tenant_id, repository_id) VALUES (?0, ?2) RETURNING id", &s.review},
			{"INSERT INTO mcp_tool_calls (tenant_id, server_id, review_id, tool, status) VALUES (?0, ?3, ?4, 'search', 'ok')", nil},
			{"INSERT INTO mcp_call_minutes (tenant_id, server_id, minute, calls) VALUES (?0, ?3, now(), 1)", nil},
			{"INSERT INTO tenant_mcp_defaults (tenant_id, mode) VALUES (?0, 'off')", nil},
			{"INSERT INTO repository_policies (tenant_id, repository_id, mode, servers) VALUES (?0, ?2, 'on', ARRAY[?3]::uuid[])", nil},
			{"INSERT INTO audit_events (tenant_id, action, actor, target) VALUES (?0, 'server.create', 'token', ?3)", nil},
		}
		for _, st := range steps {
			q := tx.NewRaw(st.query, s.tenant, name, s.repo, s.server, s.review)
			var err error
			if st.dest != nil {
				err = q.Scan(ctx, st.dest)
			} else {
				_, err = tx.ExecContext(ctx, st.query, s.tenant, name, s.repo, s.server, s.review)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", st.query, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seed tenant %s: %v", name, err)
	}
	return s
}

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

func TestMigrateIsIdempotent(t *testing.T) {
	db := pgtest.New(t)
	applied, err := db.Migrate(t.Context())
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(applied) != 0 {
		t.Errorf("second Migrate applied %v, want nothing", applied)
	}
}

func TestConcurrentMigrate(t *testing.T) {
	dsn := pgtest.EmptyDSN(t)
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		all []string
	)
	for range 3 {
		wg.Go(func() {
			db := open(t, dsn) // one pool per "process"
			applied, err := db.Migrate(t.Context())
			if err != nil {
				t.Errorf("Migrate: %v", err)
			}
			mu.Lock()
			all = append(all, applied...)
			mu.Unlock()
		})
	}
	wg.Wait()
	var want []string
	for _, m := range migrations.New().Sorted() {
		want = append(want, m.String())
	}
	slices.Sort(all)
	if !slices.Equal(all, want) {
		t.Errorf("concurrent Migrate applied %v, want each of %v exactly once", all, want)
	}
}

func TestTenantRoleIsUnprivileged(t *testing.T) {
	db := pgtest.New(t)
	if err := db.CheckTenantRole(t.Context()); err != nil {
		t.Fatalf("CheckTenantRole: %v", err)
	}
	var super, bypass, login bool
	err := db.Bun().NewRaw("SELECT rolsuper, rolbypassrls, rolcanlogin FROM pg_roles WHERE rolname = ?", postgres.TenantRole).
		Scan(t.Context(), &super, &bypass, &login)
	if err != nil {
		t.Fatal(err)
	}
	if super || bypass || login {
		t.Errorf("%s: rolsuper=%v rolbypassrls=%v rolcanlogin=%v, want all false", postgres.TenantRole, super, bypass, login)
	}
	var owned int
	err = db.Bun().NewRaw("SELECT count(*) FROM pg_tables WHERE tableowner = ?", postgres.TenantRole).Scan(t.Context(), &owned)
	if err != nil || owned != 0 {
		t.Errorf("%s owns %d tables (err %v), want 0", postgres.TenantRole, owned, err)
	}
}

func TestCheckTenantRoleRefusesOwner(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	// Only a superuser may give a table to a role without CREATE on the
	// schema.
	su := pgtest.Superuser(t, db)
	for _, q := range []string{"CREATE TABLE stray (id int)", "ALTER TABLE stray OWNER TO " + postgres.TenantRole} {
		if _, err := su.Bun().ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.CheckTenantRole(ctx); !errors.Is(err, postgres.ErrUnsafeTenantRole) {
		t.Errorf("CheckTenantRole with a table owned by %s = %v, want ErrUnsafeTenantRole", postgres.TenantRole, err)
	}
	if _, err := su.Bun().ExecContext(ctx, "DROP TABLE stray"); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckTenantRole(ctx); err != nil {
		t.Errorf("CheckTenantRole after dropping the table = %v, want nil", err)
	}
}

func TestRowLevelSecurity(t *testing.T) {
	db := pgtest.New(t)
	ctx := t.Context()
	a := seedTenant(t, db, "tenant_a")
	b := seedTenant(t, db, "tenant_b")

	t.Run("tenant role without tenant sees nothing", func(t *testing.T) {
		for _, setting := range []string{"", "SELECT set_config('app.tenant_id', '', true)"} {
			err := db.Bun().RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				if _, err := tx.ExecContext(ctx, "SET LOCAL ROLE "+postgres.TenantRole); err != nil {
					return err
				}
				if setting != "" {
					if _, err := tx.ExecContext(ctx, setting); err != nil {
						return err
					}
				}
				for table := range tenantTables {
					var n int
					if err := tx.NewRaw("SELECT count(*) FROM ?", bun.Ident(table)).Scan(ctx, &n); err != nil {
						return err
					}
					if n != 0 {
						t.Errorf("%s without tenant (%q): %d rows, want 0", table, setting, n)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("tenant sees only its rows", func(t *testing.T) {
		err := db.WithTenant(ctx, a.tenant, func(ctx context.Context, tx bun.Tx) error {
			// app.system is for the owner only; setting it changes nothing here.
			if _, err := tx.ExecContext(ctx, "SELECT set_config('app.system', 'on', true)"); err != nil {
				return err
			}
			for table, col := range tenantTables {
				var own, foreign int
				err := tx.NewRaw("SELECT count(*) FILTER (WHERE ? = ?), count(*) FILTER (WHERE ? <> ?) FROM ?",
					bun.Ident(col), a.tenant, bun.Ident(col), a.tenant, bun.Ident(table)).Scan(ctx, &own, &foreign)
				if err != nil {
					return err
				}
				if own != 1 || foreign != 0 {
					t.Errorf("%s as tenant A: %d own and %d foreign rows, want 1 and 0", table, own, foreign)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("writes for another tenant fail", func(t *testing.T) {
		tests := []struct {
			name, query string
			args        []any
			want        string // SQLSTATE
		}{
			{"insert tenant", "INSERT INTO tenants (id, name) VALUES (gen_random_uuid(), 'x')", nil, "42501"},
			{"insert token", "INSERT INTO api_tokens (tenant_id, token_hash) VALUES (?, sha256('x'))", []any{b.tenant}, "42501"},
			{"insert own token", "INSERT INTO api_tokens (tenant_id, token_hash) VALUES (?, sha256('y'))", []any{a.tenant}, "42501"},
			{"read tokens", "SELECT count(*) FROM api_tokens", nil, "42501"},
			{"read sessions", "SELECT count(*) FROM web_sessions", nil, "42501"},
			{"delete sessions", "DELETE FROM web_sessions", nil, "42501"},
			{"rename own tenant", "UPDATE tenants SET name = 'x' WHERE id = ?", []any{a.tenant}, "42501"},
			{"insert repository", "INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'x', 'private')", []any{b.tenant}, "42501"},
			{"insert server", "INSERT INTO mcp_servers (tenant_id, name, url) VALUES (?, 'x', 'https://x')", []any{b.tenant}, "42501"},
			{"insert review", "INSERT INTO review_runs (tenant_id, repository_id) VALUES (?, ?)", []any{b.tenant, b.repo}, "42501"},
			{"insert call", "INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status) VALUES (?, ?, 't', 'ok')", []any{b.tenant, b.server}, "42501"},
			{"insert defaults", "INSERT INTO tenant_mcp_defaults (tenant_id, mode) VALUES (?, 'off')", []any{b.tenant}, "42501"},
			{"insert policy", "INSERT INTO repository_policies (tenant_id, repository_id, mode) VALUES (?, ?, 'off')", []any{b.tenant, b.repo}, "42501"},
			{"insert audit", "INSERT INTO audit_events (tenant_id, action, actor) VALUES (?, 'x', 'y')", []any{b.tenant}, "42501"},
			{"move own row", "UPDATE repositories SET tenant_id = ? WHERE id = ?", []any{b.tenant, a.repo}, "42501"},
			{"point at foreign server", "INSERT INTO mcp_tool_calls (tenant_id, server_id, tool, status) VALUES (?, ?, 't', 'ok')", []any{a.tenant, b.server}, "23503"},
			{"insert call minute", "INSERT INTO mcp_call_minutes (tenant_id, server_id, minute, calls) VALUES (?, ?, now(), 1)", []any{b.tenant, b.server}, "42501"},
			{"count a foreign server's calls", "INSERT INTO mcp_call_minutes (tenant_id, server_id, minute, calls) VALUES (?, ?, now(), 1)", []any{a.tenant, b.server}, "23503"},
			{"point at foreign repository", "INSERT INTO review_runs (tenant_id, repository_id) VALUES (?, ?)", []any{a.tenant, b.repo}, "23503"},
			{"delete audit", "DELETE FROM audit_events", nil, "42501"},
		}
		for _, tt := range tests {
			err := db.WithTenant(ctx, a.tenant, func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, tt.query, tt.args...)
				return err
			})
			if got := sqlState(err); got != tt.want {
				t.Errorf("%s: error %v (SQLSTATE %q), want SQLSTATE %s", tt.name, err, got, tt.want)
			}
		}
	})

	t.Run("updates of foreign rows touch nothing", func(t *testing.T) {
		err := db.WithTenant(ctx, a.tenant, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.ExecContext(ctx, "UPDATE mcp_servers SET enabled = false WHERE id = ?", b.server)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n != 0 {
				t.Errorf("updated %d foreign servers, want 0", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("system scope sees all tenants", func(t *testing.T) {
		var n int
		err := db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewRaw("SELECT count(*) FROM api_tokens").Scan(ctx, &n)
		})
		if err != nil || n != 2 {
			t.Errorf("tokens in system scope: %d (err %v), want 2", n, err)
		}
	})
}

func TestWithTenantRejectsInvalidID(t *testing.T) {
	db := pgtest.New(t)
	for _, id := range []string{"", "tenant", "00000000-0000-0000-0000-00000000000", "'; RESET ROLE; --"} {
		called := false
		err := db.WithTenant(t.Context(), id, func(context.Context, bun.Tx) error { called = true; return nil })
		if !errors.Is(err, postgres.ErrInvalidTenantID) || called {
			t.Errorf("WithTenant(%q) = %v (fn called %v), want ErrInvalidTenantID", id, err, called)
		}
	}
}

// With a single pooled connection, every transaction reuses the backend of
// the previous one: the role and the tenant must not survive a commit, a
// rollback or a panic.
func TestTenantScopeDoesNotLeak(t *testing.T) {
	u, err := url.Parse(pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	db := open(t, u.String())
	ctx := t.Context()
	tenant := createTenant(t, db, "a")

	var sessionUser string
	var pid int
	if err := db.Bun().NewRaw("SELECT current_user, pg_backend_pid()").Scan(ctx, &sessionUser, &pid); err != nil {
		t.Fatal(err)
	}

	errBoom := errors.New("boom")
	scopes := map[string]func(){
		"commit": func() {
			_ = db.WithTenant(ctx, tenant, func(context.Context, bun.Tx) error { return nil })
		},
		"rollback": func() {
			_ = db.WithTenant(ctx, tenant, func(context.Context, bun.Tx) error { return errBoom })
		},
		"panic": func() {
			defer func() {
				if r := recover(); r != errBoom {
					t.Errorf("recovered %v, want the panic of fn", r)
				}
			}()
			_ = db.WithTenant(ctx, tenant, func(ctx context.Context, tx bun.Tx) error {
				if _, err := tx.ExecContext(ctx, "INSERT INTO repositories (tenant_id, name, visibility) VALUES (?, 'changed', 'private')", tenant); err != nil {
					return err
				}
				panic(errBoom)
			})
		},
	}
	for name, run := range scopes {
		var inside string
		_ = db.WithTenant(ctx, tenant, func(ctx context.Context, tx bun.Tx) error {
			return tx.NewRaw("SELECT current_user").Scan(ctx, &inside)
		})
		if inside != postgres.TenantRole {
			t.Fatalf("current_user inside WithTenant = %q, want %q", inside, postgres.TenantRole)
		}
		run()
		var user, setting string
		var gotPID int
		err := db.Bun().NewRaw("SELECT current_user, coalesce(current_setting('app.tenant_id', true), ''), pg_backend_pid()").
			Scan(ctx, &user, &setting, &gotPID)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if gotPID != pid {
			t.Fatalf("%s: backend %d, want the single pooled backend %d", name, gotPID, pid)
		}
		if user != sessionUser || setting != "" {
			t.Errorf("after %s: current_user %q, app.tenant_id %q; want %q and empty", name, user, setting, sessionUser)
		}
	}

	var n int
	err = db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT count(*) FROM repositories WHERE tenant_id = ?", tenant).Scan(ctx, &n)
	})
	if err != nil || n != 0 {
		t.Errorf("repositories after the panic: %d (err %v), want the insert rolled back", n, err)
	}
}

// The production path: the DSN names an ordinary role that owns the
// tables. Forced RLS applies to it too, so outside WithSystem it sees
// nothing.
func TestNonSuperuserOwner(t *testing.T) {
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pgtest.AdminDSN())
	if err != nil {
		t.Fatalf("connect admin: %v", err)
	}
	defer admin.Close(context.Background())

	role := "codelotse_test_owner_" + fmt.Sprint(admin.PgConn().PID())
	dbname := role + "_db"
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN NOSUPERUSER NOBYPASSRLS CREATEROLE",
		"CREATE DATABASE " + dbname + " OWNER " + role,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgtest.AdminDSN())
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		for _, q := range []string{"DROP DATABASE IF EXISTS " + dbname + " WITH (FORCE)", "DROP ROLE IF EXISTS " + role} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Errorf("cleanup %s: %v", q, err)
			}
		}
	})

	dsn := pgtest.WithDatabase(pgtest.AdminDSN(), dbname)
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		u.User = url.User(role)
		dsn = u.String()
	} else {
		dsn += " user=" + role
	}
	// One connection, so that a setting leaking out of a transaction or
	// a batch would be seen by the next query.
	db := open(t, withPoolSize1(dsn))
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate as %s: %v", role, err)
	}
	if err := db.CheckTenantRole(ctx); err != nil {
		t.Fatalf("CheckTenantRole as %s: %v", role, err)
	}
	a := seedTenant(t, db, "a")
	seedTenant(t, db, "b")

	var n int
	if err := db.Bun().NewRaw("SELECT count(*) FROM tenants").Scan(ctx, &n); err != nil || n != 0 {
		t.Errorf("owner outside WithSystem sees %d tenants (err %v), want 0", n, err)
	}
	err = db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT count(*) FROM tenants").Scan(ctx, &n)
	})
	if err != nil || n != 2 {
		t.Errorf("owner in WithSystem sees %d tenants (err %v), want 2", n, err)
	}
	err = db.WithTenant(ctx, a.tenant, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT count(*) FROM repositories").Scan(ctx, &n)
	})
	if err != nil || n != 1 {
		t.Errorf("tenant A sees %d repositories (err %v), want 1", n, err)
	}

	// The token lookup's one-round-trip batch sees the token through the
	// system policy, records its use, and leaves no setting behind.
	accounts := postgres.NewAccounts(db)
	hash := sha256.Sum256([]byte("token-of-a"))
	id, err := accounts.CreateToken(ctx, a.tenant, hash[:], []string{"repo:manage"})
	if err != nil {
		t.Fatalf("CreateToken: %v", err)
	}
	p, err := accounts.LookupToken(ctx, hash[:])
	if err != nil || p.TokenID != id || p.TenantID != a.tenant || fmt.Sprint(p.Permissions) != "[repo:manage]" {
		t.Errorf("LookupToken as %s = %+v, %v; want token %s of tenant %s", role, p, err, id, a.tenant)
	}
	var used bool
	err = db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT last_used_at IS NOT NULL FROM api_tokens WHERE id = ?", id).Scan(ctx, &used)
	})
	if err != nil || !used {
		t.Errorf("last_used_at set = %v, %v; want true", used, err)
	}
	var system string
	if err := db.Bun().NewRaw("SELECT coalesce(current_setting('app.system', true), '')").Scan(ctx, &system); err != nil || system != "" {
		t.Errorf("app.system after the lookup = %q (err %v), want unset", system, err)
	}
	if err := db.Bun().NewRaw("SELECT count(*) FROM api_tokens").Scan(ctx, &n); err != nil || n != 0 {
		t.Errorf("owner after LookupToken sees %d tokens (err %v), want 0", n, err)
	}
	if _, err := accounts.LookupToken(ctx, make([]byte, 32)); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupToken(unknown) as %s = %v, want ErrNotFound", role, err)
	}
}

// withPoolSize1 limits the pool of dsn to one connection.
func withPoolSize1(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		q := u.Query()
		q.Set("pool_max_conns", "1")
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " pool_max_conns=1"
}

// TestMigratesWithoutCreateRole is docs/operations.md's second way to create the
// database role: the operator creates codelotse_tenant and grants it to
// a login role without CREATEROLE that owns the database. The migrations
// must neither create the role nor grant it again, and the service must
// start and scope tenants as with the first way (every other test).
func TestMigratesWithoutCreateRole(t *testing.T) {
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, pgtest.AdminDSN())
	if err != nil {
		t.Fatalf("connect admin: %v", err)
	}
	defer admin.Close(context.Background())
	role := "codelotse_test_nocreaterole_" + fmt.Sprint(admin.PgConn().PID())
	dbname := role + "_db"
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, pgtest.AdminDSN())
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer conn.Close(ctx)
		for _, q := range []string{"DROP DATABASE IF EXISTS " + dbname + " WITH (FORCE)", "DROP ROLE IF EXISTS " + role} {
			if _, err := conn.Exec(ctx, q); err != nil {
				t.Errorf("cleanup %s: %v", q, err)
			}
		}
	})
	// The tenant role is cluster-wide: another test's migration may have
	// created it already, or may be creating it now.
	if _, err := admin.Exec(ctx, `DO $$ BEGIN
		CREATE ROLE `+postgres.TenantRole+` NOLOGIN;
		EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEROLE IN ROLE " + postgres.TenantRole,
		"CREATE DATABASE " + dbname + " OWNER " + role,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	dsn := pgtest.WithDatabase(pgtest.AdminDSN(), dbname)
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		u.User = url.User(role)
		dsn = u.String()
	} else {
		dsn += " user=" + role
	}
	db := open(t, dsn)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate as %s (no CREATEROLE): %v", role, err)
	}
	if err := db.CheckTenantRole(ctx); err != nil {
		t.Fatalf("CheckTenantRole as %s: %v", role, err)
	}
	a := seedTenant(t, db, "a")
	var n int
	err = db.WithTenant(ctx, a.tenant, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT count(*) FROM repositories").Scan(ctx, &n)
	})
	if err != nil || n != 1 {
		t.Errorf("tenant A sees %d repositories (err %v), want 1", n, err)
	}
}
