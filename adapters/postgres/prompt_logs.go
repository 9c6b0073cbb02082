package postgres

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// promptLogRow is a row of prompt_logs.
type promptLogRow struct {
	bun.BaseModel `bun:"table:prompt_logs,alias:pl"`

	ID        string    `bun:"id,pk,type:uuid"`
	TenantID  string    `bun:"tenant_id,type:uuid"`
	ReviewID  string    `bun:"review_id,type:uuid"`
	Step      string    `bun:"step"`
	Turn      int       `bun:"turn"`
	Sealed    []byte    `bun:"sealed"`
	CreatedAt time.Time `bun:"created_at"`
	ExpiresAt time.Time `bun:"expires_at"`
}

// promptLogRepo implements [ports.PromptLogRepo] inside one tenant
// transaction.
type promptLogRepo struct{ t *tenantTx }

// Insert stores l; a review that is missing or another tenant's is
// [ports.ErrNotFound].
func (r promptLogRepo) Insert(ctx context.Context, l ports.PromptLog) error {
	if !isUUID(l.ReviewID) {
		return fmt.Errorf("postgres: insert prompt log: review: %w", ports.ErrNotFound)
	}
	row := promptLogRow{TenantID: r.t.tenantID, ReviewID: l.ReviewID, Step: l.Step, Turn: l.Turn,
		Sealed: l.Sealed, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt}
	err := inSavepoint(ctx, r.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&row).ExcludeColumn("id").Returning("NULL").Exec(ctx)
		return err
	})
	if code, _ := pgError(err); code == codeForeignKeyViolation {
		return fmt.Errorf("postgres: insert prompt log: review: %w", ports.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("postgres: insert prompt log: %w", err)
	}
	return nil
}

func (r promptLogRepo) List(ctx context.Context, reviewID string, now time.Time) ([]ports.PromptLog, error) {
	if !isUUID(reviewID) {
		return []ports.PromptLog{}, nil
	}
	var rows []promptLogRow
	err := r.t.db.NewSelect().Model(&rows).
		Where("pl.tenant_id = ?", r.t.tenantID).Where("pl.review_id = ?", reviewID).Where("pl.expires_at > ?", now).
		OrderExpr("pl.seq").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: list prompt logs: %w", err)
	}
	out := make([]ports.PromptLog, 0, len(rows))
	for _, row := range rows {
		out = append(out, ports.PromptLog{ReviewID: row.ReviewID, Step: row.Step, Turn: row.Turn,
			Sealed: row.Sealed, CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt})
	}
	return out, nil
}

func (r promptLogRepo) DeleteAll(ctx context.Context) (int64, error) {
	res, err := r.t.db.NewDelete().Table("prompt_logs").Where("tenant_id = ?", r.t.tenantID).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: delete prompt logs: %w", err)
	}
	return rowsAffected(res)
}

// PromptLogRotator implements [ports.PromptLogRotator] on
// [DB.WithSystem], across all tenants. It is safe for concurrent use.
type PromptLogRotator struct{ db *DB }

var _ ports.PromptLogRotator = (*PromptLogRotator)(nil)

// NewPromptLogRotator returns the prompt-log rotator of db.
func NewPromptLogRotator(db *DB) *PromptLogRotator { return &PromptLogRotator{db: db} }

// Batch returns up to limit prompt logs whose id is greater than after
// ("" starts at the beginning), in id order.
func (r *PromptLogRotator) Batch(ctx context.Context, after string, limit int) ([]ports.SealedPromptLog, error) {
	if after != "" && !isUUID(after) {
		return nil, fmt.Errorf("postgres: prompt log batch: after %q is not a UUID", after)
	}
	if limit <= 0 {
		return []ports.SealedPromptLog{}, nil
	}
	after = cmp.Or(after, "00000000-0000-0000-0000-000000000000")
	var rows []struct {
		ID       string `bun:"id"`
		ReviewID string `bun:"review_id"`
		Sealed   []byte `bun:"sealed"`
	}
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw(`SELECT id::text AS id, review_id::text AS review_id, sealed FROM prompt_logs
			WHERE id > ?::uuid ORDER BY id LIMIT ?`, after, limit).Scan(ctx, &rows)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: prompt log batch: %w", err)
	}
	out := make([]ports.SealedPromptLog, 0, len(rows))
	for _, row := range rows {
		out = append(out, ports.SealedPromptLog{ID: row.ID, ReviewID: row.ReviewID, Sealed: row.Sealed})
	}
	return out, nil
}

// Replace writes sealed only if the stored log is still old byte for byte.
func (r *PromptLogRotator) Replace(ctx context.Context, id string, old, sealed []byte) (bool, error) {
	if !isUUID(id) || old == nil || sealed == nil {
		return false, fmt.Errorf("postgres: replace prompt log: id and both ciphertexts are required")
	}
	var n int64
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("UPDATE prompt_logs SET sealed = ? WHERE id = ? AND sealed = ?", sealed, id, old).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = rowsAffected(res)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: replace prompt log: %w", err)
	}
	return n == 1, nil
}
