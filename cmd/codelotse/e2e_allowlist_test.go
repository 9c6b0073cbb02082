//go:build signedoff

package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/postgres/pgtest"
)

// TestE2EAllowedURLs: the operator's allowlist of MCP server URLs
// (QUAVON_MCP_ALLOWED_URLS) through the binary. A server registered,
// discovered and allowlisted while the list was empty is, once the
// operator restarts the service with a list that leaves it out (the
// same host and port, another path), shown outside_allowlist, refused
// as 422 validation_failed on url for discovery and connection tests,
// and not called by a review: the MCP server receives nothing. A
// registration, a move and an unsaved test outside the list are refused
// the same way; one below an entry's path is registered.
func TestE2EAllowedURLs(t *testing.T) {
	t.Parallel()
	dsn := pgtest.DSN(t)
	env, key := mcpEnv(t)
	// The registration runs on an API-only process, so the only worker is
	// the one under the allowlist.
	open := startCommandOn(t, "api", dsn, env...)
	open.secret(key)
	t.Cleanup(func() { open.checkLogsHoldNoSecrets(t) })
	_, c := open.tenant("allowlist", "tenant:manage,repo:manage")

	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "Wiki page about caches.")
	})
	const bearer = "e2e-allowlist-bearer-Zr4t"
	serverID := allowlistSearch(t, c, "wiki", p, bearer)
	repoID := privateRepoWithMCP(t, c, serverID)
	before := p.count()

	// The service again, on the same database, with a list of another
	// path on the same host and port, and the scripted model.
	origin := strings.TrimSuffix(p.url(), "/mcp")
	dir := t.TempDir()
	script := filepath.Join(dir, "script.json")
	raw, _ := json.Marshal(map[string]any{"perReview": true,
		"finder":  []any{contentTurn(map[string]any{"findings": []any{}})},
		"summary": []any{contentTurn("Nothing to report.")}})
	if err := os.WriteFile(script, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	narrowed := startInstanceOn(t, dsn, append(env, "QUAVON_MCP_ALLOWED_URLS="+origin+"/allowed",
		"QUAVON_LLM_PROVIDER=scripted", "QUAVON_LLM_SCRIPT="+script, "QUAVON_LLM_SCRIPT_LOG="+filepath.Join(dir, "requests.jsonl"))...)
	narrowed.secrets = open.secrets
	t.Cleanup(func() { narrowed.checkLogsHoldNoSecrets(t) })
	n := &client{in: narrowed.on(t), token: c.token}

	outside := func(what string, r response) {
		t.Helper()
		expect(t, what, r, http.StatusUnprocessableEntity, "validation_failed")
		if f := fields(r); len(f) != 1 || f["url"] != "is outside the operator's allowlist of MCP server URLs" {
			t.Errorf("%s: fields %v, want url only", what, f)
		}
	}
	v := n.do("GET", "/v1/mcp/servers/"+serverID, nil)
	if v.Status != http.StatusOK || v.Body["status"] != "outside_allowlist" || v.Body["enabled"] != true {
		t.Errorf("GET the stored server = %d %s, want status outside_allowlist", v.Status, v.Raw)
	}
	outside("discovery", n.do("POST", "/v1/mcp/servers/"+serverID+"/discover", nil))
	outside("connection test", n.do("POST", "/v1/mcp/servers/"+serverID+"/test", nil))
	outside("allowlist save", n.do("PUT", "/v1/mcp/servers/"+serverID+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search the team wiki for a term."}}}))
	outside("unsaved test", n.do("POST", "/v1/mcp/servers/test", map[string]any{"name": "wiki2", "url": p.url(), "auth": map[string]any{"type": "none"}}))
	outside("registration", n.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki2", "url": origin + "/allowedx", "auth": map[string]any{"type": "none"}, "acknowledged": true}))
	outside("move", n.do("PATCH", "/v1/mcp/servers/"+serverID, map[string]any{"url": origin + "/mcp/v2", "acknowledged": true, "auth": map[string]any{"type": "none"}}))

	_, r := runReview(t, n, repoID)
	expectDone(t, r)
	st := mcpStats(t, r)
	servers, _ := st["servers"].([]any)
	if st["calls"] != float64(0) || len(servers) != 1 || servers[0].(map[string]any)["offered"] != false {
		t.Errorf("stats.mcp = %v, want the server not offered and no call", st)
	}
	if got := p.count(); got != before {
		t.Errorf("the MCP server outside the allowlist received %d requests: %v", got-before, rpcMethods(p.requests()[before:]))
	}
	if v := n.do("GET", "/v1/mcp/servers/"+serverID, nil); v.Body["status"] != "outside_allowlist" {
		t.Errorf("after the review: status %v", v.Body["status"])
	}

	// Below an entry's path, a registration is the usual one.
	ok := n.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki3", "url": origin + "/allowed/mcp", "auth": map[string]any{"type": "none"}, "acknowledged": true})
	expect(t, "registration inside the allowlist", ok, http.StatusCreated, "")
	if ok.Body["status"] != "never_discovered" {
		t.Errorf("status %v, want never_discovered", ok.Body["status"])
	}
}
