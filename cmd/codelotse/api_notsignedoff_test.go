//go:build !signedoff

package main

import (
	"context"
	"net/http"
	"testing"
)

// TestNotSignedOff: while MCP_CONTEXT_SIGNED_OFF is false every MCP change
// answers 422 not_signed_off, even on an instance that allows MCP context;
// deleting a server is the one change that is not gated.
func TestNotSignedOff(t *testing.T) {
	_, key := newKey(t)
	in := startInstance(t, "QUAVON_MCP_CONTEXT=allowed", "QUAVON_MCP_PRIVATE_HOSTS=localhost",
		"QUAVON_ENCRYPTION_KEYS=k1:"+key)
	tenantID, c := in.tenant("unsigned", "tenant:manage,repo:manage")

	// Servers cannot be registered through the API in this build: one is
	// written directly, as an earlier signed-off build could have left it.
	db := in.db()
	ctx := context.Background()
	var serverID string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (tenant_id, name, url, acknowledged_at)
		VALUES ($1, 'wiki', 'https://93.184.216.34/mcp', now()) RETURNING id::text`, tenantID).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	repo := c.do("POST", "/v1/repositories", map[string]any{"name": "acme/api", "visibility": "private"})
	expect(t, "POST /v1/repositories (not an MCP change)", repo, 201, "")
	repoID := str(repo.Body, "id")
	if _, err := db.Exec(ctx, `INSERT INTO repository_policies (repository_id, tenant_id, mode, servers, max_calls)
		VALUES ($1, $2, 'on', ARRAY[$3::uuid], 5)`, repoID, tenantID, serverID); err != nil {
		t.Fatal(err)
	}

	t.Run("status", func(t *testing.T) {
		r := c.on(t).do("GET", "/v1/mcp/status", nil)
		expect(t, "GET /v1/mcp/status", r, 200, "")
		if r.Body["signedOff"] != false || r.Body["instance"] != "allowed" || r.Body["edition"] != "self-hosted" {
			t.Errorf("status = %s, want signedOff false, instance allowed, edition self-hosted", r.Raw)
		}
	})

	t.Run("every MCP write endpoint", func(t *testing.T) {
		writes := []struct {
			method, path string
			body         any
		}{
			{"POST", "/v1/mcp/servers", serverBody("docs")},
			{"POST", "/v1/mcp/servers", map[string]any{"name": "bearer", "url": "https://localhost:8443/mcp",
				"auth": map[string]any{"type": "bearer", "token": "tok-1234567890abcdef"}, "acknowledged": true}},
			{"PATCH", "/v1/mcp/servers/" + serverID, map[string]any{"enabled": false}},
			{"PATCH", "/v1/mcp/servers/" + serverID, map[string]any{"url": "https://93.184.216.35/mcp", "acknowledged": true}},
			{"PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "off"}}},
			{"PUT", "/v1/mcp/defaults", map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{serverID}}}},
			{"PUT", "/v1/repositories/" + repoID + "/policy", map[string]any{"mcp": map[string]any{"mode": "on", "servers": []string{serverID}}}},
			{"PUT", "/v1/repositories/" + repoID + "/policy", map[string]any{"mcp": map[string]any{"mode": "off"}}},
			{"POST", "/v1/mcp/servers/" + serverID + "/discover", nil},
			{"PUT", "/v1/mcp/servers/" + serverID + "/tools", map[string]any{"tools": []any{}}},
			// The gates answer before the body is read.
			{"POST", "/v1/mcp/servers", `{"name": `},
			{"PATCH", "/v1/mcp/servers/" + serverID, map[string]any{"command": "id"}},
			{"PUT", "/v1/mcp/defaults", ``},
		}
		for _, w := range writes {
			r := c.on(t).do(w.method, w.path, w.body)
			expect(t, w.method+" "+w.path, r, 422, "not_signed_off")
		}
		// Nothing changed.
		s := c.on(t).do("GET", "/v1/mcp/servers/"+serverID, nil)
		if s.Status != 200 || s.Body["enabled"] != true || str(s.Body, "url") != "https://93.184.216.34/mcp" {
			t.Errorf("the server changed behind a refused PATCH: %d %s", s.Status, s.Raw)
		}
		list := c.on(t).do("GET", "/v1/mcp/servers", nil)
		if n := len(list.Body["servers"].([]any)); n != 1 {
			t.Errorf("list has %d servers after refused creates, want 1", n)
		}
	})

	t.Run("policy is not active", func(t *testing.T) {
		r := c.on(t).do("GET", "/v1/repositories/"+repoID+"/policy", nil)
		expect(t, "GET policy", r, 200, "")
		if r.Body["mcpActive"] != false || str(r.Body, "mcp", "mode") != "on" {
			t.Errorf("policy = %s, want the stored mode on and mcpActive false", r.Raw)
		}
	})

	t.Run("DELETE is not gated", func(t *testing.T) {
		c := c.on(t)
		expect(t, "DELETE unknown server", c.do("DELETE", "/v1/mcp/servers/"+randomUUID(), nil), http.StatusNotFound, "not_found")
		r := c.do("DELETE", "/v1/mcp/servers/"+serverID, nil)
		expect(t, "DELETE existing server", r, http.StatusNoContent, "")
		if len(r.Raw) != 0 {
			t.Errorf("204 with a body: %q", r.Raw)
		}
		expect(t, "GET deleted server", c.do("GET", "/v1/mcp/servers/"+serverID, nil), http.StatusNotFound, "not_found")
	})
}
