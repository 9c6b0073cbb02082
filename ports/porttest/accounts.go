package porttest

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"testing"

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

// tokenHash is the SHA-256 of a fresh random token.
func tokenHash(t *testing.T) []byte {
	s := sha256.Sum256([]byte(NewID(t)))
	return s[:]
}
