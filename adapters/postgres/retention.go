package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// Retention implements [ports.Retention] on [DB.WithSystem]: the job
// spans tenants. It is safe for concurrent use.
type Retention struct{ db *DB }

var _ ports.Retention = (*Retention)(nil)

// NewRetention returns the retention store of db.
func NewRetention(db *DB) *Retention { return &Retention{db: db} }

// The retention batches. Each selects the ids of at most ?3 rows of
// one table that are expired at ?0 (the run's clock), locking them and
// skipping rows locked by others, and deletes them. A row is expired when
// it is older than its tenant's retention_days; a prompt log also when it
// is past its expires_at; a review run only when it is done or failed.
//
// A batch costs what it deletes, not the size of the table. Each tenant's
// cutoff is computed once per batch (the materialized CTE cutoffs), and
// for each tenant, in id order from the cursor's, a LATERAL subquery reads
// that tenant's rows in the order of its (tenant_id, time) index, from
// the cursor's time for the cursor's tenant and from the oldest for the
// others, and stops at the cutoff or the batch size. So a run with
// nothing expired probes each tenant's index once per table, and a
// backlog never reads again the index entries of rows deleted by the
// batches before (the entries stay until VACUUM).
//
// Cutoff and start reach the subquery as values of the outer row, never
// as an expression over a column of the table: under forced row-level
// security (which applies to a table's owner that is not a superuser)
// PostgreSQL uses a condition as an index condition only when every
// function it applies to a column is leakproof, and timestamptz minus
// interval is not, so the former
// `x.created_at < now - make_interval(days => t.retention_days)` made
// every batch read the whole table.
type retentionQuery struct {
	table, timeColumn, extra string
}

var retentionQueries = map[string]retentionQuery{
	ports.RetainPromptLogs: {"prompt_logs", "created_at", ""},
	ports.RetainToolCalls:  {"mcp_tool_calls", "created_at", ""},
	ports.RetainAuditLog:   {"audit_events", "at", ""},
	ports.RetainOutbox:     {"audit_outbox", "occurred_at", ""},
	ports.RetainReviews:    {"review_runs", "created_at", "AND x.status IN ('done', 'failed')"},
}

// byAge is the batch of rows expired at ?0 by their tenant's retention,
// at most ?3, from the cursor (tenant ?1, time ?2) on, returning their
// tenant and time.
func (q retentionQuery) byAge() string {
	return `WITH cutoffs AS MATERIALIZED (
		    SELECT id, ?0::timestamptz - make_interval(days => retention_days) AS cutoff,
		           CASE WHEN id = ?1::uuid THEN ?2::timestamptz ELSE '-infinity' END AS start
		    FROM tenants WHERE id >= ?1::uuid ORDER BY id),
		doomed AS (
		    SELECT o.id, o.tenant_id, o.t FROM cutoffs c CROSS JOIN LATERAL (
		        SELECT x.id, x.tenant_id, x.` + q.timeColumn + ` AS t FROM ` + q.table + ` x
		        WHERE x.tenant_id = c.id AND x.` + q.timeColumn + ` >= c.start AND x.` + q.timeColumn + ` < c.cutoff ` + q.extra + `
		        ORDER BY x.` + q.timeColumn + ` LIMIT ?3 FOR UPDATE OF x SKIP LOCKED) o
		    LIMIT ?3)
		DELETE FROM ` + q.table + ` x USING doomed d WHERE x.id = d.id RETURNING d.tenant_id, d.t`
}

// promptLogsPastTTL is the batch of at most ?3 prompt logs past their
// expires_at at ?0, oldest first through the (expires_at) index.
const promptLogsPastTTL = `DELETE FROM prompt_logs WHERE id IN (
		SELECT x.id FROM prompt_logs x WHERE x.expires_at <= ?0
		ORDER BY x.expires_at LIMIT ?3 FOR UPDATE OF x SKIP LOCKED)`

// zeroTenant is below every tenant id: the cursor of a table's first batch.
const zeroTenant = "00000000-0000-0000-0000-000000000000"

// DeleteExpired deletes one batch of expired rows of table in its own
// transaction, so no lock is held longer than one batch. Deleting a review
// run also deletes the call records and prompt logs that point at it (the
// foreign keys cascade); the job deletes those tables first. For prompt
// logs the batch deletes those past their TTL first and fills the rest of
// the batch with those past their tenant's retention.
func (r *Retention) DeleteExpired(ctx context.Context, table string, now time.Time, after ports.RetentionCursor, limit int) (int64, ports.RetentionCursor, error) {
	q, ok := retentionQueries[table]
	if !ok {
		return 0, after, fmt.Errorf("postgres: retention: unknown table %q", table)
	}
	if limit <= 0 {
		return 0, after, nil
	}
	cursor := after
	if cursor.TenantID == "" {
		cursor = ports.RetentionCursor{TenantID: zeroTenant, At: time.Time{}}
	} else if !isUUID(cursor.TenantID) {
		return 0, after, fmt.Errorf("postgres: retention: cursor tenant %q is not a UUID", cursor.TenantID)
	}
	start := any(cursor.At)
	if cursor.At.IsZero() {
		start = "-infinity"
	}
	var n int64
	next := after
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		n, next = 0, after
		left := limit
		if table == ports.RetainPromptLogs {
			res, err := tx.NewRaw(promptLogsPastTTL, now, nil, nil, left).Exec(ctx)
			if err != nil {
				return err
			}
			if n, err = rowsAffected(res); err != nil {
				return err
			}
			left -= int(n)
			if left == 0 {
				return nil
			}
		}
		rows, err := tx.QueryContext(ctx, q.byAge(), now, cursor.TenantID, start, left)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var c ports.RetentionCursor
			if err := rows.Scan(&c.TenantID, &c.At); err != nil {
				return err
			}
			n++
			if c.TenantID > next.TenantID || (c.TenantID == next.TenantID && c.At.After(next.At)) {
				next = c
			}
		}
		return rows.Err()
	})
	if err != nil {
		return 0, after, fmt.Errorf("postgres: retention of %s: %w", table, err)
	}
	return n, next, nil
}
