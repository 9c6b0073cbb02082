package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

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

// oauthStateRepo implements [ports.OAuthStateRepo] inside one tenant
// transaction.
type oauthStateRepo struct{ t *tenantTx }

func (r oauthStateRepo) Insert(ctx context.Context, st ports.OAuthState) error {
	if !isUUID(st.ServerID) {
		return fmt.Errorf("postgres: insert oauth state: server: %w", ports.ErrNotFound)
	}
	row := oauthStateRow{
		StateHash: st.StateHash, TenantID: r.t.tenantID, ServerID: st.ServerID, SessionHash: st.SessionHash,
		Sealed: st.Sealed, CredentialHash: st.CredentialHash, Issuer: st.Issuer,
		AuthorizationEndpoint: st.AuthorizationEndpoint, TokenEndpoint: st.TokenEndpoint,
		IssSupported: st.IssParameterSupported, RedirectURI: st.RedirectURI,
		CreatedAt: st.CreatedAt, ExpiresAt: st.ExpiresAt,
	}
	if _, err := r.t.tx.NewDelete().Model((*oauthStateRow)(nil)).
		Where("tenant_id = ?", r.t.tenantID).Where("expires_at < ?", st.CreatedAt).Exec(ctx); err != nil {
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

func (r oauthStateRepo) Take(ctx context.Context, stateHash []byte) (ports.OAuthState, error) {
	var row oauthStateRow
	if len(stateHash) != 32 {
		return ports.OAuthState{}, fmt.Errorf("postgres: take oauth state: %w", ports.ErrNotFound)
	}
	err := r.t.tx.NewDelete().Model(&row).
		Where("state_hash = ?", stateHash).Where("tenant_id = ?", r.t.tenantID).
		Returning("*").Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return ports.OAuthState{}, fmt.Errorf("postgres: take oauth state: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.OAuthState{}, fmt.Errorf("postgres: take oauth state: %w", err)
	}
	return ports.OAuthState{
		StateHash: row.StateHash, ServerID: row.ServerID, SessionHash: row.SessionHash, Sealed: row.Sealed,
		CredentialHash: row.CredentialHash, Issuer: row.Issuer, AuthorizationEndpoint: row.AuthorizationEndpoint,
		TokenEndpoint: row.TokenEndpoint, IssParameterSupported: row.IssSupported, RedirectURI: row.RedirectURI,
		CreatedAt: row.CreatedAt, ExpiresAt: row.ExpiresAt,
	}, nil
}
