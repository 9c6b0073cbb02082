package postgres_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/ports"
)

// TestALostDatabaseIsUnavailable: while the database cannot be reached,
// every way a query runs (tenant, read and system scope, the token
// lookup of every API request) fails with
// ports.ErrUnavailable, on connections that were open and on new ones;
// a caller's own cancellation is not an outage; once the database is
// back the same pool serves again.
func TestALostDatabaseIsUnavailable(t *testing.T) {
	proxy, dsn := pgtest.NewProxy(t, pgtest.DSN(t))
	ctx := context.Background()
	db, closeDB, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDB()
	const tenant = "aaaaaaaa-0000-4000-8000-0000000000aa"
	scopes := map[string]func(context.Context) error{
		"tenant": func(ctx context.Context) error {
			return db.WithTenant(ctx, tenant, func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "SELECT 1")
				return err
			})
		},
		"read": func(ctx context.Context) error {
			return db.ReadTenant(ctx, tenant, func(ctx context.Context, conn bun.IDB) error {
				var n int
				return conn.NewRaw("SELECT 1").Scan(ctx, &n)
			})
		},
		"system": func(ctx context.Context) error {
			return db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "SELECT 1")
				return err
			})
		},
		"token lookup": func(ctx context.Context) error {
			_, err := postgres.NewAccounts(db).LookupToken(ctx, make([]byte, 32))
			if errors.Is(err, ports.ErrNotFound) {
				return nil // the database answered
			}
			return err
		},
	}
	for name, run := range scopes {
		if err := run(ctx); err != nil {
			t.Fatalf("%s scope before the outage: %v", name, err)
		}
	}

	proxy.Cut()
	for round := range 2 { // the pool's open connections, then new ones
		for name, run := range scopes {
			if err := run(ctx); !errors.Is(err, ports.ErrUnavailable) {
				t.Errorf("%s scope, round %d, during the outage: %v, want ErrUnavailable", name, round, err)
			}
		}
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for name, run := range scopes {
		if err := run(canceled); err == nil || errors.Is(err, ports.ErrUnavailable) {
			t.Errorf("%s scope with a canceled context: %v, want an error that is not ErrUnavailable", name, err)
		}
	}

	proxy.Mend(t)
	start := time.Now()
	for name, run := range scopes {
		for err := run(ctx); err != nil; err = run(ctx) {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s scope 10 s after the database is back: %v", name, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("every scope served again %v after the database was back", time.Since(start))
}

// TestWhichErrorsAreAnOutage: a lost connection in every form the driver
// and the kernel give it is unavailable; an error of the query, and any
// error of a request whose own context ended, is not.
func TestWhichErrorsAreAnOutage(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("postgres: enter tenant scope: %w", refused), true},
		{"reset by peer", syscall.ECONNRESET, true},
		{"broken pipe", fmt.Errorf("write: %w", syscall.EPIPE), true},
		{"a closed pooled connection", fmt.Errorf("postgres: look up token: %w", pgconn.ErrConnClosed), true},
		{"an unexpected EOF", io.ErrUnexpectedEOF, true},
		{"database/sql's bad connection", driver.ErrBadConn, true},
		{"a connection database/sql closed", sql.ErrConnDone, true},
		{"admin shutdown (57P01)", &pgconn.PgError{Code: "57P01"}, true},
		{"crash shutdown (57P02)", &pgconn.PgError{Code: "57P02"}, true},
		{"the database is starting (57P03)", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure (08006)", &pgconn.PgError{Code: "08006"}, true},
		{"no connection could be made", &pgconn.ConnectError{}, true},
		{"a unique violation (23505)", &pgconn.PgError{Code: "23505"}, false},
		{"a syntax error (42601)", &pgconn.PgError{Code: "42601"}, false},
		{"a query canceled on request (57014)", &pgconn.PgError{Code: "57014"}, false},
		{"no rows", sql.ErrNoRows, false},
		{"not found", ports.ErrNotFound, false},
		{"the request's deadline", context.DeadlineExceeded, false},
	}
	for _, tt := range tests {
		err := postgres.Unavailable(context.Background(), tt.err)
		if got := errors.Is(err, ports.ErrUnavailable); got != tt.want {
			t.Errorf("%s: unavailable = %v, want %v", tt.name, got, tt.want)
		}
		if !errors.Is(err, tt.err) {
			t.Errorf("%s: the cause is lost: %v", tt.name, err)
		}
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := postgres.Unavailable(ended, refused); errors.Is(err, ports.ErrUnavailable) {
		t.Errorf("a refused connection after the request's context ended = %v, want not unavailable", err)
	}
}
