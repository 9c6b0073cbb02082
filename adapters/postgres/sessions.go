package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/codelotse/codelotse/ports"
)

// Sessions implements [ports.WebSessions] on [DB.WithSystem]: like API
// tokens, sessions are found by hash before any tenant is known. It is
// safe for concurrent use.
type Sessions struct {
	db *DB
}

var _ ports.WebSessions = (*Sessions)(nil)

// NewSessions returns the session store of db.
func NewSessions(db *DB) *Sessions { return &Sessions{db: db} }

// Create stores a session of the token p.TokenID. The tenant is the
// token's own, read from api_tokens, never taken from p.
func (s *Sessions) Create(ctx context.Context, hash []byte, p ports.Principal, at time.Time) error {
	if len(hash) != 32 {
		return fmt.Errorf("postgres: create session: hash has %d bytes, want 32 (SHA-256)", len(hash))
	}
	if !isUUID(p.TokenID) {
		return fmt.Errorf("postgres: create session: token: %w", ports.ErrNotFound)
	}
	var n int64
	err := s.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw(`INSERT INTO web_sessions (id_hash, tenant_id, token_id, created_at, last_seen_at)
			SELECT ?, t.tenant_id, t.id, ?, ? FROM api_tokens t WHERE t.id = ? AND (t.expires_at IS NULL OR t.expires_at > now())`, hash, at, at, p.TokenID).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: create session: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("postgres: create session: token: %w", ports.ErrNotFound)
	}
	return nil
}

// Lookup returns the session with its token's current permissions; a
// session whose token was deleted (revoked) is gone with it, and one whose
// token expired is not found.
func (s *Sessions) Lookup(ctx context.Context, hash []byte) (ports.WebSession, error) {
	var ws ports.WebSession
	err := s.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		return tx.NewRaw(`SELECT t.id::text, t.tenant_id::text, t.permissions, s.created_at, s.last_seen_at
			FROM web_sessions s JOIN api_tokens t ON t.id = s.token_id AND t.tenant_id = s.tenant_id
			WHERE s.id_hash = ? AND (t.expires_at IS NULL OR t.expires_at > now())`, hash).
			Scan(ctx, &ws.Principal.TokenID, &ws.Principal.TenantID, pgdialect.Array(&ws.Principal.Permissions),
				&ws.CreatedAt, &ws.LastSeenAt)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return ports.WebSession{}, fmt.Errorf("postgres: look up session: %w", ports.ErrNotFound)
	}
	if err != nil {
		return ports.WebSession{}, fmt.Errorf("postgres: look up session: %w", err)
	}
	return ws, nil
}

// Touch moves the session's last use forward (never back).
func (s *Sessions) Touch(ctx context.Context, hash []byte, at time.Time) error {
	err := s.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewRaw("UPDATE web_sessions SET last_seen_at = ? WHERE id_hash = ? AND last_seen_at < ?", at, hash, at).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: touch session: %w", err)
	}
	return nil
}

// Delete removes the session.
func (s *Sessions) Delete(ctx context.Context, hash []byte) error {
	err := s.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		_, err := tx.NewDelete().Table("web_sessions").Where("id_hash = ?", hash).Exec(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: delete session: %w", err)
	}
	return nil
}

// DeleteExpired removes sessions past their lifetime or idle timeout.
func (s *Sessions) DeleteExpired(ctx context.Context, createdBefore, idleBefore time.Time) (int64, error) {
	var n int64
	err := s.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Table("web_sessions").
			Where("created_at < ?", createdBefore).WhereOr("last_seen_at < ?", idleBefore).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: delete expired sessions: %w", err)
	}
	return n, nil
}
