package postgres

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/codelotse/codelotse/ports"
)

// Rotator implements [ports.CredentialRotator] on [DB.WithSystem], across
// all tenants. It is safe for concurrent use.
type Rotator struct {
	db *DB
}

var _ ports.CredentialRotator = (*Rotator)(nil)

// NewRotator returns the credential rotator of db.
func NewRotator(db *DB) *Rotator { return &Rotator{db: db} }

// Batch returns up to limit stored credentials of servers whose id is
// greater than after ("" starts at the beginning), in id order. Servers
// without a credential are skipped.
func (r *Rotator) Batch(ctx context.Context, after string, limit int) ([]ports.EncryptedCredential, error) {
	if after != "" && !isUUID(after) {
		return nil, fmt.Errorf("postgres: credential batch: after %q is not a UUID", after)
	}
	if limit <= 0 {
		return []ports.EncryptedCredential{}, nil
	}
	var rows []struct {
		ID        string `bun:"id"`
		Encrypted []byte `bun:"encrypted_credentials"`
	}
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		if after == "" {
			return tx.NewRaw(`SELECT id::text AS id, encrypted_credentials FROM mcp_servers
				WHERE encrypted_credentials IS NOT NULL ORDER BY id LIMIT ?`, limit).Scan(ctx, &rows)
		}
		return tx.NewRaw(`SELECT id::text AS id, encrypted_credentials FROM mcp_servers
			WHERE encrypted_credentials IS NOT NULL AND id > ?::uuid ORDER BY id LIMIT ?`, after, limit).Scan(ctx, &rows)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: credential batch: %w", err)
	}
	out := make([]ports.EncryptedCredential, 0, len(rows))
	for _, row := range rows {
		out = append(out, ports.EncryptedCredential{ServerID: row.ID, Encrypted: row.Encrypted})
	}
	return out, nil
}

// Replace writes encrypted only if the stored credential is still old
// byte for byte, and reports whether it wrote. updated_at is left alone:
// a re-encryption is not a change of the server.
func (r *Rotator) Replace(ctx context.Context, serverID string, old, encrypted []byte) (bool, error) {
	if !isUUID(serverID) || old == nil {
		return false, nil
	}
	if encrypted == nil {
		return false, fmt.Errorf("postgres: replace credential: new credential is nil")
	}
	var n int64
	err := r.db.WithSystem(ctx, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewRaw("UPDATE mcp_servers SET encrypted_credentials = ? WHERE id = ? AND encrypted_credentials = ?",
			encrypted, serverID, old).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = rowsAffected(res)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("postgres: replace credential: %w", err)
	}
	return n == 1, nil
}
