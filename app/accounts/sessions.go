package accounts

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
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

// SessionHandler opens, resumes and closes the web interface's sessions.
// A session carries the tenant and the permissions of the token it was
// opened with, read again from the token on every request: deleting the
// token ends the session. Safe for concurrent use.
type SessionHandler struct {
	auth     *Authenticator
	sessions ports.WebSessions
	clock    ports.Clock
}

// NewSessionHandler returns a [SessionHandler].
func NewSessionHandler(auth *Authenticator, sessions ports.WebSessions, clock ports.Clock) *SessionHandler {
	return &SessionHandler{auth: auth, sessions: sessions, clock: clock}
}

// SignIn checks an API token and opens a session for it; unauthenticated
// for a malformed or unknown token. Expired sessions of every tenant are
// removed on the way, so the table holds live sessions only.
func (h *SessionHandler) SignIn(ctx context.Context, token string) (Session, error) {
	p, err := h.auth.Authenticate(ctx, token)
	if errors.Is(err, ports.ErrNotFound) {
		return Session{}, app.Fail(app.CodeUnauthenticated, "unknown token")
	}
	if err != nil {
		return Session{}, err
	}
	now := h.clock.Now()
	if _, err := h.sessions.DeleteExpired(ctx, now.Add(-SessionMaxAge), now.Add(-SessionIdleTimeout)); err != nil {
		return Session{}, err
	}
	secret := newSecret(SessionPrefix)
	if err := h.sessions.Create(ctx, TokenHash(secret), p, now); err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			return Session{}, app.Fail(app.CodeUnauthenticated, "unknown token")
		}
		return Session{}, fmt.Errorf("open session: %w", err)
	}
	return Session{Principal: p, Secret: secret}, nil
}

// Resume finds the session of a cookie value; unauthenticated when it is
// unknown, its token is gone, it is older than [SessionMaxAge] or idle
// longer than [SessionIdleTimeout] (an expired session is deleted).
func (h *SessionHandler) Resume(ctx context.Context, secret string) (Session, error) {
	expired := app.Fail(app.CodeUnauthenticated, "the session has ended; sign in again")
	if len(secret) != sessionLen || secret[:len(SessionPrefix)] != SessionPrefix {
		return Session{}, expired
	}
	hash := TokenHash(secret)
	ws, err := h.sessions.Lookup(ctx, hash)
	if errors.Is(err, ports.ErrNotFound) {
		return Session{}, expired
	}
	if err != nil {
		return Session{}, fmt.Errorf("resume session: %w", err)
	}
	now := h.clock.Now()
	if now.Sub(ws.CreatedAt) >= SessionMaxAge || now.Sub(ws.LastSeenAt) >= SessionIdleTimeout {
		if err := h.sessions.Delete(ctx, hash); err != nil {
			return Session{}, fmt.Errorf("end expired session: %w", err)
		}
		return Session{}, expired
	}
	if now.Sub(ws.LastSeenAt) >= sessionTouchEvery {
		if err := h.sessions.Touch(ctx, hash, now); err != nil {
			return Session{}, fmt.Errorf("resume session: %w", err)
		}
	}
	return Session{Principal: ws.Principal, Secret: secret}, nil
}

// SignOut deletes the session of a cookie value (nothing for junk).
func (h *SessionHandler) SignOut(ctx context.Context, secret string) error {
	if len(secret) != sessionLen {
		return nil
	}
	return h.sessions.Delete(ctx, TokenHash(secret))
}

// newSecret returns prefix and 32 random bytes in unpadded base64url.
func newSecret(prefix string) string {
	b := make([]byte, tokenSecretBytes)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}
