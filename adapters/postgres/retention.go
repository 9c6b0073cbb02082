package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// Retention implements [ports.Retention] on [DB.WithSystem], the one job
// that spans tenants. It is safe for concurrent use.
type Retention struct{ db *DB }

var _ ports.Retention = (*Retention)(nil)

// NewRetention returns the retention store of db.
func NewRetention(db *DB) *Retention { return &Retention{db: db} }

// expiredQueries select, per table, the ids of at most ?1 rows expired at
// ?0 (the run's clock), locking them and skipping rows locked by others.
// A row is expired when it is older than its tenant's retention_days; a
// prompt log also when it is past its expires_at; a review run only when
// it is done or failed.
//
// The cost is what the batch deletes, not the size of the table: each
// tenant's cutoff is computed once per batch (the materialized CTE
// cutoffs), and for each tenant a LATERAL subquery reads that tenant's
// rows in the order of its (tenant_id, time) index, from the oldest, and
// stops at the cutoff or the batch size. With nothing expired a batch is
// one index probe per tenant. The cutoff reaches the subquery as a value
// of the outer row, never as an expression over a column of the table:
// under forced row-level security (which applies to a table's owner that
// is not a superuser) the planner may use a condition as an index
// condition only when every function applied to a column in it is
// leakproof, and timestamptz minus interval is not, so the former
// `x.created_at < ?0 - make_interval(days => t.retention_days)` made every
// batch read the whole table.
var expiredQueries = map[string]string{
	ports.RetainPromptLogs: retentionCutoffs + `,
		ttl AS (SELECT x.id FROM prompt_logs x WHERE x.expires_at <= ?0
		        ORDER BY x.expires_at LIMIT ?1 FOR UPDATE OF x SKIP LOCKED),
		old AS (SELECT o.id FROM cutoffs c CROSS JOIN LATERAL (
		            SELECT x.id FROM prompt_logs x WHERE x.tenant_id = c.id AND x.created_at < c.cutoff
		            ORDER BY x.created_at LIMIT ?1 FOR UPDATE OF x SKIP LOCKED) o
		        LIMIT ?1)
		SELECT id FROM ttl UNION SELECT id FROM old LIMIT ?1`,
	ports.RetainToolCalls: retentionCutoffs + `
		SELECT o.id FROM cutoffs c CROSS JOIN LATERAL (
		    SELECT x.id FROM mcp_tool_calls x WHERE x.tenant_id = c.id AND x.created_at < c.cutoff
		    ORDER BY x.created_at LIMIT ?1 FOR UPDATE OF x SKIP LOCKED) o
		LIMIT ?1`,
	ports.RetainAuditLog: retentionCutoffs + `
		SELECT o.id FROM cutoffs c CROSS JOIN LATERAL (
		    SELECT x.id FROM audit_events x WHERE x.tenant_id = c.id AND x.at < c.cutoff
		    ORDER BY x.at LIMIT ?1 FOR UPDATE OF x SKIP LOCKED) o
		LIMIT ?1`,
	ports.RetainReviews: retentionCutoffs + `
		SELECT o.id FROM cutoffs c CROSS JOIN LATERAL (
		    SELECT x.id FROM review_runs x WHERE x.tenant_id = c.id AND x.created_at < c.cutoff
		      AND x.status IN ('done', 'failed')
		    ORDER BY x.created_at LIMIT ?1 FOR UPDATE OF x SKIP LOCKED) o
		LIMIT ?1`,
}

// retentionCutoffs is every tenant's cutoff at ?0, computed once.
const retentionCutoffs = `WITH cutoffs AS MATERIALIZED (
		SELECT id, ?0::timestamptz - make_interval(days => retention_days) AS cutoff FROM tenants)`

// DeleteExpired deletes one batch of expired rows of table in its own
// transaction, so no lock is held longer than one batch. Deleting a review
// run also deletes the call records and prompt logs that point at it (the
// foreign keys cascade); the job deletes those tables first.
func (r *Retention) DeleteExpired(ctx context.Context, table string, now time.Time, limit int) (int64, error) {
	sel, ok := expiredQueries[table]
	if !ok {
		return 0, fmt.Errorf("postgres: retention: unknown table %q", table)
	}
	if limit <= 0 {
		return 0, nil
	}
	var n int64
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		// table is one of the map's keys, never caller text.
		res, err := tx.NewRaw(deleteExpired(table, sel), now, limit).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = rowsAffected(res)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: retention of %s: %w", table, err)
	}
	return n, nil
}

// deleteExpired is the statement that deletes the rows sel selects: the
// selection's CTEs lead, and the rows are deleted through their primary
// key.
func deleteExpired(table, sel string) string {
	return "WITH doomed AS (" + sel + ")\nDELETE FROM " + table + " WHERE id IN (SELECT id FROM doomed)"
}
