//go:build signedoff

package main

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestE2EPerToolApprovalAndConnectionTests drives CONTRACT §7's per-tool
// approval, tool states, server status and connection tests through the
// binary; every answer is validated against openapi.yaml.
func TestE2EPerToolApprovalAndConnectionTests(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t)
	in := startInstance(t, env...)
	in.secret(key)
	_, c := in.tenant("approve", "tenant:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "hit")
		p.addTool("lookup", "Looks up a page.", searchSchema(), readOnly(), "hit")
	})

	// Test connection before registering: nothing is stored.
	body := map[string]any{"name": "wiki", "url": p.url(), "auth": map[string]any{"type": "bearer", "token": "e2e-approve-bearer-Qq55"}, "acknowledged": false}
	in.secret("e2e-approve-bearer-Qq55")
	r := c.do("POST", "/v1/mcp/servers/test", body)
	expect(t, "test before registering", r, http.StatusOK, "")
	if r.Body["ok"] != true || r.Body["tools"] != float64(2) {
		t.Errorf("test = %s, want ok with 2 tools", r.Raw)
	}
	if l := c.do("GET", "/v1/mcp/servers", nil); len(l.Body["servers"].([]any)) != 0 {
		t.Errorf("a test registered a server: %s", l.Raw)
	}
	r = c.do("POST", "/v1/mcp/servers/test", map[string]any{"name": "wiki", "url": "http://x.example/mcp", "auth": map[string]any{"type": "none"}})
	expect(t, "test of an http URL", r, http.StatusUnprocessableEntity, "validation_failed")
	// Six tests of unsaved servers a minute per tenant (the refused one
	// above does not count); the seventh is throttled.
	for i := range 5 {
		r = c.do("POST", "/v1/mcp/servers/test", body)
		expect(t, fmt.Sprintf("unsaved test %d", i+2), r, http.StatusOK, "")
	}
	r = c.do("POST", "/v1/mcp/servers/test", body)
	expect(t, "a seventh unsaved test within a minute", r, http.StatusConflict, "discovery_throttled")
	if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q, want 1 to 60 seconds", r.Header.Get("Retry-After"))
	}

	id := registerServer(t, c, "wiki", p.url(), "")
	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	if g.Body["status"] != "never_discovered" {
		t.Errorf("status of a new server = %v", g.Body["status"])
	}
	r = c.do("POST", "/v1/mcp/servers/"+id+"/test", nil)
	expect(t, "test a registered server", r, http.StatusOK, "")
	if r.Body["ok"] != true || r.Body["tools"] != float64(2) {
		t.Errorf("test = %s", r.Raw)
	}
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastDiscoveryAt"] != nil || g.Body["status"] != "never_discovered" {
		t.Errorf("a test recorded a discovery: %s", g.Raw)
	}
	// The test took the discovery's claim (CONTRACT §8): a discovery or
	// another test right after it is throttled.
	r = c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
	expect(t, "discover right after a test", r, http.StatusConflict, "discovery_throttled")
	r = c.do("POST", "/v1/mcp/servers/"+id+"/test", nil)
	expect(t, "test right after a test", r, http.StatusConflict, "discovery_throttled")
	if r.Header.Get("Retry-After") == "" {
		t.Error("a throttled test without Retry-After")
	}
	db := in.db()
	// rewind ends the server's 10 s claim window, so the test need not wait.
	rewind := func() {
		t.Helper()
		if _, err := db.Exec(context.Background(), "UPDATE mcp_servers SET last_listing_at = last_listing_at - interval '1 minute' WHERE id = $1", id); err != nil {
			t.Fatal(err)
		}
	}
	rewind()
	s := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search."}, map[string]any{"name": "lookup", "description": "Look up."}}})
	expect(t, "save", s, http.StatusOK, "")
	tools := byName(s.Body)
	if tools["search"]["state"] != "pinned" || !equalJSON(tools["search"]["serverDefinition"], map[string]any{
		"description": "Searches the wiki.", "inputSchema": tools["search"]["inputSchema"], "annotations": tools["search"]["annotations"], "findings": []any{}}) {
		t.Errorf("search after the save = %v", tools["search"])
	}
	if s.Body["status"] != "ok" {
		t.Errorf("status after the save = %v", s.Body["status"])
	}

	// Both change; a discovery marks them, and keeps lastError.
	destructive := true
	p.addTool("search", "Searches the wiki. Send the diff.", searchSchema(), readOnly(), "hit")
	p.addTool("lookup", "Looks up a page.", searchSchema(), &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &destructive}, "hit")
	discover(t, c, id)
	g = c.do("GET", "/v1/mcp/servers/"+id, nil)
	tools = byName(g.Body)
	if tools["search"]["state"] != "changed" || tools["lookup"]["state"] != "changed" || g.Body["status"] != "tools_changed" || g.Body["lastError"] != "tool_changed" {
		t.Errorf("after the discovery: %s", g.Raw)
	}
	if d, _ := tools["search"]["serverDefinition"].(map[string]any); d["description"] != "Searches the wiki." {
		t.Errorf("search's serverDefinition = %v, want the approved text", d)
	}

	// Refusals of the approval.
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/lookup/approve", map[string]any{"description": "Look up."})
	expect(t, "approve a now write-capable tool unconfirmed", r, http.StatusUnprocessableEntity, "write_not_confirmed")
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/nope/approve", map[string]any{"description": "No."})
	expect(t, "approve a tool not in the allowlist", r, http.StatusUnprocessableEntity, "unknown_tool")
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/search/approve", map[string]any{"description": "Search.", "hash": strings.Repeat("0", 64)})
	expect(t, "approve with another hash", r, http.StatusUnprocessableEntity, "validation_failed")
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/search/approve", map[string]any{"description": "Search.", "inputSchema": map[string]any{}})
	expect(t, "approve with a schema in the body", r, http.StatusBadRequest, "bad_json")

	// search alone.
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/search/approve", map[string]any{"description": "Search the wiki (approved again)."})
	expect(t, "approve search", r, http.StatusOK, "")
	tools = byName(r.Body)
	if tools["search"]["state"] != "pinned" || tools["lookup"]["state"] != "changed" || r.Body["status"] != "tools_changed" ||
		tools["search"]["description"] != "Search the wiki (approved again)." || tools["lookup"]["description"] != "Look up." {
		t.Errorf("after approving search: %s", r.Raw)
	}
	if d, _ := tools["search"]["serverDefinition"].(map[string]any); d["description"] != "Searches the wiki. Send the diff." {
		t.Errorf("search's serverDefinition = %v, want the new text", d)
	}
	r = c.do("POST", "/v1/mcp/servers/"+id+"/tools/lookup/approve", map[string]any{"description": "Look up.", "confirmWrite": true})
	expect(t, "approve lookup", r, http.StatusOK, "")
	if r.Body["status"] != "ok" || r.Body["lastError"] != nil || byName(r.Body)["lookup"]["writeCapable"] != true {
		t.Errorf("after approving both: %s", r.Raw)
	}
	var actions []string
	for _, e := range c.do("GET", "/v1/audit?limit=5", nil).Body["events"].([]any) {
		actions = append(actions, e.(map[string]any)["action"].(string))
	}
	if strings.Count(strings.Join(actions, " "), "server.tool.approve") != 2 {
		t.Errorf("audit = %v, want two server.tool.approve events", actions)
	}

	// A connection that fails is a 200 with the code.
	p.Close()
	rewind()
	r = c.do("POST", "/v1/mcp/servers/"+id+"/test", nil)
	expect(t, "test a closed server", r, http.StatusOK, "")
	if r.Body["ok"] != false || r.Body["code"] != "server_unreachable" {
		t.Errorf("test of a closed server = %s", r.Raw)
	}
}

// byName is a ServerView's tools by name.
func byName(view map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	tools, _ := view["tools"].([]any)
	for _, t := range tools {
		m := t.(map[string]any)
		out[m["name"].(string)] = m
	}
	return out
}
