package accounts

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/ports"
)

// Lifetimes of a web session: at most SessionMaxAge after signing in, and
// SessionIdleTimeout after its last request.
const (
	SessionMaxAge      = 8 * time.Hour
	SessionIdleTimeout = 30 * time.Minute
	// sessionTouchEvery bounds the writes of a busy session: its last use
	// is recorded at most once a minute, which shortens the idle timeout
	// by at most that much.
	sessionTouchEvery = time.Minute
)

// SessionPrefix starts every session cookie value; like a token, a
// session id is 256 random bits and only its SHA-256 is stored.
const SessionPrefix = "cls_"

var sessionLen = len(SessionPrefix) + base64.RawURLEncoding.EncodedLen(tokenSecretBytes)

// Session is a resumed web session: the caller and the secret it was
// resumed with (the web adapter derives the CSRF token from it).
type Session struct {
	Principal ports.Principal
	Secret    string
}

// SignIn opens a web session with an API token.
//
// A session carries the tenant and the permissions of the token it was
// opened with, read again from the token on every request: deleting the
// token ends the session.
type SignIn struct {
	Token string
	// Client is the client's address (the limit on failed sign-ins).
	Client string
}

// SignInHandler opens sessions. Safe for concurrent use.
type SignInHandler struct{ d Deps }

// NewSignInHandler returns a [SignInHandler].
func NewSignInHandler(d Deps) *SignInHandler { return &SignInHandler{d: d} }

// ResumeSession finds the session of a cookie value.
type ResumeSession struct{ Secret string }

// ResumeSessionHandler resumes sessions. Safe for concurrent use.
type ResumeSessionHandler struct{ d Deps }

// NewResumeSessionHandler returns a [ResumeSessionHandler].
func NewResumeSessionHandler(d Deps) *ResumeSessionHandler { return &ResumeSessionHandler{d: d} }

// SignOut ends the session of a cookie value.
type SignOut struct{ Secret string }

// SignOutHandler ends sessions. Safe for concurrent use.
type SignOutHandler struct{ d Deps }

// NewSignOutHandler returns a [SignOutHandler].
func NewSignOutHandler(d Deps) *SignOutHandler { return &SignOutHandler{d: d} }

// Handle checks an API token and opens a session for it; unauthenticated
// for a malformed or unknown token. Expired sessions of every tenant are
// removed on the way, so the table holds live sessions only.
func (h *SignInHandler) Handle(ctx context.Context, cmd SignIn) (Session, error) {
	p, err := NewAuthenticateHandler(h.d).Handle(ctx, Authenticate{Token: cmd.Token, Client: cmd.Client})
	if errors.Is(err, ports.ErrNotFound) {
		return Session{}, app.Fail(app.CodeUnauthenticated, "unknown token")
	}
	if err != nil {
		return Session{}, err
	}
	now := h.d.Clock.Now()
	if _, err := h.d.Sessions.DeleteExpired(ctx, now.Add(-SessionMaxAge), now.Add(-SessionIdleTimeout)); err != nil {
		return Session{}, err
	}
	secret, err := newSecret(h.d.Rand, SessionPrefix)
	if err != nil {
		return Session{}, err
	}
	if err := h.d.Sessions.Create(ctx, TokenHash(secret), p, now); err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return Session{}, app.Fail(app.CodeUnauthenticated, "unknown token")
		}
		return Session{}, fmt.Errorf("open session: %w", err)
	}
	return Session{Principal: p, Secret: secret}, nil
}

// Handle finds the session of a cookie value; unauthenticated when it is
// unknown, its token is gone, it is older than [SessionMaxAge] or idle
// longer than [SessionIdleTimeout] (an expired session is deleted).
func (h *ResumeSessionHandler) Handle(ctx context.Context, q ResumeSession) (Session, error) {
	secret := q.Secret
	expired := app.Fail(app.CodeUnauthenticated, "the session has ended; sign in again")
	if len(secret) != sessionLen || secret[:len(SessionPrefix)] != SessionPrefix {
		return Session{}, expired
	}
	hash := TokenHash(secret)
	ws, err := h.d.Sessions.Lookup(ctx, hash)
	if errors.Is(err, ports.ErrNotFound) {
		return Session{}, expired
	}
	if err != nil {
		return Session{}, fmt.Errorf("resume session: %w", err)
	}
	now := h.d.Clock.Now()
	if now.Sub(ws.CreatedAt) >= SessionMaxAge || now.Sub(ws.LastSeenAt) >= SessionIdleTimeout {
		if err := h.d.Sessions.Delete(ctx, hash); err != nil {
			return Session{}, fmt.Errorf("end expired session: %w", err)
		}
		return Session{}, expired
	}
	if now.Sub(ws.LastSeenAt) >= sessionTouchEvery {
		if err := h.d.Sessions.Touch(ctx, hash, now); err != nil {
			return Session{}, fmt.Errorf("resume session: %w", err)
		}
	}
	return Session{Principal: ws.Principal, Secret: secret}, nil
}

// Handle deletes the session of a cookie value (nothing for junk).
func (h *SignOutHandler) Handle(ctx context.Context, cmd SignOut) error {
	secret := cmd.Secret
	if len(secret) != sessionLen {
		return nil
	}
	return h.d.Sessions.Delete(ctx, TokenHash(secret))
}

// newSecret returns prefix and 32 bytes of rand in unpadded base64url.
func newSecret(rand io.Reader, prefix string) (string, error) {
	b := make([]byte, tokenSecretBytes)
	if _, err := io.ReadFull(rand, b); err != nil {
		return "", fmt.Errorf("random secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}
