package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// MaxAuditEvents caps [ports.AuditLog.Recent], whatever limit is asked for.
const MaxAuditEvents = 1000

// auditRow is a row of audit_events.
type auditRow struct {
	bun.BaseModel `bun:"table:audit_events,alias:a"`

	TenantID string          `bun:"tenant_id,type:uuid"`
	Action   string          `bun:"action"`
	Actor    string          `bun:"actor"`
	Target   string          `bun:"target"`
	Details  json.RawMessage `bun:"details,type:jsonb"`
	At       time.Time       `bun:"at,nullzero"`
}

// auditLog implements [ports.AuditLog] inside one tenant transaction.
type auditLog struct{ t *tenantTx }

// Append stores e; a zero At is the transaction's time (now()).
func (l auditLog) Append(ctx context.Context, e ports.AuditEvent) error {
	details := json.RawMessage("{}")
	if e.Details != nil {
		b, err := json.Marshal(e.Details)
		if err != nil {
			return fmt.Errorf("postgres: append audit event: details: %w", err)
		}
		details = b
	}
	row := auditRow{TenantID: l.t.tenantID, Action: e.Action, Actor: e.Actor, Target: e.Target, Details: details, At: e.At}
	if _, err := l.t.db.NewInsert().Model(&row).Returning("at").Exec(ctx); err != nil {
		return fmt.Errorf("postgres: append audit event: %w", err)
	}
	return l.t.streamed(ctx, ports.OutboxAudit, row.At, auditData{Action: row.Action, Actor: row.Actor, Target: row.Target, At: row.At, Details: row.Details})
}

// Recent returns at most limit events (capped at [MaxAuditEvents]; none
// for limit ≤ 0), newest first; events of equal time in insertion order
// reversed.
func (l auditLog) Recent(ctx context.Context, limit int) ([]ports.AuditEvent, error) {
	if limit <= 0 {
		return []ports.AuditEvent{}, nil
	}
	limit = min(limit, MaxAuditEvents)
	var rows []auditRow
	err := l.t.db.NewSelect().Model(&rows).Where("a.tenant_id = ?", l.t.tenantID).
		OrderExpr("a.at DESC, a.seq DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: recent audit events: %w", err)
	}
	out := make([]ports.AuditEvent, 0, len(rows))
	for _, r := range rows {
		var details map[string]any
		if err := json.Unmarshal(r.Details, &details); err != nil {
			return nil, fmt.Errorf("postgres: recent audit events: details: %w", err)
		}
		out = append(out, ports.AuditEvent{Action: r.Action, Actor: r.Actor, Target: r.Target, At: r.At, Details: details})
	}
	return out, nil
}
