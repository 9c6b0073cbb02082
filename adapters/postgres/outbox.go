package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// StreamAudit turns the audit stream's outbox on: from then on every
// audit event and call record a tenant transaction stores is also written
// to audit_outbox in that transaction (QUAVON_AUDIT_WEBHOOK_URL is set).
// Call it before the stores are used.
func (db *DB) StreamAudit() { db.streamAudit = true }

// auditData is the data of an audit event's CloudEvent: the event as
// GET /v1/audit shows it.
type auditData struct {
	Action  string          `json:"action"`
	Actor   string          `json:"actor"`
	Target  string          `json:"target"`
	At      time.Time       `json:"at"`
	Details json.RawMessage `json:"details"`
}

// callData is the data of a call record's CloudEvent: the record as
// stored, without arguments or output (MC12).
type callData struct {
	ServerID      string    `json:"serverId"`
	ReviewID      string    `json:"reviewId,omitempty"`
	Tool          string    `json:"tool"`
	Status        string    `json:"status"`
	DurationMS    int64     `json:"durationMs"`
	RequestBytes  int       `json:"requestBytes"`
	ResponseBytes int       `json:"responseBytes"`
	ArgumentsHash string    `json:"argumentsHash"`
	Removed       int       `json:"removedCharacters"`
	CreatedAt     time.Time `json:"createdAt"`
}

// outboxRow is a row of audit_outbox.
type outboxRow struct {
	bun.BaseModel `bun:"table:audit_outbox,alias:o"`

	ID            string          `bun:"id,pk,type:uuid,nullzero"`
	Seq           int64           `bun:"seq"`
	TenantID      string          `bun:"tenant_id,type:uuid"`
	Type          string          `bun:"type"`
	OccurredAt    time.Time       `bun:"occurred_at"`
	Data          json.RawMessage `bun:"data,type:jsonb"`
	Attempts      int             `bun:"attempts"`
	NextAttemptAt time.Time       `bun:"next_attempt_at,nullzero"`
}

// streamed writes data to the outbox in the tenant's transaction when the
// stream is on; at is the stored row's time.
func (t *tenantTx) streamed(ctx context.Context, typ string, at time.Time, data any) error {
	if !t.stream {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("postgres: audit stream outbox: %w", err)
	}
	_, err = t.db.NewInsert().Model(&outboxRow{TenantID: t.tenantID, Type: typ, OccurredAt: at, Data: b}).
		ExcludeColumn("seq", "attempts", "next_attempt_at").Returning("NULL").Exec(ctx)
	if err != nil {
		return fmt.Errorf("postgres: audit stream outbox: %w", err)
	}
	return nil
}

// AuditOutbox implements [ports.AuditOutbox] on [DB.WithSystem]: the
// stream spans tenants. It is safe for concurrent use.
type AuditOutbox struct{ db *DB }

var _ ports.AuditOutbox = (*AuditOutbox)(nil)

// NewAuditOutbox returns the outbox of db.
func NewAuditOutbox(db *DB) *AuditOutbox { return &AuditOutbox{db: db} }

// outboxLock is the first key of the advisory lock a drain holds on its
// tenant (the second is the tenant id's hash): two passes never send one
// tenant's entries at once, so they leave in order.
const outboxLock = 0x0a0d17

// maxLastError bounds the error text kept on an entry.
const maxLastError = 200

// DueTenants returns tenants whose first entry is due at now, oldest
// first entry first.
func (o *AuditOutbox) DueTenants(ctx context.Context, now time.Time, limit int) ([]string, error) {
	var out []string
	err := o.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		out = nil
		return tx.NewRaw(`SELECT h.tenant_id::text FROM (
			    SELECT DISTINCT ON (tenant_id) tenant_id, seq, next_attempt_at FROM audit_outbox
			    ORDER BY tenant_id, seq) h
			WHERE h.next_attempt_at IS NULL OR h.next_attempt_at <= ? ORDER BY h.seq LIMIT ?`, now, limit).Scan(ctx, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: audit stream tenants: %w", err)
	}
	return out, nil
}

// Drain implements [ports.AuditOutbox.Drain] in one transaction that
// holds the tenant's advisory lock while it sends. A sent entry is
// deleted when the transaction commits: an entry sent by a pass that then
// fails to commit is sent again (at least once).
func (o *AuditOutbox) Drain(ctx context.Context, tenantID string, d ports.OutboxDrain) (int, error) {
	if !isUUID(tenantID) || d.Limit <= 0 {
		return 0, nil
	}
	var (
		sent    int
		sendErr error
	)
	err := o.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		sent, sendErr = 0, nil
		var locked bool
		if err := tx.QueryRowContext(ctx, `SELECT pg_try_advisory_xact_lock(?, hashtext(?))`, outboxLock, tenantID).Scan(&locked); err != nil || !locked {
			return err
		}
		var rows []outboxRow
		if err := tx.NewSelect().Model(&rows).Where("o.tenant_id = ?", tenantID).
			OrderExpr("o.seq").Limit(int64(d.Limit)).Scan(ctx); err != nil {
			return err
		}
		if len(rows) == 0 || rows[0].NextAttemptAt.After(d.Now) {
			return nil
		}
		var done []int64
		for _, r := range rows {
			e := ports.OutboxEntry{Seq: r.Seq, ID: r.ID, TenantID: r.TenantID, Type: r.Type, At: r.OccurredAt, Data: r.Data, Attempts: r.Attempts}
			if sendErr = d.Send(ctx, e); sendErr != nil {
				msg := sendErr.Error()
				if len(msg) > maxLastError {
					msg = msg[:maxLastError]
				}
				if _, err := tx.NewUpdate().Model((*outboxRow)(nil)).Where("tenant_id = ? AND seq = ?", tenantID, r.Seq).
					Set("attempts = ?", r.Attempts+1).Set("next_attempt_at = ?", d.RetryAt(r.Attempts+1)).
					Set("last_error = ?", msg).Exec(ctx); err != nil {
					return err
				}
				break
			}
			done = append(done, r.Seq)
		}
		sent = len(done)
		if len(done) == 0 {
			return nil
		}
		_, err := tx.NewDelete().Model((*outboxRow)(nil)).Where("tenant_id = ? AND seq IN (?)", tenantID, bun.In(done)).Exec(ctx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: audit stream drain: %w", err)
	}
	return sent, sendErr
}

// Backlog counts the waiting entries and finds the oldest's time.
func (o *AuditOutbox) Backlog(ctx context.Context) (int64, time.Time, error) {
	var (
		n      int64
		oldest sql.NullTime
	)
	err := o.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*), min(occurred_at) FROM audit_outbox`).Scan(&n, &oldest)
	})
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("postgres: audit stream backlog: %w", err)
	}
	return n, oldest.Time, nil
}
