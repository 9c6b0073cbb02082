package porttest

import (
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// WebSessions is the contract of [ports.WebSessions] (uses Sessions and
// Accounts).
func WebSessions(t *testing.T, open Open) {
	t.Run("a revoked or expired token ends its sessions at once", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		revoked := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: tokenHash(t)}))
		expiring := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: tokenHash(t), ExpiresAt: time.Now().Add(300 * time.Millisecond)}))
		s1, s2 := tokenHash(t), tokenHash(t)
		for _, c := range []struct {
			hash  []byte
			token string
		}{{s1, revoked}, {s2, expiring}} {
			if err := h.Sessions.Create(t.Context(), c.hash, ports.Principal{TokenID: c.token}, T0); err != nil {
				t.Fatal(err)
			}
			must(h.Sessions.Lookup(t.Context(), c.hash))
		}
		must(h.Accounts.RevokeToken(t.Context(), tenant, revoked))
		_, err := h.Sessions.Lookup(t.Context(), s1)
		isErr(t, "Lookup of a revoked token's session", err, ports.ErrNotFound)
		time.Sleep(400 * time.Millisecond)
		_, err = h.Sessions.Lookup(t.Context(), s2)
		isErr(t, "Lookup of an expired token's session", err, ports.ErrNotFound)
		err = h.Sessions.Create(t.Context(), tokenHash(t), ports.Principal{TokenID: expiring}, T0)
		isErr(t, "Create for an expired token", err, ports.ErrNotFound)
	})

	t.Run("Create stores a session of the token's own tenant; Lookup finds it with the token's permissions", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		perms := []string{"repo:manage", "tenant:manage"}
		token := must(h.Accounts.CreateToken(t.Context(), tenant, tokenHash(t), perms))
		hash := tokenHash(t)
		// The caller's tenant and permissions are not what is stored.
		if err := h.Sessions.Create(t.Context(), hash, ports.Principal{TokenID: token, TenantID: other, Permissions: []string{"x"}}, T0); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			got, err := h.Sessions.Lookup(t.Context(), hash)
			if err != nil || got.Principal.TokenID != token || got.Principal.TenantID != tenant ||
				len(got.Principal.Permissions) != 2 || got.Principal.Permissions[0] != perms[0] ||
				!got.CreatedAt.Equal(T0) || !got.LastSeenAt.Equal(T0) {
				t.Errorf("Lookup = %+v, %v; want token %s of tenant %s with %v, created and seen at %v", got, err, token, tenant, perms, T0)
			}
		}
	})

	t.Run("Create for a missing or malformed token and Lookup of an unknown hash are ErrNotFound", func(t *testing.T) {
		h := open(t)
		for _, token := range []string{NewID(t), "not-a-uuid", ""} {
			err := h.Sessions.Create(t.Context(), tokenHash(t), ports.Principal{TokenID: token, TenantID: h.tenant(t)}, T0)
			isErr(t, "Create for token "+token, err, ports.ErrNotFound)
		}
		for _, hash := range [][]byte{tokenHash(t), nil} {
			_, err := h.Sessions.Lookup(t.Context(), hash)
			isErr(t, "Lookup", err, ports.ErrNotFound)
		}
	})

	t.Run("Touch moves the last use forward only; Delete ends a session, again without error", func(t *testing.T) {
		h := open(t)
		token := must(h.Accounts.CreateToken(t.Context(), h.tenant(t), tokenHash(t), nil))
		hash, other := tokenHash(t), tokenHash(t)
		for _, s := range [][]byte{hash, other} {
			if err := h.Sessions.Create(t.Context(), s, ports.Principal{TokenID: token}, T0); err != nil {
				t.Fatal(err)
			}
		}
		for _, at := range []time.Time{T0.Add(10 * time.Minute), T0.Add(5 * time.Minute)} {
			if err := h.Sessions.Touch(t.Context(), hash, at); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.Sessions.Touch(t.Context(), tokenHash(t), T0); err != nil {
			t.Errorf("Touch of an unknown session = %v, want nil", err)
		}
		if got := must(h.Sessions.Lookup(t.Context(), hash)); !got.LastSeenAt.Equal(T0.Add(10*time.Minute)) || !got.CreatedAt.Equal(T0) {
			t.Errorf("after touches: created %v, last seen %v; want %v, the later touch", got.CreatedAt, got.LastSeenAt, T0)
		}
		for range 2 {
			if err := h.Sessions.Delete(t.Context(), hash); err != nil {
				t.Errorf("Delete = %v", err)
			}
		}
		_, err := h.Sessions.Lookup(t.Context(), hash)
		isErr(t, "Lookup after Delete", err, ports.ErrNotFound)
		if _, err := h.Sessions.Lookup(t.Context(), other); err != nil {
			t.Errorf("Delete ended another session: %v", err)
		}
	})

	t.Run("DeleteExpired removes sessions created or last used strictly before the bounds, and counts them", func(t *testing.T) {
		h := open(t)
		token := must(h.Accounts.CreateToken(t.Context(), h.tenant(t), tokenHash(t), nil))
		// The bounds lie before every other subtest's sessions.
		createdBefore, idleBefore := T0.Add(-15*time.Hour), T0.Add(-12*time.Hour)
		sessions := []struct {
			created, seen time.Time
			kept          bool
		}{
			{T0.Add(-20 * time.Hour), T0.Add(-20 * time.Hour), false}, // too old and idle
			{T0.Add(-16 * time.Hour), T0.Add(-time.Hour), false},      // too old, though in use
			{createdBefore, T0.Add(-11 * time.Hour), true},            // created at the bound
			{T0.Add(-14 * time.Hour), T0.Add(-14 * time.Hour), false}, // idle
			{T0.Add(-13 * time.Hour), idleBefore, true},               // last used at the bound
			{T0.Add(-11 * time.Hour), T0.Add(-11 * time.Hour), true},
		}
		hashes := make([][]byte, len(sessions))
		for i, s := range sessions {
			hashes[i] = tokenHash(t)
			if err := h.Sessions.Create(t.Context(), hashes[i], ports.Principal{TokenID: token}, s.created); err != nil {
				t.Fatal(err)
			}
			if err := h.Sessions.Touch(t.Context(), hashes[i], s.seen); err != nil {
				t.Fatal(err)
			}
		}
		if n := must(h.Sessions.DeleteExpired(t.Context(), createdBefore, idleBefore)); n != 3 {
			t.Errorf("DeleteExpired = %d, want 3", n)
		}
		for i, s := range sessions {
			_, err := h.Sessions.Lookup(t.Context(), hashes[i])
			if kept := err == nil; kept != s.kept {
				t.Errorf("session %d (created %v, seen %v): kept %v, want %v", i, s.created, s.seen, kept, s.kept)
			}
		}
		if n := must(h.Sessions.DeleteExpired(t.Context(), createdBefore, idleBefore)); n != 0 {
			t.Errorf("second DeleteExpired = %d, want 0", n)
		}
	})
}
