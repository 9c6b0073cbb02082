//go:build signedoff

package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// checkMetricsAfterReview scrapes /metrics after a review that called an
// MCP tool and checks the series of every part of the service, and that no
// label names a tenant, a repository, a server URL, an id or a canary.
func checkMetricsAfterReview(t *testing.T, in *instance, private ...string) {
	t.Helper()
	resp, err := http.Get(in.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	body := string(raw)
	for _, sample := range []string{
		`quavon_mcp_context_calls_total{outcome="ok"}`,
		`mcp_client_operation_duration_seconds_count{error_type="",mcp_method_name="tools/list"}`,
		`mcp_client_operation_duration_seconds_count{error_type="",mcp_method_name="tools/call"}`,
		`http_server_request_duration_seconds_count{http_request_method="POST",http_response_status_code="202",http_route="/v1/repositories/{id}/reviews"}`,
		`http_server_request_duration_seconds_count{http_request_method="GET",http_response_status_code="200",http_route="/v1/reviews/{id}"}`,
		`quavon_review_run_duration_seconds_count{outcome="done"}`,
		`quavon_queue_job_latency_seconds_count{kind="review_run"}`,
	} {
		if v := metric(t, in, sample); v < 1 {
			t.Errorf("%s = %v after a review, want ≥ 1", sample, v)
		}
	}
	for _, state := range []string{"available", "scheduled", "retryable", "running"} {
		if v := metric(t, in, `quavon_queue_jobs{state="`+state+`"}`); v < 0 {
			t.Errorf("no quavon_queue_jobs series for state %s", state)
		}
	}
	// The retention job runs once when the replica becomes the leader and
	// reports every table, zero rows included.
	for _, table := range ports.RetainedTables {
		sample := `quavon_retention_deleted_rows_total{table="` + table + `"}`
		deadline := time.Now().Add(15 * time.Second)
		for metric(t, in, sample) < 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		if v := metric(t, in, sample); v < 0 {
			t.Errorf("no %s series: the retention job did not report", sample)
		}
	}
	for _, p := range private {
		if p != "" && strings.Contains(body, p) {
			t.Errorf("/metrics holds %q", p)
		}
	}
}
