package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestOperationsAPI drives the tenant settings, the repository list and
// the retention job's metrics through the binary, on an instance without
// a key ring (so debug prompt logs cannot be enabled).
func TestOperationsAPI(t *testing.T) {
	t.Parallel()
	in := startInstance(t)
	tenantID, admin := in.tenant("ops", "tenant:manage,repo:manage")
	repoOnly := in.token(tenantID, "repo:manage")
	_, other := in.tenant("ops-other", "tenant:manage,repo:manage")

	t.Run("settings", func(t *testing.T) {
		a := admin.on(t)
		r := a.do("GET", "/v1/tenant/settings", nil)
		expect(t, "GET settings", r, 200, "")
		if fmt.Sprint(r.Body) != "map[debugPrompts:map[enabled:false ttlHours:24] retentionDays:90]" {
			t.Errorf("defaults = %s", r.Raw)
		}
		r = a.do("PUT", "/v1/tenant/settings", map[string]any{"debugPrompts": map[string]any{"enabled": true, "ttlHours": 24}})
		expect(t, "enable without a key ring", r, 422, "validation_failed")
		if reason, _ := fields(r)["debugPrompts.enabled"].(string); !strings.Contains(reason, "QUAVON_ENCRYPTION_KEYS") {
			t.Errorf("fields = %v, want debugPrompts.enabled naming the key ring", fields(r))
		}
		expect(t, "unknown field", a.do("PUT", "/v1/tenant/settings", `{"retentionDays": 30, "purge": true}`), 400, "bad_json")
		r = a.do("PUT", "/v1/tenant/settings", map[string]any{"retentionDays": 0, "debugPrompts": map[string]any{"ttlHours": 169}})
		expect(t, "out of range", r, 422, "validation_failed")
		if f := fields(r); len(f) != 2 || f["retentionDays"] == nil || f["debugPrompts.ttlHours"] == nil {
			t.Errorf("fields = %v, want retentionDays and debugPrompts.ttlHours", f)
		}
		expect(t, "repo:manage", repoOnly.on(t).do("GET", "/v1/tenant/settings", nil), 403, "forbidden")
		r = a.do("PUT", "/v1/tenant/settings", map[string]any{"retentionDays": 3650})
		expect(t, "PUT settings", r, 200, "")
		if r := other.on(t).do("GET", "/v1/tenant/settings", nil); r.Body["retentionDays"] != float64(90) {
			t.Errorf("another tenant's settings = %s", r.Raw)
		}
		if n := countRows(t, in, "SELECT count(*) FROM prompt_logs"); n != 0 {
			t.Errorf("%d prompt logs", n)
		}
	})

	t.Run("repositories", func(t *testing.T) {
		a := admin.on(t)
		for _, name := range []string{"acme/web", "acme/api", "acme/ops"} {
			expect(t, "create "+name, a.do("POST", "/v1/repositories", map[string]any{"name": name, "visibility": "private"}), 201, "")
		}
		expect(t, "other tenant's repository", other.on(t).do("POST", "/v1/repositories", map[string]any{"name": "zeta/x", "visibility": "public"}), 201, "")
		names := func(r response) string {
			var out []string
			list, _ := r.Body["repositories"].([]any)
			for _, it := range list {
				m := it.(map[string]any)
				if m["mcpActive"] != false {
					t.Errorf("%v: mcpActive on an instance that disables MCP context", m)
				}
				out = append(out, str(m, "name"))
			}
			return strings.Join(out, " ")
		}
		r := repoOnly.on(t).do("GET", "/v1/repositories?limit=2", nil)
		expect(t, "list with repo:manage", r, 200, "")
		if got := names(r); got != "acme/api acme/ops" {
			t.Errorf("first page = %q", got)
		}
		r = a.do("GET", "/v1/repositories?limit=2&after=acme/ops", nil)
		if got := names(r); got != "acme/web" {
			t.Errorf("second page = %q", got)
		}
		expect(t, "limit 0", a.do("GET", "/v1/repositories?limit=0", nil), 422, "validation_failed")
	})

	t.Run("retention metrics", func(t *testing.T) {
		// serve runs the worker, whose leader runs the retention job once
		// at start; every run reports each table, zero included.
		want := []string{"prompt_logs", "mcp_tool_calls", "audit_events", "review_runs"}
		deadline := time.Now().Add(30 * time.Second)
		for {
			body := metricsText(t, in)
			missing := 0
			for _, table := range want {
				if !strings.Contains(body, `quavon_retention_deleted_rows_total{table="`+table+`"} `) {
					missing++
				}
			}
			if missing == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("retention metrics missing after 30 s:\n%s", body)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
}

// metricsText returns GET /metrics.
func metricsText(t *testing.T, in *instance) string {
	t.Helper()
	resp, err := http.Get(in.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, %v", resp.StatusCode, err)
	}
	return string(body)
}

// countRows runs a count query on the instance's database.
func countRows(t *testing.T, in *instance, query string) int {
	t.Helper()
	var n int
	if err := in.db().QueryRow(context.Background(), query).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
