// Package postgres is the PostgreSQL adapter: a pgx pool shared with the
// job queue, bun on top of it for queries, the embedded migrations, and
// the two ways a query may run.
//
// Tenant-scoped queries run only through [DB.WithTenant]: a transaction
// that switches to the role codelotse_tenant (not superuser, no BYPASSRLS,
// owns no table) and names the tenant for the row-level security policies.
// The few global queries run through [DB.WithSystem].
package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// DB is a connection pool to the CodeLotse database. It is safe for
// concurrent use.
type DB struct {
	pool *pgxpool.Pool
	bun  *bun.DB
	// streamAudit is set by [DB.StreamAudit].
	streamAudit bool
}

// Open connects to the database named by dsn (a URL or keyword/value
// string; pgxpool options such as pool_max_conns are honoured) and pings
// it. The returned function closes the pool.
func Open(ctx context.Context, dsn string) (*DB, func(), error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: parse DSN: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: create pool: %w", err)
	}
	db := &DB{pool: pool, bun: bun.NewDB(openSQL(pool), pgdialect.New())}
	closeFn := func() {
		_ = db.bun.Close()
		pool.Close()
	}
	if err := db.Ping(ctx); err != nil {
		closeFn()
		return nil, nil, err
	}
	return db, closeFn, nil
}

// Pool returns the pgx pool, for the job queue that shares it.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// Bun returns the bun handle. It runs as the connecting role, outside
// row-level security scope: use it for migrations and tests, and
// [DB.WithTenant] or [DB.WithSystem] for everything else.
func (db *DB) Bun() *bun.DB { return db.bun }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return fmt.Errorf("postgres: ping: %w", err)
	}
	return nil
}
