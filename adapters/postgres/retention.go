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

// expiredQueries select, per table, the ids of rows expired at $1 (the
// caller's clock), at most $2, locking them and skipping rows locked by
// others. A row is expired when it is older than its tenant's
// retention_days; a prompt log also when it is past its expires_at; a
// review run only when it is done or failed.
var expiredQueries = map[string]string{
	ports.RetainPromptLogs: `SELECT x.id FROM prompt_logs x JOIN tenants t ON t.id = x.tenant_id
		WHERE x.expires_at <= ?0 OR x.created_at < ?0::timestamptz - make_interval(days => t.retention_days)
		LIMIT ?1 FOR UPDATE OF x SKIP LOCKED`,
	ports.RetainToolCalls: `SELECT x.id FROM mcp_tool_calls x JOIN tenants t ON t.id = x.tenant_id
		WHERE x.created_at < ?0::timestamptz - make_interval(days => t.retention_days)
		LIMIT ?1 FOR UPDATE OF x SKIP LOCKED`,
	ports.RetainAuditLog: `SELECT x.id FROM audit_events x JOIN tenants t ON t.id = x.tenant_id
		WHERE x.at < ?0::timestamptz - make_interval(days => t.retention_days)
		LIMIT ?1 FOR UPDATE OF x SKIP LOCKED`,
	ports.RetainReviews: `SELECT x.id FROM review_runs x JOIN tenants t ON t.id = x.tenant_id
		WHERE x.created_at < ?0::timestamptz - make_interval(days => t.retention_days)
		  AND x.status IN ('done', 'failed')
		LIMIT ?1 FOR UPDATE OF x SKIP LOCKED`,
}

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
		res, err := tx.NewRaw("DELETE FROM "+table+" WHERE id IN ("+sel+")", now, limit).Exec(ctx)
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
