package operations

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/ports"
)

// RetentionBatch is how many rows one retention transaction deletes at
// most: short transactions, short locks, bounded bursts of WAL.
const RetentionBatch = 5000

// RetentionJob deletes what the tenants' settings no longer keep: review
// runs, tool-call records and audit events older than the tenant's
// retention days, and prompt logs past their TTL (or that old). The
// worker runs it periodically on one replica.
type RetentionJob struct {
	store   ports.Retention
	metrics ports.RetentionMetrics
	clock   ports.Clock
	// BatchSize overrides [RetentionBatch] when positive (tests).
	BatchSize int
}

// NewRetentionJob returns the job.
func NewRetentionJob(store ports.Retention, metrics ports.RetentionMetrics, clock ports.Clock) *RetentionJob {
	return &RetentionJob{store: store, metrics: metrics, clock: clock}
}

// Run deletes, table after table, batch after batch, until a batch comes
// back short; each batch of a table goes on where the one before it
// stopped (the store's cursor), and each run starts every table at the
// beginning. The time is read once, so one run judges every row by the
// same clock. A cancelled ctx stops it between batches, keeping what was
// deleted; the counts so far are returned with the error and recorded in
// the metrics either way.
func (j *RetentionJob) Run(ctx context.Context) (map[string]int64, error) {
	now := j.clock.Now()
	batch := RetentionBatch
	if j.BatchSize > 0 {
		batch = j.BatchSize
	}
	res := map[string]int64{}
	defer func() {
		for _, table := range ports.RetainedTables {
			j.metrics.RetentionDeleted(table, res[table])
		}
	}()
	for _, table := range ports.RetainedTables {
		var at ports.RetentionCursor
		for {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			n, next, err := j.store.DeleteExpired(ctx, table, now, at, batch)
			res[table] += n
			at = next
			if err != nil {
				return res, fmt.Errorf("retention of %s: %w", table, err)
			}
			if n < int64(batch) {
				break
			}
		}
	}
	return res, nil
}
