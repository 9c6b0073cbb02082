package ports

import (
	"context"
	"time"
)

// WebSession is a signed-in session of the web interface: the token it was
// opened with, that token's tenant and current permissions, and its times.
type WebSession struct {
	Principal  Principal
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// WebSessions stores web sessions by the SHA-256 of their cookie value,
// outside any one tenant's scope (like tokens). A session belongs to its
// token: deleting the token deletes its sessions. Safe for concurrent use.
type WebSessions interface {
	// Create stores a session for the token p.TokenID; ErrNotFound when
	// the token no longer exists.
	Create(ctx context.Context, hash []byte, p Principal, at time.Time) error
	// Lookup returns the session with this hash and its token's current
	// permissions; ErrNotFound when there is none.
	Lookup(ctx context.Context, hash []byte) (WebSession, error)
	// Touch records use of the session at time at.
	Touch(ctx context.Context, hash []byte, at time.Time) error
	// Delete removes the session (no error when it is already gone).
	Delete(ctx context.Context, hash []byte) error
	// DeleteExpired removes every session created before createdBefore or
	// last used before idleBefore and returns how many.
	DeleteExpired(ctx context.Context, createdBefore, idleBefore time.Time) (int64, error)
}
