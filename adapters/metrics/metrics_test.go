package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/metrics"
)

func scrape(t *testing.T, r *metrics.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q", ct)
	}
	return rec.Body.String()
}

func expectSeries(t *testing.T, body string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("metrics lack %q", w)
		}
	}
	if t.Failed() {
		t.Logf("scraped:\n%s", body)
	}
}

func TestRegistryExposesEveryOutcome(t *testing.T) {
	r := metrics.New()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() { defer wg.Done(); r.McpCall("ok"); r.McpCall("blocked") }()
	}
	wg.Wait()
	r.McpCall("made_up")
	runtime.GC() // so that the live heap of the last collection is known
	body := scrape(t, r)
	expectSeries(t, body,
		"# TYPE quavon_mcp_context_calls_total counter",
		`quavon_mcp_context_calls_total{outcome="ok"} 50`,
		`quavon_mcp_context_calls_total{outcome="blocked"} 50`,
		`quavon_mcp_context_calls_total{outcome="error"} 1`,
		`quavon_mcp_context_calls_total{outcome="budget_exhausted"} 0`,
		"go_goroutines", "process_cpu_seconds_total")
	for _, gauge := range []string{"go_goroutines", "go_gc_heap_live_bytes", "go_memory_classes_heap_objects_bytes"} {
		if v := sample(body, gauge); v <= 0 {
			t.Errorf("%s = %v, want a positive gauge:\n%s", gauge, v, body)
		}
	}
	if strings.Contains(body, "made_up") {
		t.Errorf("an unknown outcome became a label value:\n%s", body)
	}
}

func TestRegistryCountsRetentionPerTable(t *testing.T) {
	r := metrics.New()
	r.RetentionDeleted("audit_events", 3)
	r.RetentionDeleted("audit_events", 4)
	r.RetentionDeleted("review_runs", 0)
	r.RetentionDeleted("review_runs", -2)
	expectSeries(t, scrape(t, r),
		"# TYPE quavon_retention_deleted_rows_total counter",
		`quavon_retention_deleted_rows_total{table="audit_events"} 7`,
		`quavon_retention_deleted_rows_total{table="review_runs"} 0`)
}

func TestRegistryCountsRechecksByOutcome(t *testing.T) {
	r := metrics.New()
	r.McpRecheck("changed")
	r.McpRecheck("changed")
	r.McpRecheck("made_up")
	body := scrape(t, r)
	expectSeries(t, body,
		"# TYPE quavon_mcp_rechecks_total counter",
		`quavon_mcp_rechecks_total{outcome="changed"} 2`,
		`quavon_mcp_rechecks_total{outcome="failed"} 1`,
		`quavon_mcp_rechecks_total{outcome="unchanged"} 0`,
		`quavon_mcp_rechecks_total{outcome="throttled"} 0`)
	if strings.Contains(body, "made_up") {
		t.Errorf("an unknown outcome became a label value:\n%s", body)
	}
}

// TestHistogramsKeepLabelsBounded: a method, route or outcome outside the
// fixed sets never becomes a label value of its own.
func TestHistogramsKeepLabelsBounded(t *testing.T) {
	r := metrics.New()
	r.McpOperation("tools/call", "", 30*time.Millisecond)
	r.McpOperation("tools/call", "timeout", 10*time.Second)
	r.McpOperation("x-canary/secret", "", time.Millisecond)
	r.HTTPRequest("GET", "/v1/reviews/{id}", 200, 5*time.Millisecond)
	r.HTTPRequest("BREW", "/", 404, time.Millisecond)
	r.ReviewRun("done", 3*time.Second)
	r.ReviewRun("exploded", time.Second)
	r.JobLatency("review", 200*time.Millisecond)
	body := scrape(t, r)
	expectSeries(t, body,
		"# TYPE mcp_client_operation_duration_seconds histogram",
		`mcp_client_operation_duration_seconds_count{error_type="",mcp_method_name="tools/call"} 1`,
		`mcp_client_operation_duration_seconds_count{error_type="timeout",mcp_method_name="tools/call"} 1`,
		`mcp_client_operation_duration_seconds_bucket{error_type="",mcp_method_name="tools/call",le="0.05"} 1`,
		`mcp_client_operation_duration_seconds_count{error_type="",mcp_method_name="_OTHER"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/v1/reviews/{id}"} 1`,
		`http_server_request_duration_seconds_count{http_request_method="_OTHER",http_response_status_code="404",http_route="/"} 1`,
		`quavon_review_run_duration_seconds_count{outcome="done"} 1`,
		`quavon_review_run_duration_seconds_count{outcome="failed"} 1`,
		`quavon_queue_job_latency_seconds_count{kind="review"} 1`)
	for _, leak := range []string{"canary", "BREW", "exploded"} {
		if strings.Contains(body, leak) {
			t.Errorf("%q became a label value", leak)
		}
	}
}

func TestQueueDepthIsReadAtScrape(t *testing.T) {
	r := metrics.New()
	depth := map[string]int64{"available": 3, "running": 1}
	var fail bool
	r.ObserveQueue(func(ctx context.Context) (map[string]int64, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the queue query has no deadline")
		}
		if fail {
			return nil, errors.New("database down")
		}
		return depth, nil
	})
	expectSeries(t, scrape(t, r), `quavon_queue_jobs{state="available"} 3`, `quavon_queue_jobs{state="running"} 1`)
	depth["available"] = 0
	expectSeries(t, scrape(t, r), `quavon_queue_jobs{state="available"} 0`)
	fail = true
	if body := scrape(t, r); strings.Contains(body, "quavon_queue_jobs{") {
		t.Errorf("a failed query still reports a depth:\n%s", body)
	}
}

// sample is the value of an unlabelled sample in body, or -1.
func sample(body, name string) float64 {
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return f
		}
	}
	return -1
}
