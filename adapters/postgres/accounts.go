package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/codelotse/codelotse/ports"
)

// Accounts implements [ports.Accounts] on [DB.WithSystem]: tenants and API
// tokens live outside any one tenant's scope. It is safe for concurrent use.
type Accounts struct {
	db *DB
}

var _ ports.Accounts = (*Accounts)(nil)

// NewAccounts returns the account store of db.
func NewAccounts(db *DB) *Accounts { return &Accounts{db: db} }

// CreateTenant stores a tenant and returns its id.
func (a *Accounts) CreateTenant(ctx context.Context, name string) (string, error) {
	var id string
	err := a.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("INSERT INTO tenants (name) VALUES (?) RETURNING id::text", name).Scan(ctx, &id)
	})
	if err != nil {
		return "", fmt.Errorf("postgres: create tenant: %w", err)
	}
	return id, nil
}

// CreateToken stores the SHA-256 hash of a token (32 bytes) with its
// permissions. ErrNotFound for an unknown tenant, ErrConflict for a hash
// already stored.
func (a *Accounts) CreateToken(ctx context.Context, tenantID string, hash []byte, permissions []string) (string, error) {
	return a.IssueToken(ctx, ports.NewToken{TenantID: tenantID, Hash: hash, Permissions: permissions})
}

// IssueToken stores the SHA-256 hash of a token (32 bytes) with its
// permissions, label and optional expiry. ErrNotFound for an unknown
// tenant, ErrConflict for a hash already stored.
func (a *Accounts) IssueToken(ctx context.Context, t ports.NewToken) (string, error) {
	tenantID, hash, permissions := t.TenantID, t.Hash, t.Permissions
	if !isUUID(tenantID) {
		return "", fmt.Errorf("postgres: create token: tenant: %w", ports.ErrNotFound)
	}
	if len(hash) != 32 {
		return "", fmt.Errorf("postgres: create token: hash has %d bytes, want 32 (SHA-256)", len(hash))
	}
	if permissions == nil {
		permissions = []string{}
	}
	var id string
	err := a.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		var expires *time.Time
		if !t.ExpiresAt.IsZero() {
			expires = &t.ExpiresAt
		}
		return tx.NewRaw("INSERT INTO api_tokens (tenant_id, token_hash, permissions, label, expires_at) VALUES (?, ?, ?, ?, ?) RETURNING id::text",
			tenantID, hash, pgdialect.Array(permissions), t.Label, expires).Scan(ctx, &id)
	})
	switch code, _ := pgError(err); {
	case code == codeForeignKeyViolation:
		return "", fmt.Errorf("postgres: create token: tenant: %w", ports.ErrNotFound)
	case code == codeUniqueViolation:
		return "", fmt.Errorf("postgres: create token: %w", ports.ErrConflict)
	case err != nil:
		return "", fmt.Errorf("postgres: create token: %w", err)
	}
	return id, nil
}

// LookupToken finds the token with this hash, or returns ErrNotFound. It
// records the time of use at most once a minute per token, so that busy
// tokens do not write on every request.
//
// Every API request calls it, so it costs one round trip: the system
// setting, the lookup and the update go as one pipelined batch, which
// PostgreSQL runs as one implicit transaction (it ends at the batch's
// single Sync). The setting is transaction-local as in [DB.WithSystem],
// so it ends with the batch, and it comes first, so the lookup sees the
// row through the system_access policy. There is no cache: a deleted
// token fails on its next request.
func (a *Accounts) LookupToken(ctx context.Context, hash []byte) (ports.Principal, error) {
	var p ports.Principal
	b := &pgx.Batch{}
	b.Queue("SELECT set_config('app.system', 'on', true)")
	b.Queue("SELECT id::text, tenant_id::text, permissions FROM api_tokens WHERE token_hash = $1 AND (expires_at IS NULL OR expires_at > now())", hash).
		QueryRow(func(row pgx.Row) error { return row.Scan(&p.TokenID, &p.TenantID, &p.Permissions) })
	b.Queue(`UPDATE api_tokens SET last_used_at = now()
		WHERE token_hash = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, hash)
	err := a.db.pool.SendBatch(ctx, b).Close()
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.Principal{}, fmt.Errorf("postgres: look up token: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.Principal{}, unavailable(ctx, fmt.Errorf("postgres: look up token: %w", err))
	}
	return p, nil
}

// tokenRow is a row of api_tokens as listed: never the hash.
type tokenRow struct {
	ID          string     `bun:"id"`
	TenantID    string     `bun:"tenant_id"`
	Label       string     `bun:"label"`
	Permissions []string   `bun:"permissions,array"`
	CreatedAt   time.Time  `bun:"created_at"`
	LastUsedAt  *time.Time `bun:"last_used_at"`
	ExpiresAt   *time.Time `bun:"expires_at"`
}

func (r tokenRow) info() ports.TokenInfo {
	t := ports.TokenInfo{ID: r.ID, TenantID: r.TenantID, Label: r.Label, Permissions: r.Permissions, CreatedAt: r.CreatedAt}
	if t.Permissions == nil {
		t.Permissions = []string{}
	}
	if r.LastUsedAt != nil {
		t.LastUsedAt = *r.LastUsedAt
	}
	if r.ExpiresAt != nil {
		t.ExpiresAt = *r.ExpiresAt
	}
	return t
}

const tokenColumns = "id::text AS id, tenant_id::text AS tenant_id, label, permissions, created_at, last_used_at, expires_at"

// ListTokens returns the tenant's tokens, oldest first (id breaks ties).
func (a *Accounts) ListTokens(ctx context.Context, tenantID string) ([]ports.TokenInfo, error) {
	if !isUUID(tenantID) {
		return []ports.TokenInfo{}, nil
	}
	var rows []tokenRow
	err := a.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("SELECT "+tokenColumns+" FROM api_tokens WHERE tenant_id = ? ORDER BY created_at, id", tenantID).Scan(ctx, &rows)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list tokens: %w", err)
	}
	out := make([]ports.TokenInfo, 0, len(rows))
	for _, r := range rows {
		out = append(out, r.info())
	}
	return out, nil
}

// RevokeToken deletes the token (its web sessions go with it, ON DELETE
// CASCADE); tenantID "" matches any tenant.
func (a *Accounts) RevokeToken(ctx context.Context, tenantID, id string) (ports.TokenInfo, error) {
	if !isUUID(id) || (tenantID != "" && !isUUID(tenantID)) {
		return ports.TokenInfo{}, fmt.Errorf("postgres: revoke token: %w", ports.ErrNotFound)
	}
	var rows []tokenRow
	err := a.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw("DELETE FROM api_tokens WHERE id = ? AND (? = '' OR tenant_id::text = ?) RETURNING "+tokenColumns, id, tenantID, tenantID).Scan(ctx, &rows)
	})
	if err != nil {
		return ports.TokenInfo{}, fmt.Errorf("postgres: revoke token: %w", err)
	}
	if len(rows) == 0 {
		return ports.TokenInfo{}, fmt.Errorf("postgres: revoke token: %w", ports.ErrNotFound)
	}
	return rows[0].info(), nil
}
