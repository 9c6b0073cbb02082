package httpapi_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/codelotse/codelotse/app/accounts"
)

// restKeys is a key ring that can seal (it copies the bytes: the route
// tests keep no prompt log).
var restKeys restCipher

type restCipher struct{}

func (restCipher) Seal(p, _ []byte) ([]byte, error) { return slices.Clone(p), nil }
func (restCipher) Open(c, _ []byte) ([]byte, error) { return slices.Clone(c), nil }
func (restCipher) IsPrimary([]byte) bool            { return true }

func TestSettingsRoutes(t *testing.T) {
	ts, store := newRestAPI(t, restOpen)

	status, body := call(t, ts, "admin", "GET", "/v1/tenant/settings", "")
	want := `map[debugPrompts:map[enabled:false ttlHours:24] retentionDays:90]`
	if status != http.StatusOK || fmtMap(body) != want {
		t.Fatalf("GET = %d %v, want the defaults %s", status, body, want)
	}

	tests := []struct {
		name, token, method, body string
		status                    int
		code                      string
		fields                    []string
	}{
		{name: "repo token", token: "repo", method: "GET", status: 403, code: "forbidden"},
		{name: "repo token put", token: "repo", method: "PUT", body: `{"retentionDays": 30}`, status: 403, code: "forbidden"},
		{name: "no token", method: "GET", status: 401, code: "unauthenticated"},
		{name: "unknown field", token: "admin", method: "PUT", body: `{"retentionDays": 30, "keepForever": true}`, status: 400, code: "bad_json"},
		{name: "unknown nested field", token: "admin", method: "PUT", body: `{"debugPrompts": {"enabled": true, "ttl": 3}}`, status: 400, code: "bad_json"},
		{name: "wrong type", token: "admin", method: "PUT", body: `{"retentionDays": "30"}`, status: 400, code: "bad_json"},
		{name: "not JSON", token: "admin", method: "PUT", body: `retentionDays=30`, status: 400, code: "bad_json"},
		{name: "zero days", token: "admin", method: "PUT", body: `{"retentionDays": 0}`, status: 422, code: "validation_failed", fields: []string{"retentionDays"}},
		{name: "too many days", token: "admin", method: "PUT", body: `{"retentionDays": 3651}`, status: 422, code: "validation_failed", fields: []string{"retentionDays"}},
		{name: "ttl too long", token: "admin", method: "PUT", body: `{"debugPrompts": {"enabled": true, "ttlHours": 169}}`, status: 422, code: "validation_failed", fields: []string{"debugPrompts.ttlHours"}},
		{name: "both out of range", token: "admin", method: "PUT", body: `{"retentionDays": -1, "debugPrompts": {"enabled": false, "ttlHours": 0}}`, status: 422, code: "validation_failed", fields: []string{"retentionDays", "debugPrompts.ttlHours"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, ts, tt.token, tt.method, "/v1/tenant/settings", tt.body)
			if status != tt.status || errCode(body) != tt.code {
				t.Fatalf("%s = %d %v, want %d %q", tt.method, status, body, tt.status, tt.code)
			}
			fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
			if len(fields) != len(tt.fields) {
				t.Errorf("fields %v, want %v", fields, tt.fields)
			}
			for _, f := range tt.fields {
				if _, ok := fields[f]; !ok {
					t.Errorf("fields %v lack %q", fields, f)
				}
			}
		})
	}
	if n := len(store.events[restTenantA]); n != 0 {
		t.Fatalf("refused requests recorded %d audit events", n)
	}

	status, body = call(t, ts, "admin", "PUT", "/v1/tenant/settings", `{"retentionDays": 30, "debugPrompts": {"enabled": true, "ttlHours": 2}}`)
	if want := `map[debugPrompts:map[enabled:true ttlHours:2] retentionDays:30]`; status != 200 || fmtMap(body) != want {
		t.Fatalf("PUT = %d %v, want %s", status, body, want)
	}
	if store.promptDeletes[restTenantA] != 0 {
		t.Error("enabling deleted the prompt logs")
	}
	if _, body := call(t, ts, "other", "GET", "/v1/tenant/settings", ""); body["retentionDays"] != float64(90) {
		t.Errorf("another tenant sees %v", body)
	}
	// Omitted fields take their defaults; turning the logs off deletes them.
	status, body = call(t, ts, "admin", "PUT", "/v1/tenant/settings", `{"retentionDays": 7}`)
	if want := `map[debugPrompts:map[enabled:false ttlHours:24] retentionDays:7]`; status != 200 || fmtMap(body) != want {
		t.Fatalf("PUT = %d %v, want %s", status, body, want)
	}
	if store.promptDeletes[restTenantA] != 1 {
		t.Errorf("turning debug prompts off deleted the logs %d times, want 1", store.promptDeletes[restTenantA])
	}
	events := store.events[restTenantA]
	if len(events) != 2 || events[0].Action != accounts.ActionTenantSettings || events[0].Target != "tenant:"+restTenantA {
		t.Fatalf("audit events %+v, want two tenant.settings", events)
	}
	if got := fmtMap(events[1].Details); got != "map[previous:map[debugPrompts:map[enabled:true ttlHours:2] retentionDays:30] settings:map[debugPrompts:map[enabled:false ttlHours:24] retentionDays:7]]" {
		t.Errorf("audit details %s", got)
	}
}

func TestListRepositoriesRoute(t *testing.T) {
	ts, _ := newRestAPI(t, restOpen)
	for _, name := range []string{"acme/web", "acme/api", "acme/ops"} {
		if status, body := call(t, ts, "admin", "POST", "/v1/repositories", `{"name": "`+name+`", "visibility": "private"}`); status != 201 {
			t.Fatalf("POST %s = %d %v", name, status, body)
		}
	}
	names := func(body map[string]any) []string {
		var out []string
		list, _ := body["repositories"].([]any)
		for _, r := range list {
			out = append(out, r.(map[string]any)["name"].(string))
		}
		return out
	}
	// repo:manage alone may list (the contract: tenant:manage or repo:manage).
	status, body := call(t, ts, "repo", "GET", "/v1/repositories?limit=2", "")
	if got := names(body); status != 200 || fmtMap(got) != "[acme/api acme/ops]" {
		t.Fatalf("first page = %d %v", status, body)
	}
	status, body = call(t, ts, "admin", "GET", "/v1/repositories?limit=2&after=acme/ops", "")
	if got := names(body); status != 200 || fmtMap(got) != "[acme/web]" {
		t.Fatalf("second page = %d %v", status, body)
	}
	if _, body := call(t, ts, "other", "GET", "/v1/repositories", ""); len(names(body)) != 0 {
		t.Errorf("another tenant lists %v", body)
	}
	for _, q := range []string{"limit=0", "limit=201", "limit=x"} {
		if status, body := call(t, ts, "admin", "GET", "/v1/repositories?"+q, ""); status != 422 || errCode(body) != "validation_failed" {
			t.Errorf("?%s = %d %v, want 422 validation_failed", q, status, body)
		}
	}
}

// fmtMap prints a value with sorted map keys.
func fmtMap(v any) string { return fmt.Sprint(v) }
