package httpapi

import (
	"net/http"
	"testing"

	"github.com/codelotse/codelotse/domain/server"
)

// TestServerRoutesUnderTheAllowlist: under the operator's allowlist of
// URLs a registration or a move outside it is 422 validation_failed on
// url, and a server stored before the list left it out reads with the
// status outside_allowlist.
func TestServerRoutesUnderTheAllowlist(t *testing.T) {
	store := newSrvStore()
	open := newServerAPI(t, store, srvOpenGates)
	status, raw := srvCall(t, open, "admin", "POST", "/v1/mcp/servers", `{"name": "docs", "url": "https://docs.example.com/mcp", "auth": {"type": "none"}, "acknowledged": true}`)
	if status != http.StatusCreated {
		t.Fatalf("POST docs without an allowlist = %d %s", status, raw)
	}
	docs := srvJSON(t, raw)["id"].(string)
	status, raw = srvCall(t, open, "admin", "POST", "/v1/mcp/servers", srvCreateBody)
	if status != http.StatusCreated {
		t.Fatalf("POST wiki = %d %s", status, raw)
	}
	wiki := srvJSON(t, raw)["id"].(string)

	allowed, err := server.ParseAllowedURLs("https://wiki.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	ts := newServerAPIAllowing(t, store, srvOpenGates, allowed)
	for _, u := range []string{"https://docs.example.com/mcp", "https://wiki.example.com/mcpx", "https://wiki.example.com.docs.example.com/mcp"} {
		status, raw = srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", `{"name": "other", "url": "`+u+`", "auth": {"type": "none"}, "acknowledged": true}`)
		if code, fields := srvErr(t, raw); status != http.StatusUnprocessableEntity || code != "validation_failed" || len(fields) != 1 || fields["url"] != server.OutsideAllowlistReason {
			t.Errorf("POST %s = %d %s, want 422 validation_failed on url", u, status, raw)
		}
	}
	status, raw = srvCall(t, ts, "admin", "PATCH", "/v1/mcp/servers/"+wiki, `{"url": "https://docs.example.com/mcp", "acknowledged": true, "auth": {"type": "none"}}`)
	if code, fields := srvErr(t, raw); status != http.StatusUnprocessableEntity || code != "validation_failed" || fields["url"] != server.OutsideAllowlistReason {
		t.Errorf("PATCH url outside = %d %s", status, raw)
	}

	status, raw = srvCall(t, ts, "admin", "GET", "/v1/mcp/servers/"+docs, "")
	if v := srvJSON(t, raw); status != http.StatusOK || v["status"] != "outside_allowlist" || v["enabled"] != true || v["url"] != "https://docs.example.com/mcp" {
		t.Errorf("GET docs = %d %s, want status outside_allowlist", status, raw)
	}
	status, raw = srvCall(t, ts, "admin", "GET", "/v1/mcp/servers", "")
	got := map[string]any{}
	for _, v := range srvJSON(t, raw)["servers"].([]any) {
		got[v.(map[string]any)["name"].(string)] = v.(map[string]any)["status"]
	}
	if status != http.StatusOK || got["docs"] != "outside_allowlist" || got["wiki"] != "never_discovered" {
		t.Errorf("GET list = %d, statuses %v", status, got)
	}
	// Without the allowlist the same row is an ordinary server again.
	_, raw = srvCall(t, open, "admin", "GET", "/v1/mcp/servers/"+docs, "")
	if v := srvJSON(t, raw); v["status"] != "never_discovered" {
		t.Errorf("GET docs without the allowlist: status %v", v["status"])
	}
	// Inside the allowlist a registration is the usual one.
	status, raw = srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", `{"name": "wiki_v2", "url": "https://WIKI.example.com/mcp/v2", "auth": {"type": "none"}, "acknowledged": true}`)
	if status != http.StatusCreated || srvJSON(t, raw)["status"] != "never_discovered" {
		t.Errorf("POST inside the allowlist = %d %s", status, raw)
	}
}
