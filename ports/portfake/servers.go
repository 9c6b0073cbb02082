package portfake

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// Servers is an in-memory ports.ServerRepo of one tenant. Calls are
// serialised by Tenants; it keeps copies so a caller's later changes
// to an entity do not reach the "stored" row.
//
// When TenantID is set, Insert refuses a server of another tenant; when
// Calls is set, Delete deletes the server's call records too.
type Servers struct {
	Rows     map[string]*server.Server
	Creds    map[string][]byte
	TenantID string
	Calls    *Calls
	// Err, when set, is returned by every call (a failing database).
	Err error
	// Clock is the database's clock for ClaimDiscovery and
	// ClaimConnectionTest.
	Clock ports.Clock
	// Claims are the times of the servers' last discovery claims.
	Claims map[string]time.Time
	// Tests are the times of the tenant's counted connection tests.
	Tests []time.Time
	// CallCounts are the servers' calls counted by TakeCall in their
	// current window, by server id. Runs that share the fake share them.
	CallCounts map[string]CallCount
	// ListTTLs are the hints RecordListTTL kept, by server id.
	ListTTLs map[string]time.Duration
}

// CallCount is a server's calls counted in one window of TakeCall.
type CallCount struct {
	// Window is the start of the window.
	Window time.Time
	Calls  int
}

func NewServers() *Servers {
	return &Servers{Rows: map[string]*server.Server{}, Creds: map[string][]byte{}}
}

func cloneServer(s *server.Server) *server.Server { c := *s; return &c }

func (r *Servers) nameTaken(name server.Name, except string) bool {
	for id, s := range r.Rows {
		if id != except && s.Name() == name {
			return true
		}
	}
	return false
}

func (r *Servers) Insert(_ context.Context, s *server.Server, enc []byte, max int) error {
	if r.Err != nil {
		return r.Err
	}
	if r.TenantID != "" && s.TenantID() != r.TenantID {
		return fmt.Errorf("fake: insert: server of tenant %s in tenant %s", s.TenantID(), r.TenantID)
	}
	if len(r.Rows) >= max {
		return ports.ErrTooManyServers
	}
	if r.nameTaken(s.Name(), "") {
		return fmt.Errorf("insert: %w", ports.ErrNameTaken)
	}
	if _, used := r.Rows[s.ID()]; used {
		return fmt.Errorf("insert: %w", ports.ErrConflict)
	}
	r.Rows[s.ID()] = cloneServer(s)
	if enc != nil {
		r.Creds[s.ID()] = bytes.Clone(enc)
	}
	return nil
}

func (r *Servers) Get(_ context.Context, id string) (*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	s, ok := r.Rows[id]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return cloneServer(s), nil
}

func (r *Servers) List(_ context.Context) ([]*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	var out []*server.Server
	for _, s := range r.Rows {
		out = append(out, cloneServer(s))
	}
	slices.SortFunc(out, func(a, b *server.Server) int { return strings.Compare(a.Name().String(), b.Name().String()) })
	return out, nil
}

func (r *Servers) Update(_ context.Context, id string, fn func(*server.Server) (ports.CredentialUpdate, error)) (*server.Server, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	s, ok := r.Rows[id]
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
	r.Rows[id] = cloneServer(c)
	if cu.Replace {
		if cu.Encrypted == nil {
			delete(r.Creds, id)
		} else {
			r.Creds[id] = bytes.Clone(cu.Encrypted)
		}
	}
	return c, nil
}

func (r *Servers) Delete(_ context.Context, id string) error {
	if r.Err != nil {
		return r.Err
	}
	if _, ok := r.Rows[id]; !ok {
		return ports.ErrNotFound
	}
	delete(r.Rows, id)
	delete(r.Creds, id)
	delete(r.CallCounts, id)
	if r.Calls != nil {
		r.Calls.Records = slices.DeleteFunc(r.Calls.Records, func(c ports.ToolCall) bool { return c.ServerID == id })
	}
	return nil
}

func (r *Servers) Credential(_ context.Context, id string) ([]byte, error) {
	if _, ok := r.Rows[id]; !ok {
		return nil, ports.ErrNotFound
	}
	return bytes.Clone(r.Creds[id]), nil
}

// RecordListTTL keeps ttl in ListTTLs.
func (r *Servers) RecordListTTL(_ context.Context, id string, ttl time.Duration) error {
	if r.Err != nil {
		return r.Err
	}
	if _, ok := r.Rows[id]; !ok {
		return ports.ErrNotFound
	}
	if r.ListTTLs == nil {
		r.ListTTLs = map[string]time.Duration{}
	}
	r.ListTTLs[id] = ttl
	return nil
}

// ClaimDiscovery grants a claim when the last claim of the server (a
// discovery's or a test's) is at least interval older than the fake's
// clock (nil: always the zero time); a discovery's is its
// lastDiscoveryAt too.
func (r *Servers) ClaimDiscovery(_ context.Context, id string, interval time.Duration, l ports.Listing) (bool, time.Duration, error) {
	if r.Err != nil {
		return false, 0, r.Err
	}
	s, ok := r.Rows[id]
	if !ok {
		return false, 0, ports.ErrNotFound
	}
	now := r.claimNow()
	last, claimed := r.Claims[id]
	if !claimed {
		last, claimed = s.LastDiscoveryAt(), !s.LastDiscoveryAt().IsZero()
	}
	if claimed && now.Sub(last) < interval {
		return false, interval - now.Sub(last), nil
	}
	if r.Claims == nil {
		r.Claims = map[string]time.Time{}
	}
	r.Claims[id] = now
	if l == ports.ListingDiscovery {
		s.RecordDiscovery(now, s.LastError())
	}
	return true, 0, nil
}

// ClaimConnectionTest grants a test while fewer than max of the tenant's
// tests are younger than window by the fake's clock.
func (r *Servers) ClaimConnectionTest(_ context.Context, max int, window time.Duration) (bool, time.Duration, error) {
	if r.Err != nil {
		return false, 0, r.Err
	}
	now := r.claimNow()
	r.Tests = slices.DeleteFunc(r.Tests, func(at time.Time) bool { return now.Sub(at) >= window })
	if len(r.Tests) >= max {
		if len(r.Tests) == 0 {
			return false, window, nil
		}
		return false, window - now.Sub(slices.MinFunc(r.Tests, time.Time.Compare)), nil
	}
	r.Tests = append(r.Tests, now)
	return true, 0, nil
}

// TakeCall counts a call of the server in the current window of the
// fake's clock (nil: the zero time, one window for ever) while fewer than
// limit are counted in it; a new window starts from zero.
func (r *Servers) TakeCall(_ context.Context, serverID string, limit int, window time.Duration) (bool, error) {
	if r.Err != nil {
		return false, r.Err
	}
	if _, ok := r.Rows[serverID]; !ok {
		return false, ports.ErrNotFound
	}
	start := r.claimNow().Truncate(window)
	if r.CallCounts == nil {
		r.CallCounts = map[string]CallCount{}
	}
	c := r.CallCounts[serverID]
	if !c.Window.Equal(start) {
		c = CallCount{Window: start}
	}
	if c.Calls >= limit {
		return false, nil
	}
	c.Calls++
	r.CallCounts[serverID] = c
	return true, nil
}

func (r *Servers) claimNow() time.Time {
	if r.Clock == nil {
		return time.Time{}
	}
	return r.Clock.Now()
}
