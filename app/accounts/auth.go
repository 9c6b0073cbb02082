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
// prefix ([AuthLimiter]). The limit applies to failures only: a correct
// token is accepted whatever other attempts from its client (or with
// tokens that start alike) did, so nobody locks a token's owner out by
// failing from the owner's address or its proxy. Past the limit a failed
// attempt answers rate_limited with the time to wait instead of
// unauthenticated: a malformed token before any hashing or lookup, a
// well-formed one after the one SHA-256 and indexed lookup every request
// costs. Every refused attempt counts, and a success resets nothing, so
// a client that holds one valid token cannot use it to go on guessing.
// (A token has 256 bits: the limit bounds the load and the noise of
// guessing, not its odds.)
func (h *AuthenticateHandler) Handle(ctx context.Context, q Authenticate) (ports.Principal, error) {
	token := q.Token
	failed := func(err error) error {
		wait := h.d.Limiter.Wait(q.Client, token)
		h.d.Limiter.Failed(q.Client, token)
		if wait > 0 {
			return &app.Error{Code: app.CodeRateLimited, Message: "too many failed authentications from this client; retry later", RetryAfter: wait}
		}
		return err
	}
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return ports.Principal{}, failed(fmt.Errorf("malformed token: %w", ports.ErrNotFound))
	}
	p, err := h.d.Accounts.LookupToken(ctx, TokenHash(token))
	if errors.Is(err, ports.ErrNotFound) {
		return ports.Principal{}, failed(fmt.Errorf("look up token: %w", err))
	}
	if err != nil {
		return ports.Principal{}, fmt.Errorf("look up token: %w", err)
	}
	return p, nil
}
