package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
)

// callRow is a row of mcp_tool_calls: counts, sizes, a duration, an
// argument hash and the number of invisible characters removed; the table has no column for arguments or output (MC12).
type callRow struct {
	bun.BaseModel `bun:"table:mcp_tool_calls,alias:c"`

	TenantID      string    `bun:"tenant_id,type:uuid"`
	ServerID      string    `bun:"server_id,type:uuid"`
	ReviewID      string    `bun:"review_id,type:uuid,nullzero"`
	Tool          string    `bun:"tool"`
	Status        string    `bun:"status"`
	DurationMS    int64     `bun:"duration_ms"`
	RequestBytes  int       `bun:"request_bytes"`
	ResponseBytes int       `bun:"response_bytes"`
	ArgumentsHash string    `bun:"arguments_hash"`
	Removed       int       `bun:"removed_characters"`
	CreatedAt     time.Time `bun:"created_at,nullzero"`
}

// callLog implements [ports.CallLog] inside one tenant transaction.
type callLog struct{ t *tenantTx }

// Record stores c; a zero CreatedAt is the transaction's time.
func (l callLog) Record(ctx context.Context, c ports.ToolCall) error {
	row := callRow{
		TenantID: l.t.tenantID, ServerID: c.ServerID, ReviewID: c.ReviewID, Tool: c.Tool, Status: string(c.Status),
		DurationMS: c.Duration.Milliseconds(), RequestBytes: c.RequestBytes, ResponseBytes: c.ResponseBytes,
		ArgumentsHash: c.ArgumentsHash, Removed: c.RemovedCharacters, CreatedAt: c.CreatedAt,
	}
	if _, err := l.t.db.NewInsert().Model(&row).Returning("created_at").Exec(ctx); err != nil {
		return fmt.Errorf("postgres: record tool call: %w", err)
	}
	return l.t.streamed(ctx, ports.OutboxCall, row.CreatedAt, callData{
		ServerID: row.ServerID, ReviewID: row.ReviewID, Tool: row.Tool, Status: row.Status, DurationMS: row.DurationMS,
		RequestBytes: row.RequestBytes, ResponseBytes: row.ResponseBytes, ArgumentsHash: row.ArgumentsHash,
		Removed: row.Removed, CreatedAt: row.CreatedAt,
	})
}

// Recent returns at most limit records of a server, newest first; none
// for an id that is not a UUID.
func (l callLog) Recent(ctx context.Context, serverID string, limit int) ([]ports.ToolCall, error) {
	if !isUUID(serverID) || limit <= 0 {
		return []ports.ToolCall{}, nil
	}
	var rows []callRow
	err := l.t.db.NewSelect().Model(&rows).
		Where("c.tenant_id = ? AND c.server_id = ?", l.t.tenantID, serverID).
		OrderExpr("c.created_at DESC, c.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent tool calls: %w", err)
	}
	return callsToPort(rows), nil
}

// ForReview returns at most limit records of a review run, oldest first;
// none for an id that is not a UUID.
func (l callLog) ForReview(ctx context.Context, reviewID string, limit int) ([]ports.ToolCall, error) {
	if !isUUID(reviewID) || limit <= 0 {
		return []ports.ToolCall{}, nil
	}
	var rows []callRow
	err := l.t.db.NewSelect().Model(&rows).
		Where("c.tenant_id = ? AND c.review_id = ?", l.t.tenantID, reviewID).
		OrderExpr("c.created_at, c.id").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: tool calls of a review: %w", err)
	}
	return callsToPort(rows), nil
}

func callsToPort(rows []callRow) []ports.ToolCall {
	out := make([]ports.ToolCall, 0, len(rows))
	for _, r := range rows {
		out = append(out, ports.ToolCall{
			ServerID: r.ServerID, ReviewID: r.ReviewID, Tool: r.Tool, Status: review.CallStatus(r.Status),
			Duration: time.Duration(r.DurationMS) * time.Millisecond, RequestBytes: r.RequestBytes,
			ResponseBytes: r.ResponseBytes, ArgumentsHash: r.ArgumentsHash, RemovedCharacters: r.Removed, CreatedAt: r.CreatedAt,
		})
	}
	return out
}

// ReviewUsage sums a review's call records (see [ports.ReviewUsage]).
func (l callLog) ReviewUsage(ctx context.Context, reviewID string) (ports.ReviewUsage, error) {
	var u ports.ReviewUsage
	if !isUUID(reviewID) {
		return u, nil
	}
	err := l.t.db.NewRaw(`SELECT
		count(*) FILTER (WHERE status <> 'budget_exhausted' AND arguments_hash <> ''),
		count(*) FILTER (WHERE status IN ('ok', 'error', 'too_large', 'unavailable')),
		coalesce(sum(CASE WHEN status IN ('ok', 'error') THEN least(response_bytes, ?)
		                  WHEN status = 'too_large' THEN ? ELSE 0 END), 0),
		count(*) FILTER (WHERE status = 'blocked')
		FROM mcp_tool_calls WHERE tenant_id = ? AND review_id = ?`,
		limits.CallReservation, limits.CallReservation, l.t.tenantID, reviewID).
		Scan(ctx, &u.Reserved, &u.Sent, &u.Bytes, &u.Blocked)
	if err != nil {
		return u, fmt.Errorf("postgres: review usage: %w", err)
	}
	return u, nil
}
