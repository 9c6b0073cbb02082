package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/ports"
)

// repositoryRow is a row of repositories.
type repositoryRow struct {
	bun.BaseModel `bun:"table:repositories,alias:r"`

	ID         string    `bun:"id,pk,type:uuid"`
	TenantID   string    `bun:"tenant_id,type:uuid"`
	Name       string    `bun:"name"`
	Visibility string    `bun:"visibility"`
	CreatedAt  time.Time `bun:"created_at,nullzero"`
	UpdatedAt  time.Time `bun:"updated_at,nullzero"`
}

func (r repositoryRow) toPort() (ports.Repository, error) {
	v, err := policy.ParseVisibility(r.Visibility)
	if err != nil {
		return ports.Repository{}, fmt.Errorf("repository %s: %w", r.ID, err)
	}
	return ports.Repository{ID: r.ID, Name: r.Name, Visibility: v}, nil
}

// repositoryRepo implements [ports.RepositoryRepo] inside one tenant
// transaction.
type repositoryRepo struct{ t *tenantTx }

// Insert stores r; its ID is chosen by the caller and must be a UUID.
func (rr repositoryRepo) Insert(ctx context.Context, r ports.Repository) error {
	if !isUUID(r.ID) {
		return fmt.Errorf("postgres: insert repository: id %q is not a UUID", r.ID)
	}
	if r.Visibility.IsZero() {
		return fmt.Errorf("postgres: insert repository: visibility is required")
	}
	row := repositoryRow{ID: r.ID, TenantID: rr.t.tenantID, Name: r.Name, Visibility: r.Visibility.String()}
	err := inSavepoint(ctx, rr.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&row).Returning("NULL").Exec(ctx)
		return err
	})
	if code, _ := pgError(err); code == codeUniqueViolation {
		return fmt.Errorf("postgres: insert repository: %w", ports.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("postgres: insert repository: %w", err)
	}
	return nil
}

func (rr repositoryRepo) Get(ctx context.Context, id string) (ports.Repository, error) {
	if !isUUID(id) {
		return ports.Repository{}, fmt.Errorf("postgres: get repository: %w", ports.ErrNotFound)
	}
	var row repositoryRow
	err := rr.t.db.NewSelect().Model(&row).Where("r.id = ?", id).Where("r.tenant_id = ?", rr.t.tenantID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Repository{}, fmt.Errorf("postgres: get repository: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.Repository{}, fmt.Errorf("postgres: get repository: %w", err)
	}
	return row.toPort()
}

func (rr repositoryRepo) SetVisibility(ctx context.Context, id string, v policy.Visibility) (ports.Repository, error) {
	if !isUUID(id) {
		return ports.Repository{}, fmt.Errorf("postgres: set visibility: %w", ports.ErrNotFound)
	}
	if v.IsZero() {
		return ports.Repository{}, fmt.Errorf("postgres: set visibility: visibility is required")
	}
	var row repositoryRow
	err := rr.t.db.NewUpdate().Model(&row).
		Set("visibility = ?", v.String()).Set("updated_at = now()").
		Where("r.id = ?", id).Where("r.tenant_id = ?", rr.t.tenantID).
		Returning("*").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.Repository{}, fmt.Errorf("postgres: set visibility: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.Repository{}, fmt.Errorf("postgres: set visibility: %w", err)
	}
	return row.toPort()
}

// List pages through the tenant's repositories by name (the column's
// collation, which breaks ties by bytes, so paging with after is exact).
func (rr repositoryRepo) List(ctx context.Context, after string, limit int) ([]ports.Repository, error) {
	if limit <= 0 {
		return []ports.Repository{}, nil
	}
	var rows []repositoryRow
	q := rr.t.db.NewSelect().Model(&rows).Where("r.tenant_id = ?", rr.t.tenantID)
	if after != "" {
		q = q.Where("r.name > ?", after)
	}
	if err := q.OrderExpr("r.name").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("postgres: list repositories: %w", err)
	}
	out := make([]ports.Repository, 0, len(rows))
	for _, row := range rows {
		r, err := row.toPort()
		if err != nil {
			return nil, fmt.Errorf("postgres: list repositories: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}
