package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/codelotse/codelotse/ports"
)

// TokenPrefix starts every API token, so that a leaked token is easy to
// recognise (secret scanners, logs) and junk is refused without a lookup.
const TokenPrefix = "clt_"

// tokenSecretBytes is the entropy of a token: 256 bits from crypto/rand.
const tokenSecretBytes = 32

// tokenLen is the length of a well-formed token: the prefix and the secret
// in unpadded base64url.
var tokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(tokenSecretBytes)

// TokenHash is what the store keeps of a token: its SHA-256. A token has
// 256 bits of entropy, so a plain hash (no salt, no slow KDF) is enough and
// lets the store look it up by equality.
func TokenHash(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Authenticator resolves API tokens to their principal (it implements the
// HTTP adapter's Authenticator). Safe for concurrent use.
type Authenticator struct {
	accounts ports.Accounts
}

// NewAuthenticator returns an [Authenticator] over the accounts store.
func NewAuthenticator(accounts ports.Accounts) *Authenticator {
	return &Authenticator{accounts: accounts}
}

// Authenticate hashes token and looks the hash up. A token that is not of
// our format, or whose hash is unknown, gives an error wrapping
// [ports.ErrNotFound]; other errors are the store's.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (ports.Principal, error) {
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return ports.Principal{}, fmt.Errorf("malformed token: %w", ports.ErrNotFound)
	}
	p, err := a.accounts.LookupToken(ctx, TokenHash(token))
	if err != nil {
		return ports.Principal{}, fmt.Errorf("look up token: %w", err)
	}
	return p, nil
}
