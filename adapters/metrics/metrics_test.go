package metrics_test

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/codelotse/codelotse/adapters/metrics"
)

func TestRegistryExposesEveryOutcome(t *testing.T) {
	r := metrics.New()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); r.McpCall("ok"); r.McpCall("blocked") }()
	}
	wg.Wait()
	r.McpCall("made_up")
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"# TYPE quavon_mcp_context_calls_total counter",
		`quavon_mcp_context_calls_total{outcome="ok"} 50`,
		`quavon_mcp_context_calls_total{outcome="blocked"} 50`,
		`quavon_mcp_context_calls_total{outcome="error"} 1`,
		`quavon_mcp_context_calls_total{outcome="budget_exhausted"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "made_up") {
		t.Errorf("an unknown outcome became a label value:\n%s", body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q", ct)
	}
}

func TestRegistryCountsRetentionPerTable(t *testing.T) {
	r := metrics.New()
	r.RetentionDeleted("audit_events", 3)
	r.RetentionDeleted("audit_events", 4)
	r.RetentionDeleted("review_runs", 0)
	var b strings.Builder
	if _, err := r.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE quavon_retention_deleted_rows_total counter",
		`quavon_retention_deleted_rows_total{table="audit_events"} 7`,
		`quavon_retention_deleted_rows_total{table="review_runs"} 0`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, b.String())
		}
	}
}
