package postgres_test

import (
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/ports"
)

func TestSessions(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	s := postgres.NewSessions(f.db)
	a := f.tenant(t, "a")
	tokenHash := sha256.Sum256([]byte("token-a"))
	tokenID, err := f.accounts.CreateToken(ctx, a, tokenHash[:], []string{"repo:manage"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	hash := sha256.Sum256([]byte("session-1"))

	// The tenant is the token's own, whatever the caller says.
	if err := s.Create(ctx, hash[:], ports.Principal{TokenID: tokenID, TenantID: f.tenant(t, "b")}, at); err != nil {
		t.Fatalf("Create: %v", err)
	}
	got, err := s.Lookup(ctx, hash[:])
	if err != nil || got.Principal.TenantID != a || got.Principal.TokenID != tokenID || len(got.Principal.Permissions) != 1 ||
		!got.CreatedAt.Equal(at) || !got.LastSeenAt.Equal(at) {
		t.Errorf("Lookup = %+v, %v; want tenant a, the token's permissions and the times", got, err)
	}
	if err := s.Create(ctx, sha256Of("session-2"), ports.Principal{TokenID: newID(t)}, at); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Create for an unknown token = %v, want ErrNotFound", err)
	}

	// Touch moves forward only.
	if err := s.Touch(ctx, hash[:], at.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(ctx, hash[:], at.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Lookup(ctx, hash[:]); !got.LastSeenAt.Equal(at.Add(10 * time.Minute)) {
		t.Errorf("last seen = %v, want the later touch", got.LastSeenAt)
	}

	// Expiry by age and by idleness.
	old := sha256Of("session-old")
	if err := s.Create(ctx, old, ports.Principal{TokenID: tokenID}, at.Add(-9*time.Hour)); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpired(ctx, at.Add(-8*time.Hour), at.Add(-30*time.Minute))
	if err != nil || n != 1 {
		t.Errorf("DeleteExpired = %d, %v; want the old session only", n, err)
	}
	if _, err := s.Lookup(ctx, hash[:]); err != nil {
		t.Errorf("the live session is gone: %v", err)
	}

	// Deleting the token deletes its sessions.
	if _, err := f.db.Bun().NewRaw("DELETE FROM api_tokens WHERE id = ?", tokenID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Lookup(ctx, hash[:]); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("Lookup after the token was deleted = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, hash[:]); err != nil {
		t.Errorf("Delete of a gone session = %v, want nil", err)
	}
}

func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}
