package registry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/ports"
)

func TestConnectionTestsStoreNothing(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	h := registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps)
	auditBefore := len(e.audit(srvTenantA))

	got, err := h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
	if err != nil || !got.OK || got.Tools != 4 {
		t.Errorf("test of a registered server = %+v, %v; want ok, 4 tools", got, err)
	}
	if e.conn.opened[0].Credential.HeaderValue() != "Bearer "+srvSecretToken || e.conn.opened[0].SaveCredential != nil {
		t.Error("the test did not use the stored credential, or could save one")
	}
	got, err = h.HandleNew(context.Background(), srvPrincipalA, srvBearerCmd("new_wiki", e.url))
	if err != nil || !got.OK || got.Tools != 4 {
		t.Errorf("test before registering = %+v, %v", got, err)
	}
	e.conn.err = fmt.Errorf("dial: %w", ports.ErrServerUnauthorized)
	e.clock.At = e.clock.At.Add(limits.DiscoveryInterval)
	got, err = h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
	if err != nil || got.OK || got.Code != app.CodeServerUnauthorized {
		t.Errorf("a refused credential = %+v, %v; want server_unauthorized", got, err)
	}
	s := e.get(t, id)
	if s.LastError() != "" || !s.LastDiscoveryAt().IsZero() || len(e.audit(srvTenantA)) != auditBefore {
		t.Errorf("a test stored something: lastError %q, lastDiscoveryAt %v, audit %d → %d", s.LastError(), s.LastDiscoveryAt(), auditBefore, len(e.audit(srvTenantA)))
	}
	if _, ok := s.Listed(); ok {
		t.Error("a test stored a listing")
	}
	if len(e.repos[srvTenantA].Rows) != 1 {
		t.Errorf("%d servers stored, want the one registered", len(e.repos[srvTenantA].Rows))
	}

	// The registration's rules and the gates.
	bad := srvBearerCmd("new_wiki", "http://wiki.example.com/mcp")
	_, err = h.HandleNew(context.Background(), srvPrincipalA, bad)
	srvWantCode(t, err, app.CodeValidationFailed)
	_, err = h.HandleNew(context.Background(), srvPrincipalA, srvBearerCmd("new_wiki", "https://intra.example/mcp"))
	srvWantCode(t, err, app.CodeEndpointNotPublic)
	e.deps.Gates.SignedOff = false
	h = registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps)
	_, err = h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
	srvWantCode(t, err, app.CodeNotSignedOff)
}

// A registered server's connection test takes the discovery's claim: a
// test right after a discovery (or a test) of the server, or a discovery
// right after a test, is discovery_throttled with the time to wait and
// sends nothing; other servers are not held up.
func TestConnectionTestTakesTheDiscoveryClaim(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	h := registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps)
	test := func() error {
		_, err := h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
		return err
	}
	throttled := func(what string, err error, opens int) {
		t.Helper()
		ae := srvWantCode(t, err, app.CodeDiscoveryThrottled)
		if ae != nil && (ae.RetryAfter <= 0 || ae.RetryAfter > limits.DiscoveryInterval) {
			t.Errorf("%s: RetryAfter = %v, want within (0, 10 s]", what, ae.RetryAfter)
		}
		if len(e.conn.opened) != opens {
			t.Errorf("%s reached the network (%d opens, want %d)", what, len(e.conn.opened), opens)
		}
	}
	if err := test(); err != nil {
		t.Fatal(err)
	}
	e.clock.At = e.clock.At.Add(4 * time.Second)
	throttled("a test 4 s after a test", test(), 1)
	_, err := e.discover(id)
	throttled("a discovery 4 s after a test", err, 1)

	e.clock.At = e.clock.At.Add(limits.DiscoveryInterval)
	if _, err := e.discover(id); err != nil {
		t.Fatalf("discovery 14 s after the test: %v", err)
	}
	e.clock.At = e.clock.At.Add(time.Second)
	throttled("a test 1 s after a discovery", test(), 2)

	other := e.create(t, srvPrincipalA, srvBearerCmd("other", e.url))
	if _, err := h.Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: other.ID()}); err != nil {
		t.Errorf("a test of another server: %v", err)
	}
	e.clock.At = e.clock.At.Add(limits.DiscoveryInterval)
	if err := test(); err != nil {
		t.Errorf("a test 10 s after the discovery: %v", err)
	}
}

// Testing unsaved servers is limited to limits.MaxConnectionTests per
// limits.ConnectionTestWindow and tenant: the next one is
// discovery_throttled with the time to wait and sends nothing; another
// tenant is not affected; a request the registration rules refuse does
// not count; the window passes.
func TestConnectionTestsOfUnsavedServersAreLimitedPerTenant(t *testing.T) {
	e, _ := newDiscoveryEnv(t)
	h := registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps)
	testNew := func(p ports.Principal) error {
		_, err := h.HandleNew(context.Background(), p, srvBearerCmd("new_wiki", e.url))
		return err
	}
	// Refused by the rules: not counted.
	for range limits.MaxConnectionTests + 1 {
		_, err := h.HandleNew(context.Background(), srvPrincipalA, srvBearerCmd("new_wiki", "https://intra.example/mcp"))
		srvWantCode(t, err, app.CodeEndpointNotPublic)
	}
	for i := range limits.MaxConnectionTests {
		e.clock.At = e.clock.At.Add(time.Second)
		if err := testNew(srvPrincipalA); err != nil {
			t.Fatalf("test %d of %d: %v", i+1, limits.MaxConnectionTests, err)
		}
	}
	ae := srvWantCode(t, testNew(srvPrincipalA), app.CodeDiscoveryThrottled)
	if ae != nil && (ae.RetryAfter <= 0 || ae.RetryAfter > limits.ConnectionTestWindow) {
		t.Errorf("RetryAfter = %v, want within (0, 1 min]", ae.RetryAfter)
	}
	if len(e.conn.opened) != limits.MaxConnectionTests {
		t.Errorf("%d opens, want %d: a throttled test reached the network", len(e.conn.opened), limits.MaxConnectionTests)
	}
	if err := testNew(srvPrincipalB); err != nil {
		t.Errorf("another tenant's test: %v", err)
	}
	// The first test leaves the window a minute after it was made.
	e.clock.At = e.clock.At.Add(limits.ConnectionTestWindow - time.Duration(limits.MaxConnectionTests-1)*time.Second)
	if err := testNew(srvPrincipalA); err != nil {
		t.Errorf("a test after the first left the window: %v", err)
	}
	srvWantCode(t, testNew(srvPrincipalA), app.CodeDiscoveryThrottled)
}
