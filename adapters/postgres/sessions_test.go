package postgres_test

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
	"github.com/codelotse/codelotse/ports"
)

// The session port's semantics are the contract suite's
// (porttest.WebSessions); here, what the ports cannot do: deleting a
// token deletes its sessions.
func TestSessionsEndWithTheirToken(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := postgres.NewSessions(f.db)
	tokenHash := sha256.Sum256([]byte("token-a"))
	tokenID, err := f.accounts.CreateToken(ctx, f.tenant(t, "a"), tokenHash[:], []string{"repo:manage"})
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256Of("session-1")
	if err := s.Create(ctx, hash, ports.Principal{TokenID: tokenID}, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, hash); err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	su := pgtest.Superuser(t, f.db)
	if _, err := su.Bun().NewRaw("DELETE FROM api_tokens WHERE id = ?", tokenID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, hash); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Lookup after the token was deleted = %v, want ErrNotFound", err)
	}
	var n int
	if err := su.Bun().NewRaw("SELECT count(*) FROM web_sessions").Scan(ctx, &n); err != nil || n != 0 {
		t.Errorf("%d session rows left after the token was deleted (%v), want 0", n, err)
	}
}

func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
