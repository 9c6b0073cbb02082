package registry_test

import (
	"context"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// The operator's allowlist of MCP server URLs (QUAVON_MCP_ALLOWED_URLS)
// in the use cases: what it refuses is validation_failed on url, and
// nothing is stored, looked up or contacted for it.

const allowedWiki = "https://wiki.example.com/mcp"

func allowlist(t *testing.T, raw string) server.AllowedURLs {
	t.Helper()
	a, err := server.ParseAllowedURLs(raw)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// wantOutsideAllowlist fails unless err is validation_failed with the
// allowlist's reason on url and nothing else.
func wantOutsideAllowlist(t *testing.T, what string, err error) {
	t.Helper()
	e := srvWantCode(t, err, app.CodeValidationFailed, "evil", "docs.example.com")
	if len(e.Fields) != 1 || e.Fields["url"] != server.OutsideAllowlistReason {
		t.Errorf("%s: fields %v, want url: %q only", what, e.Fields, server.OutsideAllowlistReason)
	}
}

func TestCreateRefusesURLsOutsideTheAllowlist(t *testing.T) {
	for _, raw := range []string{
		"https://wiki.example.com/mcpx",
		"https://wiki.example.com/",
		"https://wiki.example.com/mcp/../admin",
		"https://wiki.example.com:8443/mcp",
		"https://wiki.example.com.evil.example/mcp",
		"https://docs.example.com/mcp",
	} {
		t.Run(raw, func(t *testing.T) {
			e := newServerEnv(t)
			e.deps.Allowed = allowlist(t, allowedWiki)
			_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA, srvBearerCmd("wiki", raw))
			wantOutsideAllowlist(t, raw, err)
			if r := e.repos[srvTenantA]; r != nil && len(r.Rows) != 0 {
				t.Errorf("stored %d servers", len(r.Rows))
			}
			if len(e.resolver.Lookups) != 0 || len(e.audit(srvTenantA)) != 0 {
				t.Errorf("looked up %v, audited %d events: want nothing", e.resolver.Lookups, len(e.audit(srvTenantA)))
			}
		})
	}
	// Every field at once: the allowlist's refusal joins the others.
	e := newServerEnv(t)
	e.deps.Allowed = allowlist(t, allowedWiki)
	_, err := registry.NewCreateServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
		registry.CreateServer{Name: "Bad Name!", URL: "https://docs.example.com/mcp", Auth: registry.ServerAuth{Type: "none"}, Acknowledged: true})
	if f := srvWantCode(t, err, app.CodeValidationFailed).Fields; f["url"] != server.OutsideAllowlistReason || f["name"] == "" {
		t.Errorf("fields %v, want name and url", f)
	}
	// Inside the allowlist, and under an empty one, registration works.
	s := e.create(t, srvPrincipalA, srvBearerCmd("wiki", "https://WIKI.example.com:443/mcp/v1"))
	if s.URL().String() != "https://wiki.example.com/mcp/v1" {
		t.Errorf("stored URL %s", s.URL())
	}
	e.deps.Allowed = server.AllowedURLs{}
	e.create(t, srvPrincipalA, srvBearerCmd("docs", "https://docs.example.com/mcp"))
}

func TestPatchRefusesMovingOutsideTheAllowlist(t *testing.T) {
	e := newServerEnv(t)
	s := e.create(t, srvPrincipalA, srvBearerCmd("wiki", allowedWiki))
	e.deps.Allowed = allowlist(t, allowedWiki)
	auditBefore := len(e.audit(srvTenantA))
	lookupsBefore := len(e.resolver.Lookups)
	patch := registry.NewPatchServerHandler(e.deps)
	for _, raw := range []string{"https://wiki.example.com/mcpx", "https://docs.example.com/mcp", "https://evil.example/mcp"} {
		_, err := patch.Handle(context.Background(), srvPrincipalA, registry.PatchServer{ID: s.ID(), URL: &raw, Acknowledged: srvPtr(true),
			Auth: &registry.ServerAuth{Type: "bearer", Token: srvSecretToken}})
		wantOutsideAllowlist(t, raw, err)
		// Without the acknowledgement the allowlist still answers first.
		_, err = patch.Handle(context.Background(), srvPrincipalA, registry.PatchServer{ID: s.ID(), URL: &raw})
		wantOutsideAllowlist(t, raw+" unacknowledged", err)
	}
	stored := e.repos[srvTenantA].Rows[s.ID()]
	if stored.URL().String() != allowedWiki || len(e.audit(srvTenantA)) != auditBefore || len(e.resolver.Lookups) != lookupsBefore {
		t.Errorf("a refused move changed something: URL %s, audit %d → %d, lookups %v", stored.URL(), auditBefore, len(e.audit(srvTenantA)), e.resolver.Lookups[lookupsBefore:])
	}
	// Inside the allowlist the move is the usual one.
	below := allowedWiki + "/v2"
	moved, err := patch.Handle(context.Background(), srvPrincipalA, registry.PatchServer{ID: s.ID(), URL: &below, Acknowledged: srvPtr(true)})
	if err != nil || moved.URL().String() != below {
		t.Fatalf("move inside the allowlist = %v, %v", moved, err)
	}
}

// A server stored before the operator narrowed the allowlist keeps its
// URL and can still be renamed or switched off, with its URL repeated
// (the web form sends it): only a move is refused.
func TestPatchKeepsAStoredServerOutsideTheAllowlist(t *testing.T) {
	e := newServerEnv(t)
	s := e.create(t, srvPrincipalA, srvBearerCmd("docs", "https://docs.example.com/mcp"))
	e.deps.Allowed = allowlist(t, allowedWiki)
	same := "https://docs.example.com/mcp"
	got, err := registry.NewPatchServerHandler(e.deps).Handle(context.Background(), srvPrincipalA,
		registry.PatchServer{ID: s.ID(), URL: &same, Name: srvPtr("docs_old"), Enabled: srvPtr(false)})
	if err != nil || got.Name().String() != "docs_old" || got.Enabled() {
		t.Fatalf("patch of a server outside the allowlist, same URL = %v, %v", got, err)
	}
	if st := got.StatusUnder(e.deps.Allowed, srvT0); st != server.StatusOutsideAllowlist {
		t.Errorf("status %q, want outside_allowlist", st)
	}
}

func TestConnectionTestOfAnUnsavedURLOutsideTheAllowlist(t *testing.T) {
	e, _ := newDiscoveryEnv(t)
	e.serverEnv.deps.Allowed = allowlist(t, allowedWiki)
	h := registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps)
	lookupsBefore := len(e.resolver.Lookups)
	_, err := h.HandleNew(context.Background(), srvPrincipalA, srvBearerCmd("docs", "https://docs.example.com/mcp"))
	wantOutsideAllowlist(t, "unsaved test", err)
	if len(e.conn.opened) != 0 || len(e.resolver.Lookups) != lookupsBefore || len(e.repos[srvTenantA].Tests) != 0 {
		t.Errorf("a refused test opened %d connections, looked up %v, counted %d tests", len(e.conn.opened), e.resolver.Lookups[lookupsBefore:], len(e.repos[srvTenantA].Tests))
	}
	got, err := h.HandleNew(context.Background(), srvPrincipalA, srvBearerCmd("wiki_two", allowedWiki))
	if err != nil || !got.OK {
		t.Errorf("test inside the allowlist = %+v, %v", got, err)
	}
}

// A server stored before the allowlist left it out is used by nothing:
// discovery, connection test, allowlist save and approval are refused
// before its claim, its credential or the connector, and it still reads
// (get, list) with the status that says why.
func TestStoredServerOutsideTheAllowlistIsNotContacted(t *testing.T) {
	e, id := newDiscoveryEnv(t)
	if _, err := e.discover(id); err != nil {
		t.Fatal(err)
	}
	opened := len(e.conn.opened)
	claimed := e.repos[srvTenantA].Claims[id]
	e.clock.At = e.clock.At.Add(3600e9)
	e.deps.Allowed = allowlist(t, "https://docs.example.com/mcp")

	_, err := e.discover(id)
	wantOutsideAllowlist(t, "discovery", err)
	_, err = registry.NewTestConnectionHandler(e.serverEnv.deps, e.deps).Handle(context.Background(), srvPrincipalA, registry.TestServer{ID: id})
	wantOutsideAllowlist(t, "connection test", err)
	wantOutsideAllowlist(t, "save", e.save(id, registry.ToolChoice{Name: "search", Description: "Search the wiki."}))
	_, err = e.approve(id, registry.ApproveTool{ID: id, Name: "search", Description: "Search the wiki."})
	wantOutsideAllowlist(t, "approval", err)

	if len(e.conn.opened) != opened {
		t.Errorf("the connector was asked for %v", e.conn.opened[opened:])
	}
	s := e.get(t, id)
	if !e.repos[srvTenantA].Claims[id].Equal(claimed) || !s.LastDiscoveryAt().Equal(claimed) || s.LastError() != "" {
		t.Errorf("a refusal was recorded: claim %v → %v, lastError %q", claimed, e.repos[srvTenantA].Claims[id], s.LastError())
	}
	if st := s.StatusUnder(e.deps.Allowed, e.clock.At); st != server.StatusOutsideAllowlist {
		t.Errorf("status %q, want outside_allowlist", st)
	}
	list, err := registry.NewListServersHandler(e.serverEnv.deps).Handle(context.Background(), srvPrincipalA, registry.ListServers{})
	if err != nil || len(list) != 1 {
		t.Errorf("list = %d servers, %v; want the server still listed", len(list), err)
	}

	// Widened again, the server is used as before.
	e.deps.Allowed = allowlist(t, "https://docs.example.com/mcp, "+allowedWiki)
	if _, err := e.discover(id); err != nil {
		t.Errorf("discovery inside the allowlist = %v", err)
	}
}

func TestConnectRefusesAServerOutsideTheAllowlist(t *testing.T) {
	e := newConnectEnv(t)
	s := e.codeServer(t, "client-1")
	e.deps.Allowed = allowlist(t, "https://docs.example.com/mcp")
	_, err := e.start(srvPrincipalA, s.ID())
	wantOutsideAllowlist(t, "start", err)
	if len(e.oauth.Discovered) != 0 {
		t.Errorf("the OAuth client discovered %v", e.oauth.Discovered)
	}

	// A connection started before the operator narrowed the list is not
	// finished: the code is not exchanged, nothing is stored.
	e.deps.Allowed = server.AllowedURLs{}
	authURL, err := e.start(srvPrincipalA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	before := string(e.repos[srvTenantA].Creds[s.ID()])
	e.deps.Allowed = allowlist(t, "https://docs.example.com/mcp")
	_, err = e.finish(srvPrincipalA, callback(t, authURL))
	wantOutsideAllowlist(t, "finish", err)
	if len(e.oauth.Exchanges) != 0 || string(e.repos[srvTenantA].Creds[s.ID()]) != before {
		t.Errorf("a refused callback exchanged %d codes or changed the credential", len(e.oauth.Exchanges))
	}
}

func TestFindIssuerRefusesAURLOutsideTheAllowlist(t *testing.T) {
	e := newConnectEnv(t)
	e.serverEnv.deps.Allowed = allowlist(t, "https://docs.example.com/mcp")
	_, err := registry.NewFindIssuerHandler(e.serverEnv.deps, e.deps).Handle(context.Background(), srvPrincipalA, registry.FindIssuer{URL: allowedWiki})
	wantOutsideAllowlist(t, "find issuer", err)
	if len(e.oauth.Discovered) != 0 || len(e.resolver.Lookups) != 0 {
		t.Errorf("discovered %v, looked up %v", e.oauth.Discovered, e.resolver.Lookups)
	}
}
