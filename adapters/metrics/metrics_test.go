package metrics_test

import (
	"net/http/httptest"
	"runtime"
	"strconv"
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
	runtime.GC() // so that the live heap of the last collection is known
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
	for _, gauge := range []string{"go_goroutines", "go_gc_heap_live_bytes", "go_heap_objects_bytes"} {
		if v := sample(body, gauge); v <= 0 {
			t.Errorf("%s = %v, want a positive gauge:\n%s", gauge, v, body)
		}
	}
	if strings.Contains(body, "made_up") {
		t.Errorf("an unknown outcome became a label value:\n%s", body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q", ct)
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
