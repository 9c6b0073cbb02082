package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/gate"
)

func TestStatusRoute(t *testing.T) {
	ts, _ := newRestAPI(t, app.Gates{SignedOff: false, Instance: gate.InstanceDisabled, Edition: gate.SelfHosted})
	status, body := call(t, ts, "repo", "GET", "/v1/mcp/status", "")
	if status != 200 || body["signedOff"] != false || body["instance"] != "disabled" || body["edition"] != "self-hosted" || len(body) != 3 {
		t.Errorf("GET /v1/mcp/status = %d %v", status, body)
	}
	if status, _ := call(t, ts, "", "GET", "/v1/mcp/status", ""); status != http.StatusUnauthorized {
		t.Errorf("without a token = %d, want 401", status)
	}
}

func TestPolicyRoutes(t *testing.T) {
	ts, _ := newRestAPI(t, restOpen)
	_, repo := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	_, public := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/site", "visibility": "public"}`)
	path := "/v1/repositories/" + repo["id"].(string) + "/policy"

	status, body := call(t, ts, "repo", "GET", path, "")
	want := `{"effective":{"maxCalls":5,"mode":"off","servers":[],"source":"tenant"},"mcp":{"maxCalls":5,"mode":"inherit","servers":[]},"mcpActive":false}`
	if status != 200 || mustJSON(t, body) != want {
		t.Fatalf("GET policy = %d %s, want %s", status, mustJSON(t, body), want)
	}
	status, body = call(t, ts, "admin", "GET", "/v1/mcp/defaults", "")
	if status != 200 || mustJSON(t, body) != `{"mcp":{"maxCalls":5,"mode":"off","servers":[]}}` {
		t.Fatalf("GET defaults = %d %s", status, mustJSON(t, body))
	}

	status, body = call(t, ts, "repo", "PUT", path, `{"mcp": {"mode": "on", "servers": ["`+restServerA+`"], "maxCalls": 3}}`)
	want = `{"effective":{"maxCalls":3,"mode":"on","servers":["` + restServerA + `"],"source":"repository"},"mcp":{"maxCalls":3,"mode":"on","servers":["` + restServerA + `"]},"mcpActive":true}`
	if status != 200 || mustJSON(t, body) != want {
		t.Fatalf("PUT policy = %d %s, want %s", status, mustJSON(t, body), want)
	}

	tests := []struct {
		name, token, method, path, body string
		status                          int
		code, field                     string
	}{
		{"maxCalls 0", "repo", "PUT", path, `{"mcp": {"mode": "off", "maxCalls": 0}}`, 422, "validation_failed", "mcp.maxCalls"},
		{"maxCalls string", "repo", "PUT", path, `{"mcp": {"mode": "off", "maxCalls": "5"}}`, 400, "bad_json", ""},
		{"foreign server", "repo", "PUT", path, `{"mcp": {"mode": "on", "servers": ["` + restServerB + `"]}}`, 422, "unknown_server", ""},
		{"public", "repo", "PUT", "/v1/repositories/" + public["id"].(string) + "/policy", `{"mcp": {"mode": "on", "servers": ["` + restServerA + `"]}}`, 422, "public_repository", ""},
		{"other tenant", "other", "GET", path, "", 404, "not_found", ""},
		{"tenant token needs repo:manage", "nobody", "GET", path, "", 401, "unauthenticated", ""},
		{"repo token cannot set defaults", "repo", "PUT", "/v1/mcp/defaults", `{"mcp": {"mode": "off"}}`, 403, "forbidden", ""},
		{"defaults inherit", "admin", "PUT", "/v1/mcp/defaults", `{"mcp": {"mode": "inherit"}}`, 422, "validation_failed", "mcp.mode"},
		{"defaults", "admin", "PUT", "/v1/mcp/defaults", `{"mcp": {"mode": "on", "servers": ["` + restServerA + `"]}}`, 200, "", ""},
		{"bad json", "repo", "PUT", path, `{"mcp":`, 400, "bad_json", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, ts, tt.token, tt.method, tt.path, tt.body)
			if status != tt.status || errCode(body) != tt.code {
				t.Fatalf("%s %s = %d %v, want %d %q", tt.method, tt.path, status, body, tt.status, tt.code)
			}
			if tt.field != "" {
				fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
				if _, ok := fields[tt.field]; !ok {
					t.Errorf("fields = %v, want %s", fields, tt.field)
				}
			}
		})
	}
}

func TestPolicyRoutesGated(t *testing.T) {
	ts, _ := newRestAPI(t, app.Gates{SignedOff: true, Instance: gate.InstanceDisabled, Edition: gate.Enterprise})
	_, repo := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	for _, path := range []string{"/v1/mcp/defaults", "/v1/repositories/" + repo["id"].(string) + "/policy"} {
		status, body := call(t, ts, "admin", "PUT", path, `{"mcp": {"mode": "off"}}`)
		if status != 422 || errCode(body) != "instance_disabled" {
			t.Errorf("PUT %s = %d %v, want 422 instance_disabled", path, status, body)
		}
	}
}

func TestAuditRoute(t *testing.T) {
	ts, _ := newRestAPI(t, restOpen)
	call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	status, body := call(t, ts, "admin", "GET", "/v1/audit", "")
	events, _ := body["events"].([]any)
	if status != 200 || len(events) != 1 {
		t.Fatalf("GET /v1/audit = %d %v", status, body)
	}
	ev := events[0].(map[string]any)
	if ev["action"] != "repository.create" || ev["actor"] != "token:t1" || ev["details"].(map[string]any)["name"] != "acme/api" {
		t.Errorf("event = %v", ev)
	}
	if _, err := time.Parse(time.RFC3339, ev["at"].(string)); err != nil {
		t.Errorf("at %q is not RFC 3339: %v", ev["at"], err)
	}
	for _, q := range []string{"0", "201", "abc", "", "-1"} {
		status, body := call(t, ts, "admin", "GET", "/v1/audit?limit="+q, "")
		fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
		if status != 422 || fields["limit"] == nil {
			t.Errorf("limit=%q: %d %v, want 422 with field limit", q, status, body)
		}
	}
	if status, body := call(t, ts, "other", "GET", "/v1/audit?limit=200", ""); status != 200 || len(body["events"].([]any)) != 0 {
		t.Errorf("another tenant: %d %v", status, body)
	}
	if status, _ := call(t, ts, "repo", "GET", "/v1/audit", ""); status != 403 {
		t.Errorf("repo:manage only = %d, want 403", status)
	}
}

// mustJSON re-encodes a decoded body with sorted keys.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPolicyServersRoute: a repo:manage token reads the servers a policy
// may name, as id, name and enabled only, and nothing else of a server
// (GET /v1/mcp/servers stays tenant:manage's).
func TestPolicyServersRoute(t *testing.T) {
	ts, _ := newRestAPI(t, restOpen)
	_, repo := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "acme/api", "visibility": "private"}`)
	id, _ := repo["id"].(string)
	path := "/v1/repositories/" + id + "/policy/servers"

	status, body := call(t, ts, "repo", "GET", path, "")
	want := `map[servers:[map[enabled:true id:` + restServerA + ` name:wiki]]]`
	if status != http.StatusOK || fmtMap(body) != want {
		t.Fatalf("GET %s = %d %v, want %s", path, status, body, want)
	}
	tests := []struct {
		name, token, path string
		status            int
		code              string
	}{
		{"another tenant's repository", "other", path, 404, "not_found"},
		{"malformed id", "repo", "/v1/repositories/x/policy/servers", 404, "not_found"},
		{"no token", "", path, 401, "unauthenticated"},
	}
	for _, tt := range tests {
		if status, body := call(t, ts, tt.token, "GET", tt.path, ""); status != tt.status || errCode(body) != tt.code {
			t.Errorf("%s: GET %s = %d %v, want %d %s", tt.name, tt.path, status, body, tt.status, tt.code)
		}
	}
}
