package postgres

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// retentionBatch is how many tool-call records one retention transaction
// deletes at most: short transactions, short locks, bounded WAL bursts.
const retentionBatch = 5000

// DeleteExpiredToolCalls deletes the tool-call records (mcp_tool_calls)
// older than their tenant's retention_days, by the database's clock, and
// returns how many it deleted. It runs on the system path ([DB.WithSystem],
// the one job that spans tenants) in batches of a few thousand rows, each
// its own transaction, until none is left; a cancelled ctx stops it between
// batches, keeping what was deleted. Safe to run concurrently with itself
// (a row is deleted once) and with new records (never expired).
func (db *DB) DeleteExpiredToolCalls(ctx context.Context) (int64, error) {
	var total int64
	for {
		var n int64
		err := db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
			res, err := tx.ExecContext(ctx, `
				DELETE FROM mcp_tool_calls WHERE id IN (
					SELECT c.id FROM mcp_tool_calls c JOIN tenants t ON t.id = c.tenant_id
					WHERE c.created_at < now() - make_interval(days => t.retention_days)
					LIMIT ?
					FOR UPDATE OF c SKIP LOCKED)`, retentionBatch)
			if err != nil {
				return err
			}
			n, err = rowsAffected(res)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("postgres: delete expired tool calls: %w", err)
		}
		total += n
		if n < retentionBatch {
			return total, nil
		}
	}
}
