package registry_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
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
