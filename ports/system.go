package ports

import (
	"context"
	"io"
	"net/netip"
	"time"
)

// Principal is the caller behind an API token.
type Principal struct {
	TokenID     string
	TenantID    string
	Permissions []string
}

// Accounts holds what exists outside any one tenant's scope: tenants and
// the API tokens that lead into them. Safe for concurrent use.
type Accounts interface {
	CreateTenant(ctx context.Context, name string) (id string, err error)
	// CreateToken stores a token's SHA-256 hash; ErrNotFound for an unknown tenant.
	CreateToken(ctx context.Context, tenantID string, hash []byte, permissions []string) (id string, err error)
	// IssueToken stores a token's SHA-256 hash with its label and
	// optional expiry (zero: none); ErrNotFound for an unknown tenant.
	IssueToken(ctx context.Context, t NewToken) (id string, err error)
	// LookupToken finds a token by hash or returns ErrNotFound; a token
	// past its expiry is not found.
	LookupToken(ctx context.Context, hash []byte) (Principal, error)
	// ListTokens returns the tenant's tokens, expired ones included,
	// oldest first. Never a secret or a hash.
	ListTokens(ctx context.Context, tenantID string) ([]TokenInfo, error)
	// RevokeToken deletes a token and with it every web session opened
	// with it; tenantID "" matches any tenant (the operator's command).
	// ErrNotFound for an unknown id or one of another tenant.
	RevokeToken(ctx context.Context, tenantID, id string) (TokenInfo, error)
}

// NewToken is a token to store: only its hash.
type NewToken struct {
	TenantID    string
	Hash        []byte
	Permissions []string
	Label       string
	ExpiresAt   time.Time // zero: never
}

// TokenInfo is what may be shown of a token: never the secret.
type TokenInfo struct {
	ID          string
	TenantID    string
	Label       string
	Permissions []string
	CreatedAt   time.Time
	LastUsedAt  time.Time // zero: never used
	ExpiresAt   time.Time // zero: never
}

// EncryptedCredential is one stored credential, for key rotation.
type EncryptedCredential struct {
	ServerID  string
	Encrypted []byte
}

// CredentialRotator pages through every stored credential of every tenant
// and rewrites it. Used by `codelotse keys rotate` only.
type CredentialRotator interface {
	// Batch returns up to limit credentials with ServerID > after, in id order.
	Batch(ctx context.Context, after string, limit int) ([]EncryptedCredential, error)
	// Replace writes a re-encrypted credential, only if the stored one is
	// still old (compare-and-swap); it reports whether it wrote.
	Replace(ctx context.Context, serverID string, old, encrypted []byte) (bool, error)
}

// Cipher encrypts credentials with an AEAD under a key ring. The
// associated data binds a ciphertext to its row ("mcp_servers:<id>"), so
// it cannot be moved to another row. Safe for concurrent use.
type Cipher interface {
	// Seal encrypts under the primary key; the result names the key.
	Seal(plaintext, associatedData []byte) ([]byte, error)
	// Open decrypts with whichever key of the ring the ciphertext names.
	Open(ciphertext, associatedData []byte) ([]byte, error)
	// IsPrimary reports whether ciphertext was sealed under the primary key.
	IsPrimary(ciphertext []byte) bool
}

// Resolver looks up a host's addresses. *net.Resolver satisfies it; tests
// give one that returns what they need without a network.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Clock tells the time; the domain takes time as values from it.
type Clock interface {
	Now() time.Time
}

// The other two sources of what differs between two runs, and the
// warning log, have named types so that wire binds each to its one
// provider: a second func() string or io.Reader in the graph cannot be
// injected in their place.

// NewID returns a new row id (a UUID).
type NewID func() string

// Random is the randomness of secrets, PKCE verifiers and the untrusted
// wrapper's boundaries: crypto/rand.Reader outside tests.
type Random io.Reader

// Warn logs a warning with fields that never hold a URL, an argument, a
// result or a credential.
type Warn func(msg string, fields map[string]string)
