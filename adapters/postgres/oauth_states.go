package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// oauthStateRow is a row of oauth_connect_states (migrations/20261203090000_oauth.tx.up.sql).
type oauthStateRow struct {
	bun.BaseModel `bun:"table:oauth_connect_states,alias:os"`

	StateHash             []byte    `bun:"state_hash,pk"`
	TenantID              string    `bun:"tenant_id,type:uuid"`
	ServerID              string    `bun:"server_id,type:uuid"`
	SessionHash           []byte    `bun:"session_hash"`
	Sealed                []byte    `bun:"sealed"`
	CredentialHash        []byte    `bun:"credential_hash"`
	Issuer                string    `bun:"issuer"`
	AuthorizationEndpoint string    `bun:"authorization_endpoint"`
	TokenEndpoint         string    `bun:"token_endpoint"`
	IssSupported          bool      `bun:"iss_supported"`
	RedirectURI           string    `bun:"redirect_uri"`
	CreatedAt             time.Time `bun:"created_at"`
	ExpiresAt             time.Time `bun:"expires_at"`
}

// load rebuilds the row's pending connection through the domain's
// loader, which checks it again.
func (r oauthStateRow) load() (*server.PendingConnection, error) {
	return server.UnmarshalPendingConnectionFromDatabase(r.StateHash, r.ServerID, r.SessionHash, r.CredentialHash,
		r.Issuer, r.AuthorizationEndpoint, r.TokenEndpoint, r.IssSupported, r.RedirectURI, r.CreatedAt, r.ExpiresAt)
}

// oauthStateRepo implements [ports.OAuthStateRepo] inside one tenant
// transaction.
type oauthStateRepo struct{ t *tenantTx }

func (r oauthStateRepo) Insert(ctx context.Context, pc *server.PendingConnection, sealed []byte) error {
	if pc == nil || len(sealed) == 0 {
		return errors.New("postgres: insert oauth state: a pending connection and its sealed secret are required")
	}
	if !isUUID(pc.ServerID()) {
		return fmt.Errorf("postgres: insert oauth state: server: %w", ports.ErrNotFound)
	}
	row := oauthStateRow{
		StateHash: pc.StateHash(), TenantID: r.t.tenantID, ServerID: pc.ServerID(), SessionHash: pc.SessionHash(),
		Sealed: sealed, CredentialHash: pc.CredentialHash(), Issuer: pc.Issuer(),
		AuthorizationEndpoint: pc.AuthorizationEndpoint().String(), TokenEndpoint: pc.TokenEndpoint().String(),
		IssSupported: pc.IssRequired(), RedirectURI: pc.RedirectURI(),
		CreatedAt: pc.CreatedAt(), ExpiresAt: pc.ExpiresAt(),
	}
	if _, err := r.t.tx.NewDelete().Model((*oauthStateRow)(nil)).
		Where("tenant_id = ?", r.t.tenantID).Where("expires_at < ?", row.CreatedAt).Exec(ctx); err != nil {
		return fmt.Errorf("postgres: insert oauth state: delete expired: %w", err)
	}
	err := inSavepoint(ctx, r.t.tx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewInsert().Model(&row).Returning("NULL").Exec(ctx)
		return err
	})
	switch code, _ := pgError(err); {
	case err == nil:
		return nil
	case code == codeForeignKeyViolation:
		return fmt.Errorf("postgres: insert oauth state: server: %w", ports.ErrNotFound)
	case code == codeUniqueViolation:
		return fmt.Errorf("postgres: insert oauth state: %w", ports.ErrConflict)
	}
	return fmt.Errorf("postgres: insert oauth state: %w", err)
}

// Take deletes the row and loads it; a row the loader refuses is its
// error (server.ErrPendingConnectionMalformed), never a connection.
func (r oauthStateRepo) Take(ctx context.Context, stateHash []byte) (*server.PendingConnection, []byte, error) {
	var row oauthStateRow
	if len(stateHash) != 32 {
		return nil, nil, fmt.Errorf("postgres: take oauth state: %w", ports.ErrNotFound)
	}
	err := r.t.tx.NewDelete().Model(&row).
		Where("state_hash = ?", stateHash).Where("tenant_id = ?", r.t.tenantID).
		Returning("*").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, fmt.Errorf("postgres: take oauth state: %w", ports.ErrNotFound)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: take oauth state: %w", err)
	}
	pc, err := row.load()
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: take oauth state: %w", err)
	}
	return pc, row.Sealed, nil
}
