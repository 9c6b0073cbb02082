package app_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// fakeServerRepo is an in-memory ports.ServerRepo of one tenant. Calls are
// serialised by fakeTenants; it keeps copies so a caller's later changes
// to an entity do not reach the "stored" row.
type fakeServerRepo struct {
	rows  map[string]*server.Server
	creds map[string][]byte
	// err, when set, is returned by every call (a failing database).
	err error
	// clock is the database's clock for ClaimDiscovery.
	clock ports.Clock
}

func newFakeServerRepo() *fakeServerRepo {
	return &fakeServerRepo{rows: map[string]*server.Server{}, creds: map[string][]byte{}}
}

func cloneServer(s *server.Server) *server.Server { c := *s; return &c }

func (r *fakeServerRepo) nameTaken(name server.Name, except string) bool {
	for id, s := range r.rows {
		if id != except && s.Name() == name {
			return true
		}
	}
	return false
}

func (r *fakeServerRepo) Insert(_ context.Context, s *server.Server, enc []byte, max int) error {
	if r.err != nil {
		return r.err
	}
	if len(r.rows) >= max {
		return ports.ErrTooManyServers
	}
	if r.nameTaken(s.Name(), "") {
		return fmt.Errorf("insert: %w", ports.ErrNameTaken)
	}
	r.rows[s.ID()] = cloneServer(s)
	if enc != nil {
		r.creds[s.ID()] = bytes.Clone(enc)
	}
	return nil
}

func (r *fakeServerRepo) Get(_ context.Context, id string) (*server.Server, error) {
	if r.err != nil {
		return nil, r.err
	}
	s, ok := r.rows[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return cloneServer(s), nil
}

func (r *fakeServerRepo) List(_ context.Context) ([]*server.Server, error) {
	if r.err != nil {
		return nil, r.err
	}
	var out []*server.Server
	for _, s := range r.rows {
		out = append(out, cloneServer(s))
	}
	slices.SortFunc(out, func(a, b *server.Server) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	return out, nil
}

func (r *fakeServerRepo) Update(_ context.Context, id string, fn func(*server.Server) (ports.CredentialUpdate, error)) (*server.Server, error) {
	if r.err != nil {
		return nil, r.err
	}
	s, ok := r.rows[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	c := cloneServer(s)
	cu, err := fn(c)
	if err != nil {
		return nil, err
	}
	if r.nameTaken(c.Name(), id) {
		return nil, ports.ErrNameTaken
	}
	r.rows[id] = cloneServer(c)
	if cu.Replace {
		if cu.Encrypted == nil {
			delete(r.creds, id)
		} else {
			r.creds[id] = bytes.Clone(cu.Encrypted)
		}
	}
	return c, nil
}

func (r *fakeServerRepo) Delete(_ context.Context, id string) error {
	if r.err != nil {
		return r.err
	}
	if _, ok := r.rows[id]; !ok {
		return ports.ErrNotFound
	}
	delete(r.rows, id)
	delete(r.creds, id)
	return nil
}

func (r *fakeServerRepo) Credential(_ context.Context, id string) ([]byte, error) {
	if _, ok := r.rows[id]; !ok {
		return nil, ports.ErrNotFound
	}
	return bytes.Clone(r.creds[id]), nil
}

// fakeResolver answers from a table; a host not in it does not resolve.
type fakeResolver struct {
	mu      sync.Mutex
	addrs   map[string][]netip.Addr
	lookups []string
}

func (f *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, host)
	a, ok := f.addrs[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return a, nil
}

// fakeCipher is a transparent stand-in for the key ring: "key|aad|hex".
// It checks key ids and the associated data like the real one, without
// the cryptography (adapters/crypto has its own tests).
type fakeCipher struct {
	keys []string // keys[0] is the primary; empty: no keys
}

var errFakeNoKeys = errors.New("fake: no keys")

func (c *fakeCipher) Seal(plain, aad []byte) ([]byte, error) {
	if len(c.keys) == 0 {
		return nil, errFakeNoKeys
	}
	return []byte(c.keys[0] + "|" + string(aad) + "|" + hex.EncodeToString(plain)), nil
}

func (c *fakeCipher) Open(sealed, aad []byte) ([]byte, error) {
	if len(c.keys) == 0 {
		return nil, errFakeNoKeys
	}
	parts := strings.SplitN(string(sealed), "|", 3)
	if len(parts) != 3 {
		return nil, errors.New("fake: malformed")
	}
	if !slices.Contains(c.keys, parts[0]) {
		return nil, errors.New("fake: unknown key")
	}
	if parts[1] != string(aad) {
		return nil, errors.New("fake: wrong aad")
	}
	return hex.DecodeString(parts[2])
}

func (c *fakeCipher) IsPrimary(sealed []byte) bool {
	return len(c.keys) > 0 && strings.HasPrefix(string(sealed), c.keys[0]+"|")
}

// fakeRotator is an in-memory ports.CredentialRotator.
type fakeRotator struct {
	creds map[string][]byte
	// beforeReplace runs before each Replace (to simulate a concurrent writer).
	beforeReplace func(serverID string)
	batches       int
}

func (f *fakeRotator) Batch(_ context.Context, after string, limit int) ([]ports.EncryptedCredential, error) {
	f.batches++
	ids := make([]string, 0, len(f.creds))
	for id := range f.creds {
		if id > after {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) > limit {
		ids = ids[:limit]
	}
	out := make([]ports.EncryptedCredential, len(ids))
	for i, id := range ids {
		out[i] = ports.EncryptedCredential{ServerID: id, Encrypted: bytes.Clone(f.creds[id])}
	}
	return out, nil
}

func (f *fakeRotator) Replace(_ context.Context, id string, old, enc []byte) (bool, error) {
	if f.beforeReplace != nil {
		f.beforeReplace(id)
	}
	if !bytes.Equal(f.creds[id], old) {
		return false, nil
	}
	f.creds[id] = bytes.Clone(enc)
	return true, nil
}

// ClaimDiscovery grants a claim when the last discovery is at least
// interval older than the fake's clock (nil: always the zero time).
func (r *fakeServerRepo) ClaimDiscovery(_ context.Context, id string, interval time.Duration) (bool, time.Duration, error) {
	if r.err != nil {
		return false, 0, r.err
	}
	s, ok := r.rows[id]
	if !ok {
		return false, 0, ports.ErrNotFound
	}
	now := r.now()
	if last := s.LastDiscoveryAt(); !last.IsZero() && now.Sub(last) < interval {
		return false, interval - now.Sub(last), nil
	}
	s.RecordDiscovery(now, s.LastError())
	return true, 0, nil
}

func (r *fakeServerRepo) now() time.Time {
	if r.clock == nil {
		return time.Time{}
	}
	return r.clock.Now()
}
