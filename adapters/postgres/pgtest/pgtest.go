// Package pgtest gives tests a fresh, migrated PostgreSQL database of their
// own, dropped when the test ends.
//
// The server is taken from QUAVON_TEST_DATABASE_URL, else
// QUAVON_DATABASE_URL, else the local development server; that admin
// role must be allowed to create databases and roles. A test fails (never
// skips) when PostgreSQL is unreachable.
//
// Tests run as production runs: every database belongs to a role of its
// own that is not a superuser and lacks BYPASSRLS, created as
// docs/operations.md ("The database role") tells operators to create the
// service's role (LOGIN, CREATEROLE, owner of the database), and the
// migrations and the service connect as that role. Forced row-level
// security therefore applies to it outside [postgres.DB.WithSystem]; a
// test that must look at rows past it uses [SuperuserDSN] or
// [Superuser].
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/codelotse/codelotse/adapters/postgres"
)

// DefaultDSN is the local development server used when no variable is set.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

const timeout = 30 * time.Second

// AdminDSN returns the DSN of the server on which test databases are
// created.
func AdminDSN() string {
	for _, v := range []string{"QUAVON_TEST_DATABASE_URL", "QUAVON_DATABASE_URL"} {
		if dsn := os.Getenv(v); dsn != "" {
			return dsn
		}
	}
	return DefaultDSN
}

// New returns an open connection to a fresh, migrated database. The pool is
// closed and the database dropped when the test ends.
func New(t testing.TB) *postgres.DB {
	t.Helper()
	dsn := DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	db, closeFn, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: open test database: %v", err)
	}
	t.Cleanup(closeFn) // runs before the drop registered by DSN
	return db
}

// DSN creates a fresh, migrated database and returns its DSN, for tests
// that start the binary. The database is dropped when the test ends.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := EmptyDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	db, closeFn, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("pgtest: open test database: %v", err)
	}
	defer closeFn()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("pgtest: migrate test database: %v", err)
	}
	return dsn
}

// EmptyDSN creates a fresh database without migrating it and returns its
// DSN, which names the database's owner: a new role, not a superuser,
// without BYPASSRLS, with CREATEROLE (the first migration creates the
// tenant role when the cluster has none yet). The database and the role
// are dropped when the test ends.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	admin := AdminDSN()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn := connect(ctx, t, admin)
	defer conn.Close(context.WithoutCancel(ctx))

	name := "codelotse_test_" + randomHex(t)
	password := randomHex(t) + randomHex(t)
	// As docs/operations.md tells operators: a login role that owns the database.
	for _, q := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB CREATEROLE PASSWORD '%s'", name, password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, name),
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("pgtest: %s: %v", strings.Replace(q, password, "…", 1), err)
		}
	}
	t.Cleanup(func() { drop(t, admin, name) })
	return withUser(WithDatabase(admin, name), name, password)
}

// SuperuserDSN returns the admin DSN ([AdminDSN], a superuser in the
// usual setups) on the database of dsn, for tests that inspect or change
// rows past row-level security.
func SuperuserDSN(dsn string) string {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return AdminDSN()
	}
	return WithDatabase(AdminDSN(), cfg.Database)
}

// Superuser opens a pool on db's database as the admin role (see
// [SuperuserDSN]); it is closed when the test ends.
func Superuser(t testing.TB, db *postgres.DB) *postgres.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var name string
	if err := db.Pool().QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
		t.Fatalf("pgtest: current database: %v", err)
	}
	su, closeFn, err := postgres.Open(ctx, WithDatabase(AdminDSN(), name))
	if err != nil {
		t.Fatalf("pgtest: open %s as the admin role: %v", name, err)
	}
	t.Cleanup(closeFn)
	return su
}

// withUser returns dsn with its user and password replaced.
func withUser(dsn, user, password string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.User = url.UserPassword(user, password)
			return u.String()
		}
	}
	return dsn + " user=" + user + " password=" + password // the last value wins
}

// WithDatabase returns dsn with its database replaced by name.
func WithDatabase(dsn, name string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.Path = "/" + name
			u.RawPath = ""
			return u.String()
		}
	}
	return dsn + " dbname=" + name // keyword/value form: the last value wins
}

func connect(ctx context.Context, t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("pgtest: parse admin DSN (QUAVON_TEST_DATABASE_URL): %v", err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: PostgreSQL at %s:%d is unreachable; start it or set QUAVON_TEST_DATABASE_URL: %v",
			cfg.Host, cfg.Port, err)
	}
	return conn
}

// drop removes the database (WITH (FORCE) terminates its connections
// first) and then its owner, the role of the same name.
func drop(t testing.TB, admin, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn := connect(ctx, t, admin)
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
		return
	}
	if _, err := conn.Exec(ctx, "DROP ROLE IF EXISTS "+name); err != nil {
		t.Errorf("pgtest: drop role %s: %v", name, err)
	}
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return hex.EncodeToString(b)
}
