package accounts

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/codelotse/codelotse/app"
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

// Authenticate is the query behind every API request: the principal of
// a bearer token presented by Client (the client's address, for the
// limit on failed authentications).
type Authenticate struct {
	Token  string
	Client string
}

// AuthenticateHandler resolves API tokens to their principal (it
// implements the HTTP adapter's Authenticator). Safe for concurrent use.
type AuthenticateHandler struct{ d Deps }

// NewAuthenticateHandler returns an [AuthenticateHandler].
func NewAuthenticateHandler(d Deps) *AuthenticateHandler { return &AuthenticateHandler{d: d} }

// Handle hashes the token and looks the hash up. A token that is not of
// our format, or whose hash is unknown, gives an error wrapping
// [ports.ErrNotFound]; other errors are the store's.
//
// Failed authentications are counted per client address and per token
// prefix ([AuthLimiter]); past the limit the answer is rate_limited with
// the time to wait, before the token is looked up.
func (h *AuthenticateHandler) Handle(ctx context.Context, q Authenticate) (ports.Principal, error) {
	token := q.Token
	if wait := h.d.Limiter.Wait(q.Client, token); wait > 0 {
		// A refused attempt counts too: a client that keeps trying
		// reaches its own limit whatever the prefix.
		h.d.Limiter.Failed(q.Client, token)
		return ports.Principal{}, &app.Error{Code: app.CodeRateLimited, Message: "too many failed authentications from this client; retry later", RetryAfter: wait}
	}
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		h.d.Limiter.Failed(q.Client, token)
		return ports.Principal{}, fmt.Errorf("malformed token: %w", ports.ErrNotFound)
	}
	p, err := h.d.Accounts.LookupToken(ctx, TokenHash(token))
	if errors.Is(err, ports.ErrNotFound) {
		h.d.Limiter.Failed(q.Client, token)
	}
	if err != nil {
		return ports.Principal{}, fmt.Errorf("look up token: %w", err)
	}
	return p, nil
}
