package app

import (
	"bytes"
	"context"
	"errors"
	"sync"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// ErrCredentialChanged: the server's stored credential changed since it
// was read (an admin replaced it, or another connection saved a rotated
// refresh token); the newer one is kept.
var ErrCredentialChanged = errors.New("credential changed meanwhile")

// Target is the MCPTarget of a server whose credential was opened from
// enc: for the OAuth kinds it carries the server id (the connector's
// token cache key) and a saver of rotated credentials (see
// [CredentialSaverFor]).
func Target(tenants ports.Tenants, cipher ports.Cipher, tenantID string, s *server.Server, cred server.Credential, enc []byte) ports.MCPTarget {
	t := ports.MCPTarget{ServerID: s.ID(), URL: s.URL(), Credential: cred}
	if cred.Kind().IsOAuth() {
		t.SaveCredential = CredentialSaverFor(tenants, cipher, tenantID, s.ID(), enc)
	}
	return t
}

// CredentialSaverFor returns the saver of a connection's rotated OAuth
// credential (a new refresh token): it seals the credential for the
// server's row and stores it in a tenant transaction, but only while the
// stored ciphertext is still the one the connection opened (opened), or
// the one this saver stored last; otherwise ErrCredentialChanged and
// nothing is written, so an admin's new credential is never overwritten
// by a connection that started before it. Safe for concurrent use.
func CredentialSaverFor(tenants ports.Tenants, cipher ports.Cipher, tenantID, serverID string, opened []byte) ports.CredentialSaver {
	var mu sync.Mutex
	current := bytes.Clone(opened)
	return func(ctx context.Context, cred server.Credential) error {
		mu.Lock()
		defer mu.Unlock()
		if !cred.Kind().IsOAuth() {
			return errors.New("app: only an OAuth credential is saved by a connection")
		}
		sealed, err := SealCredential(cipher, serverID, cred)
		if err != nil {
			return err
		}
		err = tenants.InTenant(ctx, tenantID, func(ctx context.Context, tx ports.TenantTx) error {
			_, err := tx.Servers().Update(ctx, serverID, func(s *server.Server) (ports.CredentialUpdate, error) {
				stored, err := tx.Servers().Credential(ctx, serverID)
				if err != nil {
					return ports.CredentialUpdate{}, err
				}
				if !bytes.Equal(stored, current) || s.CredentialKind() != cred.Kind() {
					return ports.CredentialUpdate{}, ErrCredentialChanged
				}
				return ports.CredentialUpdate{Replace: true, Encrypted: sealed}, nil
			})
			return err
		})
		if err != nil {
			return err
		}
		current = sealed
		return nil
	}
}

// SealCredential encrypts cred for serverID's row (nil for NoCredential,
// which needs no key); keys_unavailable when the ring cannot seal.
func SealCredential(cipher ports.Cipher, serverID string, cred server.Credential) ([]byte, error) {
	if cred.Kind() == server.KindNone {
		return nil, nil
	}
	secret, err := cred.MarshalSecret()
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	if cipher == nil {
		return nil, KeysUnavailable(nil)
	}
	sealed, err := cipher.Seal(secret, CredentialAAD(serverID))
	if err != nil {
		return nil, KeysUnavailable(err)
	}
	return sealed, nil
}
