package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/codelotse/codelotse/domain/id"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// PostgreSQL error codes the stores translate into port errors.
const (
	codeUniqueViolation     = "23505"
	codeForeignKeyViolation = "23503"
)

// Tenants implements [ports.Tenants] on [DB.WithTenant]. It is safe for
// concurrent use.
type Tenants struct {
	db *DB
}

var _ ports.Tenants = (*Tenants)(nil)

// NewTenants returns the tenant-scoped stores of db.
func NewTenants(db *DB) *Tenants { return &Tenants{db: db} }

// InTenant runs fn in one transaction under forced row-level security for
// tenantID (see [DB.WithTenant]). A tenant id that is not a UUID names no
// tenant: the error matches both [ports.ErrNotFound] and
// [ErrInvalidTenantID].
func (t *Tenants) InTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, tx ports.TenantTx) error) error {
	if !isUUID(tenantID) {
		return fmt.Errorf("%w: %w", ports.ErrNotFound, ErrInvalidTenantID)
	}
	return t.db.WithTenant(ctx, tenantID, func(ctx context.Context, tx bun.Tx) error {
		return fn(ctx, &tenantTx{tx: tx, db: tx, tenantID: tenantID, stream: t.db.streamAudit})
	})
}

// ReadInTenant runs fn, which only reads, under forced row-level security
// for tenantID at one round trip per read ([DB.ReadTenant]). Errors as
// InTenant.
func (t *Tenants) ReadInTenant(ctx context.Context, tenantID string, fn func(ctx context.Context, tx ports.TenantTx) error) error {
	if !isUUID(tenantID) {
		return fmt.Errorf("%w: %w", ports.ErrNotFound, ErrInvalidTenantID)
	}
	return t.db.ReadTenant(ctx, tenantID, func(ctx context.Context, conn bun.IDB) error {
		return fn(ctx, &tenantTx{db: conn, tenantID: tenantID})
	})
}

// tenantTx hands out repositories bound to one tenant transaction. The
// tenant id is kept only to fill tenant_id columns and as a second guard
// next to row-level security; the policies decide what is visible.
//
// Queries go to db: the transaction, or in a read scope the connection
// (ReadInTenant). tx is the transaction, for savepoints and the job
// queue; a read scope has none (its zero value), and what needs it fails
// with errReadScope.
type tenantTx struct {
	tx       bun.Tx
	db       bun.IDB
	tenantID string
	// stream: audit events and call records are copied to the audit
	// stream's outbox (outbox.go).
	stream bool
}

// errReadScope is the error of a write attempted in a read scope.
var errReadScope = errors.New("postgres: a read scope cannot write")

func (t *tenantTx) Servers() ports.ServerRepo          { return serverRepo{t} }
func (t *tenantTx) Repositories() ports.RepositoryRepo { return repositoryRepo{t} }
func (t *tenantTx) Policies() ports.PolicyRepo         { return policyRepo{t} }
func (t *tenantTx) Audit() ports.AuditLog              { return auditLog{t} }
func (t *tenantTx) Calls() ports.CallLog               { return callLog{t} }
func (t *tenantTx) Reviews() ports.ReviewRepo          { return reviewRepo{t} }
func (t *tenantTx) Settings() ports.SettingsRepo       { return settingsRepo{t} }
func (t *tenantTx) PromptLogs() ports.PromptLogRepo    { return promptLogRepo{t} }
func (t *tenantTx) OAuthStates() ports.OAuthStateRepo  { return oauthStateRepo{t} }

// pgError returns the PostgreSQL error code and constraint of err, if any.
func pgError(err error) (code, constraint string) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code, pgErr.ConstraintName
	}
	return "", ""
}

// isUUID reports whether s can be compared with a uuid column without a
// cast error; ids that are not UUIDs name no row.
func isUUID(s string) bool { _, ok := id.Parse(s); return ok }

// rowsAffected returns the count of a write, or an error.
func rowsAffected(res interface{ RowsAffected() (int64, error) }) (int64, error) {
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("rows affected: %w", err)
	}
	return n, nil
}

// inSavepoint runs a write that may violate a constraint inside a
// savepoint, so that the error leaves the tenant transaction usable: the
// caller may answer ErrNameTaken and go on (PostgreSQL otherwise aborts the
// whole transaction at the first failed statement).
func inSavepoint(ctx context.Context, tx bun.Tx, fn func(ctx context.Context, tx bun.Tx) error) error {
	if tx.Tx == nil {
		return errReadScope
	}
	return tx.RunInTx(ctx, nil, fn)
}
