package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// RecheckCandidates implements [ports.RecheckCandidates] on
// [DB.WithSystem]: the recheck between reviews spans tenants. It is safe
// for concurrent use.
type RecheckCandidates struct{ db *DB }

var _ ports.RecheckCandidates = (*RecheckCandidates)(nil)

// NewRecheckCandidates returns the recheck's query of db.
func NewRecheckCandidates(db *DB) *RecheckCandidates { return &RecheckCandidates{db: db} }

// recheckCandidates are the enabled servers with at least one pinned
// tool, of every tenant (at most limits.MaxServersPerTenant each).
const recheckCandidates = `SELECT tenant_id::text, id::text, last_discovery_at, coalesce(list_ttl_ms, 0) FROM mcp_servers
	WHERE enabled AND jsonb_array_length(tools) > 0 ORDER BY tenant_id, id`

// RecheckCandidates lists them in one short read-only transaction.
func (r *RecheckCandidates) RecheckCandidates(ctx context.Context) ([]ports.RecheckCandidate, error) {
	var out []ports.RecheckCandidate
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, recheckCandidates)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				c     ports.RecheckCandidate
				last  sql.NullTime
				ttlMS int64
			)
			if err := rows.Scan(&c.TenantID, &c.ServerID, &last, &ttlMS); err != nil {
				return err
			}
			c.ListTTL = time.Duration(ttlMS) * time.Millisecond
			if last.Valid {
				c.LastDiscoveryAt = last.Time
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: recheck candidates: %w", err)
	}
	return out, nil
}
