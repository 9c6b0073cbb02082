package httpapi_test

import (
	"net/http"
	"testing"
)

// TestHostileInputIsRefusedAndNothingStored sends the strict-input cases
// of docs/input.md to the write routes and a query parameter: each is a
// 422 validation_failed naming the field, and the store is unchanged.
func TestHostileInputIsRefusedAndNothingStored(t *testing.T) {
	ts, store := newRestAPI(t, restOpen)
	if status, body := call(t, ts, "admin", "PUT", "/v1/tenant/settings",
		`{"retentionDays": 30, "debugPrompts": {"enabled": true, "ttlHours": 2}}`); status != 200 {
		t.Fatalf("PUT = %d %v", status, body)
	}
	if status, body := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`); status != 201 {
		t.Fatalf("POST = %d %v", status, body)
	}
	eventsBefore := len(store.events[restTenantA])
	const want = `map[debugPrompts:map[enabled:true ttlHours:2] retentionDays:30]`

	tests := []struct {
		name, method, path, body string
		field                    string
	}{
		{name: "null settings", method: "PUT", path: "/v1/tenant/settings", body: `null`, field: "body"},
		{name: "null debug prompts", method: "PUT", path: "/v1/tenant/settings", body: `{"retentionDays": 30, "debugPrompts": null}`, field: "debugPrompts"},
		{name: "duplicate key", method: "PUT", path: "/v1/tenant/settings", body: `{"retentionDays": 30, "retentionDays": 1}`, field: "retentionDays"},
		{name: "case-only key", method: "PUT", path: "/v1/tenant/settings", body: `{"RetentionDays": 1}`, field: "retentionDays"},
		{name: "case-only nested key", method: "PUT", path: "/v1/tenant/settings", body: `{"debugPrompts": {"Enabled": false}}`, field: "debugPrompts.enabled"},
		{name: "NUL in a repository name", method: "POST", path: "/v1/repositories", body: `{"name": "acme/\u0000x", "visibility": "private"}`, field: "name"},
		{name: "NUL in a visibility", method: "POST", path: "/v1/repositories", body: `{"name": "acme/x", "visibility": "private\u0000"}`, field: "visibility"},
		{name: "null repository", method: "POST", path: "/v1/repositories", body: `null`, field: "body"},
		{name: "duplicate name", method: "POST", path: "/v1/repositories", body: `{"name": "acme/x", "name": "acme/y", "visibility": "private"}`, field: "name"},
		{name: "null policy section", method: "PUT", path: "/v1/mcp/defaults", body: `{"mcp": null}`, field: "mcp"},
		{name: "NUL in a policy mode", method: "PUT", path: "/v1/mcp/defaults", body: `{"mcp": {"mode": "on\u0000", "servers": []}}`, field: "mcp.mode"},
		{name: "NUL after", method: "GET", path: "/v1/repositories?after=%00", field: "after"},
		{name: "NUL inside after", method: "GET", path: "/v1/repositories?after=acme%00x&limit=2", field: "after"},
		{name: "invalid UTF-8 after", method: "GET", path: "/v1/repositories?after=%ff", field: "after"},
		{name: "NUL in a parameter name", method: "GET", path: "/v1/audit?x%00=1", field: `x\u0000`},
		{name: "NUL in limit", method: "GET", path: "/v1/audit?limit=5%00", field: "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, ts, "admin", tt.method, tt.path, tt.body)
			fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
			if status != http.StatusUnprocessableEntity || errCode(body) != "validation_failed" || len(fields) != 1 || fields[tt.field] == nil {
				t.Fatalf("%s %s = %d %v, want 422 validation_failed naming %q", tt.method, tt.path, status, body, tt.field)
			}
		})
	}
	// A NUL byte in a path id is an unknown id, never a 500.
	for _, path := range []string{"/v1/repositories/%00", "/v1/repositories/%00/policy", "/v1/repositories/a%00b/policy/servers"} {
		if status, body := call(t, ts, "admin", "GET", path, ""); status != http.StatusNotFound || errCode(body) != "not_found" {
			t.Errorf("GET %s = %d %v, want 404 not_found", path, status, body)
		}
	}
	if _, body := call(t, ts, "admin", "GET", "/v1/tenant/settings", ""); fmtMap(body) != want {
		t.Errorf("settings %v after the refusals, want %s", body, want)
	}
	if n := store.promptDeletes[restTenantA]; n != 0 {
		t.Errorf("a refused request deleted the prompt logs %d times", n)
	}
	if n := len(store.repos[restTenantA]); n != 1 {
		t.Errorf("%d repositories after the refusals, want 1", n)
	}
	if n := len(store.events[restTenantA]); n != eventsBefore {
		t.Errorf("refusals recorded %d audit events", n-eventsBefore)
	}
	if _, ok := store.defaults[restTenantA]; ok {
		t.Error("a refused defaults PUT stored a section")
	}
}
