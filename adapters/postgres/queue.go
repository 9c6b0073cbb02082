package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/codelotse/codelotse/ports"
)

// The review job is [ports.ReviewJob]: the one type this adapter enqueues
// and the worker adapter (adapters/worker) runs.
const (
	// ReviewJobKind is the River job kind of a review run.
	ReviewJobKind = ports.ReviewJobKind
	// ReviewJobMaxAttempts is the max_attempts of a review job. The worker
	// runs the review in the first attempts (three by default) and spends
	// the rest marking the run failed, so a run whose attempts were all
	// lost (a killed worker, a database outage) still ends as failed
	// rather than running forever.
	ReviewJobMaxAttempts = 10
)

// inserter is an insert-only River client on the database/sql driver.
// Insert-only clients are never started and hold no connection: InsertTx
// runs on the caller's transaction, so one client serves every [DB].
var inserter = sync.OnceValues(func() (*river.Client[*sql.Tx], error) {
	return river.NewClient(riverdatabasesql.New(nil), &river.Config{
		// Insert errors are returned to the caller; River's own log line
		// would only repeat them outside the service's JSON log.
		Logger: slog.New(slog.DiscardHandler),
	})
})

// enqueueReview inserts the review job on tx, the tenant transaction that
// stored the run, so both commit or neither. It runs as codelotse_tenant,
// which the migrations allow to insert river_job rows of its own tenant
// only.
func enqueueReview(ctx context.Context, tx *sql.Tx, tenantID, reviewID string) error {
	client, err := inserter()
	if err != nil {
		return fmt.Errorf("postgres: job queue client: %w", err)
	}
	_, err = client.InsertTx(ctx, tx, ports.ReviewJob{TenantID: tenantID, ReviewID: reviewID},
		&river.InsertOpts{MaxAttempts: ReviewJobMaxAttempts})
	if err != nil {
		return fmt.Errorf("postgres: enqueue review: %w", err)
	}
	return nil
}

// migrateRiver applies River's own migrations (river_job, river_queue,
// river_leader, …) to the current schema. It is idempotent, and is called
// by [DB.Migrate] under its advisory lock, before the CodeLotse migrations,
// which grant on river_job.
func (db *DB) migrateRiver(ctx context.Context) error {
	m, err := rivermigrate.New(riverpgxv5.New(db.pool), &rivermigrate.Config{
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return fmt.Errorf("postgres: migrate job queue: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("postgres: migrate job queue: %w", err)
	}
	return nil
}
