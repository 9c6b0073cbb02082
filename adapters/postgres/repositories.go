package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/repository"
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

// toDomain loads the row through the repository's loader: a corrupt row
// (an id or a visibility that New would refuse, a name that is not safe
// to show) is an error; a name stored before the name rule loads as
// stored.
func (r repositoryRow) toDomain() (*repository.Repository, error) {
	repo, err := repository.UnmarshalRepositoryFromDatabase(r.ID, r.Name, r.Visibility)
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", r.ID, err)
	}
	return repo, nil
}

// repositoryRepo implements [ports.RepositoryRepo] inside one tenant
// transaction.
type repositoryRepo struct{ t *tenantTx }

// Insert stores r, whose ID is chosen by the caller.
func (rr repositoryRepo) Insert(ctx context.Context, r *repository.Repository) error {
	// New checked both; the zero Repository has neither.
	if !isUUID(r.ID()) {
		return fmt.Errorf("postgres: insert repository: id %q is not a UUID", r.ID())
	}
	if r.Visibility().IsZero() {
		return fmt.Errorf("postgres: insert repository: visibility is required")
	}
	row := repositoryRow{ID: r.ID(), TenantID: rr.t.tenantID, Name: r.Name(), Visibility: r.Visibility().String()}
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

func (rr repositoryRepo) selectRow(ctx context.Context, id string, forUpdate bool) (repositoryRow, error) {
	var row repositoryRow
	if !isUUID(id) {
		return row, ports.ErrNotFound
	}
	q := rr.t.db.NewSelect().Model(&row).Where("r.id = ?", id).Where("r.tenant_id = ?", rr.t.tenantID)
	if forUpdate {
		q = q.For("UPDATE")
	}
	err := q.Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return row, ports.ErrNotFound
	}
	return row, err
}

func (rr repositoryRepo) Get(ctx context.Context, id string) (*repository.Repository, error) {
	row, err := rr.selectRow(ctx, id, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: get repository: %w", err)
	}
	r, err := row.toDomain()
	if err != nil {
		return nil, fmt.Errorf("postgres: get repository: %w", err)
	}
	return r, nil
}

// Update stores the visibility fn leaves; the name and the id do not
// change (the repository has no way to change them).
func (rr repositoryRepo) Update(ctx context.Context, id string, fn func(r *repository.Repository) error) (*repository.Repository, error) {
	row, err := rr.selectRow(ctx, id, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: update repository: %w", err)
	}
	r, err := row.toDomain()
	if err != nil {
		return nil, fmt.Errorf("postgres: update repository: %w", err)
	}
	if err := fn(r); err != nil {
		return nil, err
	}
	res, err := rr.t.db.NewUpdate().Model((*repositoryRow)(nil)).
		Set("visibility = ?", r.Visibility().String()).Set("updated_at = now()").
		Where("id = ?", row.ID).Where("tenant_id = ?", rr.t.tenantID).
		Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: update repository: %w", err)
	}
	n, err := rowsAffected(res)
	if err != nil {
		return nil, fmt.Errorf("postgres: update repository: %w", err)
	}
	if n != 1 {
		return nil, fmt.Errorf("postgres: update repository: %d rows written, want 1", n)
	}
	return r, nil
}

// List pages through the tenant's repositories by name (the column's
// collation, which breaks ties by bytes, so paging with after is exact).
func (rr repositoryRepo) List(ctx context.Context, after string, limit int) ([]*repository.Repository, error) {
	if limit <= 0 {
		return []*repository.Repository{}, nil
	}
	var rows []repositoryRow
	q := rr.t.db.NewSelect().Model(&rows).Where("r.tenant_id = ?", rr.t.tenantID)
	if after != "" {
		q = q.Where("r.name > ?", after)
	}
	if err := q.OrderExpr("r.name").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("postgres: list repositories: %w", err)
	}
	out := make([]*repository.Repository, 0, len(rows))
	for _, row := range rows {
		r, err := row.toDomain()
		if err != nil {
			return nil, fmt.Errorf("postgres: list repositories: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}
