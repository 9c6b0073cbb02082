package postgres_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/postgres"
	"github.com/codelotse/codelotse/domain/server"
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

	// Expiry by age or by idleness: one session old and idle, one only
	// idle, one only old (touched just now).
	for _, c := range []struct {
		name           string
		created, touch time.Time
	}{
		{"session-old", at.Add(-9 * time.Hour), at.Add(-9 * time.Hour)},
		{"session-idle", at.Add(-time.Hour), at.Add(-time.Hour)},
		{"session-aged", at.Add(-9 * time.Hour), at},
	} {
		if err := s.Create(ctx, sha256Of(c.name), ports.Principal{TokenID: tokenID}, c.created); err != nil {
			t.Fatal(err)
		}
		if err := s.Touch(ctx, sha256Of(c.name), c.touch); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteExpired(ctx, at.Add(-8*time.Hour), at.Add(-30*time.Minute))
	if err != nil || n != 3 {
		t.Errorf("DeleteExpired = %d, %v; want the old, the idle and the aged session", n, err)
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

func TestRecentReviewsAndTheirCalls(t *testing.T) {
	f := newFixture(t)
	a, b := f.tenant(t, "a"), f.tenant(t, "b")
	repoA, repoB := f.newRepository(t, a), f.newRepository(t, b)
	var runs []ports.ReviewRun
	for range 3 {
		run := newRun(t, repoA)
		runs = append(runs, run)
		f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, run) })
	}
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error { return tx.Reviews().Insert(ctx, newRun(t, repoB)) })

	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		got, err := tx.Reviews().Recent(ctx, repoA, 2)
		if err != nil || len(got) != 2 {
			t.Fatalf("Recent(2) = %d runs, %v", len(got), err)
		}
		for _, r := range got {
			if r.Diff != "" || len(r.Files) != 0 || r.RepositoryID != repoA || r.Title == "" {
				t.Errorf("Recent gave %+v, want a summary without diff and files", r)
			}
		}
		if other, _ := tx.Reviews().Recent(ctx, repoB, 10); len(other) != 0 {
			t.Errorf("tenant a sees %d runs of tenant b's repository", len(other))
		}
		return nil
	})
	wiki := newServer(t, a, "wiki", server.NoCredential())
	f.insert(t, wiki, nil)
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		for i, tool := range []string{"first", "second", "third"} {
			if err := tx.Calls().Record(ctx, ports.ToolCall{ServerID: wiki.ID(), ReviewID: runs[0].ID, Tool: tool, Status: "ok",
				CreatedAt: now.Add(time.Duration(i) * time.Second)}); err != nil {
				return err
			}
		}
		return tx.Calls().Record(ctx, ports.ToolCall{ServerID: wiki.ID(), ReviewID: runs[1].ID, Tool: "other", Status: "ok"})
	})
	f.in(t, a, func(ctx context.Context, tx ports.TenantTx) error {
		calls, err := tx.Calls().ForReview(ctx, runs[0].ID, 2)
		if err != nil || len(calls) != 2 || calls[0].Tool != "first" || calls[1].Tool != "second" {
			t.Errorf("ForReview(2) = %+v, %v; want first and second, oldest first", calls, err)
		}
		return nil
	})
	f.in(t, b, func(ctx context.Context, tx ports.TenantTx) error {
		calls, err := tx.Calls().ForReview(ctx, runs[0].ID, 10)
		if err != nil || len(calls) != 0 {
			t.Errorf("tenant b reads %d calls of tenant a's review (%v)", len(calls), err)
		}
		return nil
	})
}
