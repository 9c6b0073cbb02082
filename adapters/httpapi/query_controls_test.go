package httpapi_test

import (
	"net/http"
	"testing"
)

// TestQueryParameterNamesMustBeValidUTF8: a query parameter whose name is
// invalid UTF-8 is 422 validation_failed naming it (checkQuery,
// strictjson.go; docs/input.md), the name shown with a U+FFFD for each
// invalid byte, on routes whose use cases never read the
// parameter: no layer behind the API's check refuses it, so these fail
// without it. The value case on the audit route is here for the same
// reason: the repository list's use case refuses an invalid after cursor
// itself, the audit list does not read action's bytes.
func TestQueryParameterNamesMustBeValidUTF8(t *testing.T) {
	ts, store := newRestAPI(t, restOpen)
	eventsBefore := len(store.events[restTenantA])
	tests := []struct {
		path, field string
	}{
		{"/v1/audit?%ff=1", "\uFFFD"},
		{"/v1/audit?limit=5&a%ffb=1", "a\uFFFDb"},
		{"/v1/audit?%c3%28", "\uFFFD("},
		{"/v1/repositories?%ff=x", "\uFFFD"},
		{"/v1/tenant/settings?x%ed%a0%80=1", "x\uFFFD\uFFFD\uFFFD"},
		{"/v1/audit?action=%ff", "action"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, body := call(t, ts, "admin", "GET", tt.path, "")
			e, _ := body["error"].(map[string]any)
			fields, _ := e["fields"].(map[string]any)
			if status != http.StatusUnprocessableEntity || errCode(body) != "validation_failed" || len(fields) != 1 || fields[tt.field] != "must be valid UTF-8" {
				t.Fatalf("GET %s = %d %v, want 422 validation_failed naming %q: must be valid UTF-8", tt.path, status, body, tt.field)
			}
		})
	}
	// A valid name that is not one of the route's parameters is ignored,
	// as before: only the bytes are refused.
	if status, body := call(t, ts, "admin", "GET", "/v1/audit?%c3%a9=1", ""); status != http.StatusOK {
		t.Errorf("GET /v1/audit?é=1 = %d %v, want 200", status, body)
	}
	if n := len(store.events[restTenantA]); n != eventsBefore {
		t.Errorf("refusals recorded %d audit events", n-eventsBefore)
	}
}
