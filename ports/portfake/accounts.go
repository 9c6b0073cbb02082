package portfake

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// Accounts is an in-memory ports.Accounts. It keeps what CreateToken
// received, so tests can check that no plaintext token reaches it.
// Expiry is judged with Now (time.Now when nil).
type Accounts struct {
	Tenants map[string]string
	Tokens  map[string]ports.Principal // key: string(hash)
	Infos   map[string]ports.TokenInfo // key: token id
	Hashes  [][]byte
	Now     func() time.Time
	nextID  int
}

func (f *Accounts) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

func NewAccounts() *Accounts {
	return &Accounts{Tenants: map[string]string{}, Tokens: map[string]ports.Principal{}}
}

func (f *Accounts) CreateTenant(_ context.Context, name string) (string, error) {
	f.nextID++
	id := UUID(f.nextID)
	f.Tenants[id] = name
	return id, nil
}

func (f *Accounts) CreateToken(ctx context.Context, tenantID string, hash []byte, perms []string) (string, error) {
	return f.IssueToken(ctx, ports.NewToken{TenantID: tenantID, Hash: hash, Permissions: perms})
}

func (f *Accounts) IssueToken(_ context.Context, t ports.NewToken) (string, error) {
	tenantID, hash, perms := t.TenantID, t.Hash, t.Permissions
	if _, ok := f.Tenants[tenantID]; !ok {
		return "", ports.ErrNotFound
	}
	if len(hash) != 32 {
		return "", fmt.Errorf("fake: token hash has %d bytes, want 32 (SHA-256)", len(hash))
	}
	if _, used := f.Tokens[string(hash)]; used {
		return "", ports.ErrConflict
	}
	f.nextID++
	id := UUID(f.nextID)
	f.Hashes = append(f.Hashes, append([]byte{}, hash...))
	f.Tokens[string(hash)] = ports.Principal{TokenID: id, TenantID: tenantID, Permissions: perms}
	if f.Infos == nil {
		f.Infos = map[string]ports.TokenInfo{}
	}
	if perms == nil {
		perms = []string{}
	}
	f.Infos[id] = ports.TokenInfo{ID: id, TenantID: tenantID, Label: t.Label, Permissions: slices.Clone(perms), CreatedAt: f.now(), ExpiresAt: t.ExpiresAt}
	return id, nil
}

func (f *Accounts) LookupToken(_ context.Context, hash []byte) (ports.Principal, error) {
	p, ok := f.Tokens[string(hash)]
	if !ok {
		return ports.Principal{}, ports.ErrNotFound
	}
	if in, ok := f.Infos[p.TokenID]; ok {
		if !in.ExpiresAt.IsZero() && !f.now().Before(in.ExpiresAt) {
			return ports.Principal{}, ports.ErrNotFound
		}
		in.LastUsedAt = f.now()
		f.Infos[p.TokenID] = in
	}
	return p, nil
}

func (f *Accounts) ListTokens(_ context.Context, tenantID string) ([]ports.TokenInfo, error) {
	out := []ports.TokenInfo{}
	for _, in := range f.Infos {
		if in.TenantID == tenantID {
			in.Permissions = slices.Clone(in.Permissions)
			out = append(out, in)
		}
	}
	slices.SortFunc(out, func(a, b ports.TokenInfo) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

func (f *Accounts) RevokeToken(_ context.Context, tenantID, id string) (ports.TokenInfo, error) {
	in, ok := f.Infos[id]
	if !ok || (tenantID != "" && in.TenantID != tenantID) {
		return ports.TokenInfo{}, ports.ErrNotFound
	}
	delete(f.Infos, id)
	for h, p := range f.Tokens {
		if p.TokenID == id {
			delete(f.Tokens, h)
		}
	}
	return in, nil
}

// UUID is a deterministic canonical UUID for test ids.
func UUID(n int) string {
	const tmpl = "00000000-0000-4000-8000-000000000000"
	s := []byte(tmpl)
	d := []byte(itoa(n))
	copy(s[len(s)-len(d):], d)
	return string(s)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
