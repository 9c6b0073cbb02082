// Package pgtest gives tests a fresh, migrated PostgreSQL database of their
// own, dropped when the test ends.
//
// The server is taken from QUAVON_TEST_DATABASE_URL, else
// QUAVON_DATABASE_URL, else the local development server; its role must be
// allowed to create databases. A test fails (never skips) when PostgreSQL
// is unreachable.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
// DSN. The database is dropped when the test ends.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	admin := AdminDSN()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn := connect(ctx, t, admin)
	defer conn.Close(context.WithoutCancel(ctx))

	name := "codelotse_test_" + randomHex(t)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, admin, name) })
	return WithDatabase(admin, name)
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

// drop removes the database; WITH (FORCE) terminates its connections first.
func drop(t testing.TB, admin, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn := connect(ctx, t, admin)
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		t.Errorf("pgtest: drop database %s: %v", name, err)
	}
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return hex.EncodeToString(b)
}
