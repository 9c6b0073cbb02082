package porttest

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/id"
	"github.com/codelotse/codelotse/ports"
)

// Accounts is the contract of [ports.Accounts] (uses Accounts only).
func Accounts(t *testing.T, open Open) {
	t.Run("CreateTenant gives a new canonical UUID each time, names need not be unique", func(t *testing.T) {
		a := open(t).Accounts
		x, err := a.CreateTenant(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		y, err := a.CreateTenant(t.Context(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if !id.Valid(x) || !id.Valid(y) || x == y {
			t.Errorf("tenant ids %q and %q, want two different canonical UUIDs", x, y)
		}
	})

	t.Run("CreateToken stores a hash; LookupToken finds its principal, again and again", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		perms := []string{"tenant:manage", "repo:manage", "review:submit"}
		hash, bare := tokenHash(t), tokenHash(t)
		tokenID, err := h.Accounts.CreateToken(t.Context(), tenant, hash, perms)
		if err != nil {
			t.Fatal(err)
		}
		bareID, err := h.Accounts.CreateToken(t.Context(), tenant, bare, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !id.Valid(tokenID) || !id.Valid(bareID) || tokenID == bareID {
			t.Errorf("token ids %q and %q, want two different canonical UUIDs", tokenID, bareID)
		}
		for range 2 {
			p, err := h.Accounts.LookupToken(t.Context(), hash)
			if err != nil || p.TokenID != tokenID || p.TenantID != tenant || !slices.Equal(p.Permissions, perms) {
				t.Errorf("LookupToken = %+v, %v; want %s of %s with %v", p, err, tokenID, tenant, perms)
			}
		}
		p, err := h.Accounts.LookupToken(t.Context(), bare)
		if err != nil || p.TokenID != bareID || len(p.Permissions) != 0 {
			t.Errorf("LookupToken of a token without permissions = %+v, %v", p, err)
		}
	})

	t.Run("LookupToken of an unknown hash is ErrNotFound", func(t *testing.T) {
		h := open(t)
		hash := tokenHash(t)
		if _, err := h.Accounts.CreateToken(t.Context(), h.tenant(t), hash, nil); err != nil {
			t.Fatal(err)
		}
		flipped := bytes.Clone(hash)
		flipped[31] ^= 1
		for _, b := range [][]byte{tokenHash(t), flipped, hash[:31], nil, {}} {
			_, err := h.Accounts.LookupToken(t.Context(), b)
			isErr(t, "LookupToken", err, ports.ErrNotFound)
		}
	})

	t.Run("CreateToken refuses an unknown tenant, a used hash and a hash that is not SHA-256", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		for _, tn := range []string{NewID(t), "not-a-uuid", ""} {
			_, err := h.Accounts.CreateToken(t.Context(), tn, tokenHash(t), nil)
			isErr(t, "CreateToken for tenant "+tn, err, ports.ErrNotFound)
		}
		hash := tokenHash(t)
		first, err := h.Accounts.CreateToken(t.Context(), tenant, hash, []string{"a"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Accounts.CreateToken(t.Context(), other, hash, []string{"b"})
		isErr(t, "CreateToken with a used hash", err, ports.ErrConflict)
		if p, err := h.Accounts.LookupToken(t.Context(), hash); err != nil || p.TokenID != first || p.TenantID != tenant {
			t.Errorf("after a refused token, the hash leads to %+v, %v; want the first token", p, err)
		}
		for _, b := range [][]byte{hash[:16], append(bytes.Clone(hash), 0), nil} {
			if _, err := h.Accounts.CreateToken(t.Context(), tenant, b, nil); err == nil {
				t.Errorf("CreateToken with a %d-byte hash succeeded", len(b))
			}
		}
	})
}

// TokenLifecycle is the contract of the token methods an operator needs:
// labels and expiry, listing without secrets, revocation. Expiry is
// judged by the store's clock (PostgreSQL's now()), so the test uses
// wall-clock times.
func TokenLifecycle(t *testing.T, open Open) {
	t.Run("IssueToken keeps label and expiry; ListTokens shows the tenant's tokens oldest first, never a hash", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
		hash := tokenHash(t)
		first := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: hash, Permissions: []string{"repo:manage"}, Label: "ci: nightly", ExpiresAt: exp}))
		second := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: tokenHash(t), Permissions: nil}))
		must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: other, Hash: tokenHash(t), Label: "other"}))
		list := must(h.Accounts.ListTokens(t.Context(), tenant))
		if len(list) != 2 || list[0].ID != first || list[1].ID != second {
			t.Fatalf("ListTokens = %+v, want %s then %s", list, first, second)
		}
		a, b := list[0], list[1]
		if a.Label != "ci: nightly" || !a.ExpiresAt.Equal(exp) || a.TenantID != tenant || !slices.Equal(a.Permissions, []string{"repo:manage"}) ||
			a.CreatedAt.IsZero() || !a.LastUsedAt.IsZero() {
			t.Errorf("first token %+v", a)
		}
		if b.Label != "" || !b.ExpiresAt.IsZero() || b.Permissions == nil || len(b.Permissions) != 0 {
			t.Errorf("second token %+v", b)
		}
		if strings.Contains(fmt.Sprintf("%+v", list), fmt.Sprint(hash)) {
			t.Errorf("the list shows a hash")
		}
		must(h.Accounts.LookupToken(t.Context(), hash))
		if got := must(h.Accounts.ListTokens(t.Context(), tenant)); got[0].LastUsedAt.IsZero() {
			t.Errorf("a used token has no last use: %+v", got[0])
		}
		if got := must(h.Accounts.ListTokens(t.Context(), NewID(t))); len(got) != 0 {
			t.Errorf("an unknown tenant lists %d tokens", len(got))
		}
	})

	t.Run("a token past its expiry is not found at once", func(t *testing.T) {
		h := open(t)
		tenant := h.tenant(t)
		hash := tokenHash(t)
		must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: hash, ExpiresAt: time.Now().Add(300 * time.Millisecond)}))
		must(h.Accounts.LookupToken(t.Context(), hash))
		time.Sleep(400 * time.Millisecond)
		_, err := h.Accounts.LookupToken(t.Context(), hash)
		isErr(t, "LookupToken of an expired token", err, ports.ErrNotFound)
		if got := must(h.Accounts.ListTokens(t.Context(), tenant)); len(got) != 1 {
			t.Errorf("an expired token left the list: %+v", got)
		}
	})

	t.Run("RevokeToken deletes the token at once, only in its tenant; the operator's revoke matches any tenant", func(t *testing.T) {
		h := open(t)
		tenant, other := h.tenant(t), h.tenant(t)
		hash, hash2 := tokenHash(t), tokenHash(t)
		id1 := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: hash, Label: "a"}))
		id2 := must(h.Accounts.IssueToken(t.Context(), ports.NewToken{TenantID: tenant, Hash: hash2}))
		_, err := h.Accounts.RevokeToken(t.Context(), other, id1)
		isErr(t, "RevokeToken from another tenant", err, ports.ErrNotFound)
		must(h.Accounts.LookupToken(t.Context(), hash))
		got, err := h.Accounts.RevokeToken(t.Context(), tenant, id1)
		if err != nil || got.ID != id1 || got.TenantID != tenant || got.Label != "a" {
			t.Fatalf("RevokeToken = %+v, %v", got, err)
		}
		_, err = h.Accounts.LookupToken(t.Context(), hash)
		isErr(t, "LookupToken of a revoked token", err, ports.ErrNotFound)
		_, err = h.Accounts.RevokeToken(t.Context(), tenant, id1)
		isErr(t, "RevokeToken again", err, ports.ErrNotFound)
		for _, bad := range []string{NewID(t), "not-a-uuid", ""} {
			_, err = h.Accounts.RevokeToken(t.Context(), "", bad)
			isErr(t, "RevokeToken of "+bad, err, ports.ErrNotFound)
		}
		if got, err := h.Accounts.RevokeToken(t.Context(), "", id2); err != nil || got.TenantID != tenant {
			t.Errorf("operator's RevokeToken = %+v, %v", got, err)
		}
		if list := must(h.Accounts.ListTokens(t.Context(), tenant)); len(list) != 0 {
			t.Errorf("revoked tokens still listed: %+v", list)
		}
	})
}

// tokenHash is the SHA-256 of a fresh random token.
func tokenHash(t *testing.T) []byte {
	s := sha256.Sum256([]byte(NewID(t)))
	return s[:]
}
