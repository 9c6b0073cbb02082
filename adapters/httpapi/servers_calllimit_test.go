package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app/registry"
	"github.com/codelotse/codelotse/domain/server"
)

// TestServerRoutesCallLimit: maxCallsPerMinute in the server routes: the
// view shows it (null for none), create and patch set it, a patch's null
// removes it, and what the domain or the instance's cap refuses is 422
// validation_failed on maxCallsPerMinute; a value that is not an integer
// is bad_json.
func TestServerRoutesCallLimit(t *testing.T) {
	callCap, err := server.ParseCallCap(50)
	if err != nil {
		t.Fatal(err)
	}
	ts := newServerAPIAllowing(t, newSrvStore(), srvOpenGates, server.AllowedURLs{},
		func(d *registry.ServerDeps) { d.CallCap = callCap })
	create := func(limit string) (int, []byte) {
		t.Helper()
		body := `{"name": "wiki", "url": "https://wiki.example.com/mcp", "auth": {"type": "none"}, "acknowledged": true` + limit + `}`
		return srvCall(t, ts, "admin", "POST", "/v1/mcp/servers", body)
	}
	for _, tt := range []struct {
		name, limit string
		status      int
		code        string
	}{
		{"above the cap", `, "maxCallsPerMinute": 51`, 422, "validation_failed"},
		{"zero", `, "maxCallsPerMinute": 0`, 422, "validation_failed"},
		{"negative", `, "maxCallsPerMinute": -1`, 422, "validation_failed"},
		{"above the most", `, "maxCallsPerMinute": 601`, 422, "validation_failed"},
		{"a string", `, "maxCallsPerMinute": "5"`, 400, "bad_json"},
		{"a fraction", `, "maxCallsPerMinute": 5.5`, 400, "bad_json"},
	} {
		status, raw := create(tt.limit)
		code, fields := srvErr(t, raw)
		if status != tt.status || code != tt.code {
			t.Errorf("create %s = %d %s, want %d %s", tt.name, status, raw, tt.status, tt.code)
		}
		if tt.code == "validation_failed" && (len(fields) != 1 || fields["maxCallsPerMinute"] == nil) {
			t.Errorf("create %s: fields %v, want maxCallsPerMinute", tt.name, fields)
		}
	}
	status, raw := create(`, "maxCallsPerMinute": null`)
	if v := srvJSON(t, raw); status != http.StatusCreated || v["maxCallsPerMinute"] != nil {
		t.Fatalf("create with null = %d %s", status, raw)
	}
	id := srvJSON(t, raw)["id"].(string)
	if !strings.Contains(string(raw), `"maxCallsPerMinute":null`) {
		t.Errorf("the view of a server without a limit = %s, want maxCallsPerMinute null", raw)
	}

	patch := func(body string) (int, map[string]any, []byte) {
		t.Helper()
		status, raw := srvCall(t, ts, "admin", "PATCH", "/v1/mcp/servers/"+id, body)
		if status != http.StatusOK {
			return status, nil, raw
		}
		return status, srvJSON(t, raw), raw
	}
	steps := []struct {
		body   string
		status int
		code   string
		want   any // the limit the server has afterwards
	}{
		{`{"maxCallsPerMinute": 50}`, 200, "", float64(50)},
		{`{"enabled": false}`, 200, "", float64(50)}, // absent keeps it
		{`{"maxCallsPerMinute": 51}`, 422, "validation_failed", float64(50)},
		{`{"maxCallsPerMinute": 0}`, 422, "validation_failed", float64(50)},
		{`{"maxCallsPerMinute": true}`, 400, "bad_json", float64(50)},
		{`{"maxCallsPerMinute": 1e1}`, 400, "bad_json", float64(50)},
		{`{"maxCallsPerMinute": null}`, 200, "", nil},
		{`{"maxCallsPerMinute": 1}`, 200, "", float64(1)},
	}
	for _, st := range steps {
		status, v, raw := patch(st.body)
		if code, fields := srvErr(t, raw); status != st.status || code != st.code ||
			code == "validation_failed" && (len(fields) != 1 || fields["maxCallsPerMinute"] == nil) {
			t.Errorf("PATCH %s = %d %s, want %d %s", st.body, status, raw, st.status, st.code)
		}
		if v != nil && v["maxCallsPerMinute"] != st.want {
			t.Errorf("PATCH %s: view maxCallsPerMinute %v, want %v", st.body, v["maxCallsPerMinute"], st.want)
		}
		_, raw = srvCall(t, ts, "admin", "GET", "/v1/mcp/servers/"+id, "")
		if got := srvJSON(t, raw)["maxCallsPerMinute"]; got != st.want {
			t.Errorf("after PATCH %s: GET maxCallsPerMinute %v, want %v", st.body, got, st.want)
		}
	}
}
