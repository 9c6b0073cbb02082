package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun/migrate"

	"github.com/codelotse/codelotse/migrations"
)

// migrateLockKey is the pg_advisory_lock key that serialises migrations of
// one database (advisory locks are per database).
const migrateLockKey int64 = 0x636f64656c6f7473 // "codelots"

// Migrate applies the pending migrations and returns their names
// (version_name), oldest first; none when the database is up to date.
// River's own migrations (the job queue's tables) are applied first, in
// the same lock, and are not listed.
//
// Concurrent callers, in this process or another, wait for each other on a
// session advisory lock held on a separate connection, so the pool may be
// as small as one connection. A migration is recorded as applied only after
// it succeeded.
func (db *DB) Migrate(ctx context.Context) (applied []string, err error) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: connect: %w", err)
	}
	// Closing the session releases the advisory lock.
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLockKey); err != nil {
		return nil, fmt.Errorf("postgres: migrate: lock: %w", err)
	}
	// The CodeLotse migrations grant on River's tables: River goes first.
	if err := db.migrateRiver(ctx); err != nil {
		return nil, err
	}

	m := migrate.NewMigrator(db.bun, migrations.New(), migrate.WithMarkAppliedOnSuccess(true))
	if err := m.Init(ctx); err != nil {
		return nil, fmt.Errorf("postgres: migrate: init: %w", err)
	}
	group, err := m.Migrate(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: migrate: %w", err)
	}
	for _, mig := range group.Migrations {
		applied = append(applied, mig.String())
	}
	return applied, nil
}
