package app

// Every sealed secret of the application layer, in one place: the
// associated data each kind of row is sealed under (stored ciphertexts
// depend on these strings byte for byte: TestAssociatedDataGolden), and
// every seal and open of the key ring: a server's credential, a pending
// connection's secret, a review's prompt log, the probe of the ring and
// the re-sealing of `keys rotate`, through one seal and one open; then
// the MCPTarget of a server and the saver of a connection's rotated
// credential. The modules hold the ring as a [Vault], whose cipher only
// this file reaches, so a credential's walk (ARCHITECTURE.md, "Data
// flows") passes here and nowhere else in the application layer.

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// Vault is the key ring as the application modules hold it: only the
// functions of this file reach its cipher, each under the associated
// data of its kind of row. The zero Vault has no ring: every seal and
// open is keys_unavailable.
type Vault struct{ cipher ports.Cipher }

// NewVault holds c (nil: no ring).
func NewVault(c ports.Cipher) Vault { return Vault{cipher: c} }

// CredentialAAD binds a server's encrypted credential to its row.
func CredentialAAD(serverID string) []byte { return []byte("mcp_servers:" + serverID) }

// PromptLogAAD is the associated data a review's prompt logs are sealed
// under: a log opens only as a log of that review.
func PromptLogAAD(reviewID string) []byte { return []byte("prompt_logs:" + reviewID) }

// StateAAD binds a pending connection's sealed secret to its state (the
// SHA-256 of the state parameter, in hex).
func StateAAD(stateHash []byte) []byte { return []byte("oauth_state:" + hex.EncodeToString(stateHash)) }

// probeAAD is what [ProbeKeys] seals under; nothing sealed under it is
// kept.
func probeAAD() []byte { return []byte("probe") }

// seal encrypts plain under aad with the ring's primary key:
// keys_unavailable without a key ring or when the ring cannot seal.
func seal(v Vault, plain, aad []byte) ([]byte, error) {
	if v.cipher == nil {
		return nil, KeysUnavailable(nil)
	}
	sealed, err := v.cipher.Seal(plain, aad)
	if err != nil {
		return nil, KeysUnavailable(err)
	}
	return sealed, nil
}

// open decrypts sealed under aad: keys_unavailable without a key ring or
// when no key of the ring opens it (its key left the ring, it was
// tampered with, or it was sealed for another row). The caller clears
// the plaintext.
func open(v Vault, sealed, aad []byte) ([]byte, error) {
	if v.cipher == nil {
		return nil, KeysUnavailable(nil)
	}
	plain, err := v.cipher.Open(sealed, aad)
	if err != nil {
		return nil, KeysUnavailable(err)
	}
	return plain, nil
}

// SealCredential encrypts cred for serverID's row (nil for NoCredential,
// which needs no key); keys_unavailable when the ring cannot seal.
func SealCredential(v Vault, serverID string, cred server.Credential) ([]byte, error) {
	if cred.Kind() == server.KindNone {
		return nil, nil
	}
	plain, err := cred.MarshalSecret()
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return seal(v, plain, CredentialAAD(serverID))
}

// OpenCredential decrypts a server's credential (none for no ciphertext,
// which needs no key): keys_unavailable when the ring cannot open it, the
// domain's error when what opens is not a credential. The plaintext
// lives only in the returned value.
func OpenCredential(v Vault, serverID string, enc []byte) (server.Credential, error) {
	if len(enc) == 0 {
		return server.NoCredential(), nil
	}
	plain, err := open(v, enc, CredentialAAD(serverID))
	if err != nil {
		return server.Credential{}, err
	}
	defer clear(plain)
	return server.UnmarshalCredentialSecret(plain)
}

// SealConnectSecret encrypts a pending connection's secret (the PKCE
// verifier and its client) under the state's associated data;
// keys_unavailable when the ring cannot seal.
func SealConnectSecret(v Vault, stateHash []byte, secret server.ConnectSecret) ([]byte, error) {
	plain, err := secret.MarshalSecret()
	if err != nil {
		return nil, err
	}
	defer clear(plain)
	return seal(v, plain, StateAAD(stateHash))
}

// OpenConnectSecret decrypts the secret of the pending connection with
// this state hash: keys_unavailable when no key of the ring opens it
// (also when it was sealed for another state), an internal error when
// what opens is malformed.
func OpenConnectSecret(v Vault, stateHash, sealed []byte) (server.ConnectSecret, error) {
	plain, err := open(v, sealed, StateAAD(stateHash))
	if err != nil {
		return server.ConnectSecret{}, err
	}
	defer clear(plain)
	secret, err := server.UnmarshalConnectSecret(plain)
	if err != nil {
		return server.ConnectSecret{}, fmt.Errorf("app: open the sealed state: %w", err)
	}
	return secret, nil
}

// SealPromptLog encrypts a review's prompt log (plain, the caller's to
// clear) under the review's associated data; keys_unavailable when the
// ring cannot seal.
func SealPromptLog(v Vault, reviewID string, plain []byte) ([]byte, error) {
	return seal(v, plain, PromptLogAAD(reviewID))
}

// OpenPromptLog decrypts a prompt log of the review reviewID (the
// plaintext is the caller's to clear): keys_unavailable, saying that a
// prompt log cannot be decrypted when the ring is there but none of its
// keys opens it.
func OpenPromptLog(v Vault, reviewID string, sealed []byte) ([]byte, error) {
	plain, err := open(v, sealed, PromptLogAAD(reviewID))
	if err != nil && v.cipher != nil {
		AsError(err).Message = "a prompt log cannot be decrypted with the configured keys"
	}
	return plain, err
}

// ProbeKeys tells whether the ring can seal at all, before work that
// needs it (`keys rotate`, keeping prompt logs): keys_unavailable when it
// cannot. What it seals is not kept.
func ProbeKeys(v Vault) error {
	_, err := seal(v, nil, probeAAD())
	return err
}

// ErrNotOpened: no key of the ring opens a ciphertext under its row's
// associated data (its key left the ring, it was tampered with, or it
// belongs to another row).
var ErrNotOpened = errors.New("the ciphertext does not open under its associated data")

// Reseal is `keys rotate`'s step for one ciphertext, sealed under aad:
// it opens it (every one, also one that names the primary key: the key
// id alone proves nothing, and one that does not open must be reported,
// not counted as done) and, unless it is under the primary key already
// (primary), seals its plaintext again under the primary key. An error
// wrapping [ErrNotOpened] when it does not open; keys_unavailable without
// a ring or when the ring cannot seal.
func Reseal(v Vault, aad, sealed []byte) (resealed []byte, primary bool, err error) {
	if v.cipher == nil {
		return nil, false, KeysUnavailable(nil)
	}
	plain, err := open(v, sealed, aad)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrNotOpened, err)
	}
	defer clear(plain)
	if v.cipher.IsPrimary(sealed) {
		return nil, true, nil
	}
	resealed, err = seal(v, plain, aad)
	return resealed, false, err
}

// ErrCredentialChanged: the server's stored credential changed since it
// was read (an admin replaced it, or another connection saved a rotated
// refresh token); the newer one is kept.
var ErrCredentialChanged = errors.New("credential changed meanwhile")

// Target is the MCPTarget of a server whose credential was opened from
// enc: for the OAuth kinds it carries the server id (the connector's
// token cache key) and a saver of rotated credentials (see
// [CredentialSaverFor]).
func Target(tenants ports.Tenants, v Vault, tenantID string, s *server.Server, cred server.Credential, enc []byte) ports.MCPTarget {
	t := ports.MCPTarget{ServerID: s.ID(), TenantID: tenantID, URL: s.URL(), Credential: cred}
	if cred.Kind().IsOAuth() {
		t.SaveCredential = CredentialSaverFor(tenants, v, tenantID, s.ID(), enc)
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
func CredentialSaverFor(tenants ports.Tenants, v Vault, tenantID, serverID string, opened []byte) ports.CredentialSaver {
	var mu sync.Mutex
	current := bytes.Clone(opened)
	return func(ctx context.Context, cred server.Credential) error {
		mu.Lock()
		defer mu.Unlock()
		if !cred.Kind().IsOAuth() {
			return errors.New("app: only an OAuth credential is saved by a connection")
		}
		sealed, err := SealCredential(v, serverID, cred)
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
