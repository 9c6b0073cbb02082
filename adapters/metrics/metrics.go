// Package metrics is the process's Prometheus registry (client_golang):
// MCP context calls, MCP client operations, HTTP requests, review runs,
// the job queue, the retention job and the recheck between reviews,
// served on GET /metrics.
//
// No label holds a tenant id, a server URL, a tool name or argument, or a
// repository name: every label value comes from a fixed set (outcomes,
// MCP method names, error codes, route patterns, table names), so the
// series stay few and say nothing about a tenant.
package metrics

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/ports"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metric names. The call counter's OpenTelemetry name is
// quavon.mcp.context.calls; the MCP client and HTTP histograms follow
// OpenTelemetry's semantic conventions (mcp.client.operation.duration,
// http.server.request.duration) in Prometheus form.
const (
	Name              = "quavon_mcp_context_calls_total"
	McpOperationName  = "mcp_client_operation_duration_seconds"
	HTTPName          = "http_server_request_duration_seconds"
	ReviewRunName     = "quavon_review_run_duration_seconds"
	QueueDepthName    = "quavon_queue_jobs"
	JobLatencyName    = "quavon_queue_job_latency_seconds"
	RetentionName     = "quavon_retention_deleted_rows_total"
	RecheckName       = "quavon_mcp_rechecks_total"
	AuditDeliveryName = "quavon_audit_deliveries_total"
	AuditBacklogName  = "quavon_audit_outbox_events"
	AuditOldestName   = "quavon_audit_outbox_oldest_age_seconds"
	queueDepthTimeout = 2 * time.Second
	otherMethod       = "_OTHER"
)

// Outcomes are the call statuses of the API's call records (the closed
// set of domain/review), each always exposed.
var Outcomes = outcomes()

func outcomes() []string {
	var out []string
	for _, s := range review.CallStatuses() {
		out = append(out, string(s))
	}
	return out
}

// ReviewOutcomes are the outcomes of one review attempt.
var ReviewOutcomes = []string{"done", "retry", "failed", "interrupted"}

// mcpMethods are the MCP methods this client sends; anything else is
// counted as _OTHER.
var mcpMethods = []string{"initialize", "server/discover", "tools/list", "tools/call", "ping"}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Buckets of the MCP client histogram, as OpenTelemetry's MCP semantic
// conventions advise.
var mcpBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// Registry holds the metrics. Safe for concurrent use.
type Registry struct {
	reg        *prometheus.Registry
	calls      *prometheus.CounterVec
	mcpOps     *prometheus.HistogramVec
	http       *prometheus.HistogramVec
	reviews    *prometheus.HistogramVec
	jobLatency *prometheus.HistogramVec
	retention  *prometheus.CounterVec
	rechecks   *prometheus.CounterVec
	audit      *prometheus.CounterVec
}

// New returns a registry with the Go runtime and process collectors and
// every call outcome at zero.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: Name,
			Help: "MCP context tool calls by outcome (OpenTelemetry: quavon.mcp.context.calls)."}, []string{"outcome"}),
		mcpOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: McpOperationName,
			Help:    "Duration of MCP client operations (OpenTelemetry: mcp.client.operation.duration).",
			Buckets: mcpBuckets}, []string{"mcp_method_name", "error_type"}),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: HTTPName,
			Help:    "Duration of HTTP requests by route pattern (OpenTelemetry: http.server.request.duration).",
			Buckets: prometheus.DefBuckets}, []string{"http_request_method", "http_route", "http_response_status_code"}),
		reviews: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: ReviewRunName,
			Help:    "Duration of review attempts by outcome (done, retry, failed, interrupted).",
			Buckets: []float64{1, 5, 10, 30, 60, 120, 240, 480, 900}}, []string{"outcome"}),
		jobLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: JobLatencyName,
			Help:    "Time from a job's scheduled time to the start of its attempt, by job kind.",
			Buckets: []float64{0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900}}, []string{"kind"}),
		retention: prometheus.NewCounterVec(prometheus.CounterOpts{Name: RetentionName,
			Help: "Rows deleted by the retention job, by table."}, []string{"table"}),
		rechecks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: RecheckName,
			Help: "Servers the recheck between reviews listed again, by outcome (unchanged, changed, failed, throttled)."}, []string{"outcome"}),
		audit: prometheus.NewCounterVec(prometheus.CounterOpts{Name: AuditDeliveryName,
			Help: "Audit stream deliveries to the webhook, by outcome (delivered, failed)."}, []string{"outcome"}),
	}
	// The live heap and the heap's objects (from runtime/metrics) show
	// whether reviews leave memory behind (the soak benchmark reads them).
	goRuntime := collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.GoRuntimeMetricsRule{
		Matcher: regexp.MustCompile(`^/(gc/heap/live|memory/classes/heap/objects):bytes$`),
	}))
	r.reg.MustRegister(goRuntime, collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		r.calls, r.mcpOps, r.http, r.reviews, r.jobLatency, r.retention, r.rechecks, r.audit)
	for _, o := range Outcomes {
		r.calls.WithLabelValues(o)
	}
	for _, o := range ports.RecheckOutcomes {
		r.rechecks.WithLabelValues(o)
	}
	for _, o := range ports.AuditOutcomes {
		r.audit.WithLabelValues(o)
	}
	return r
}

// McpCall counts one call outcome. An outcome outside the list is counted
// as "error", so a bug cannot create unbounded label values.
func (r *Registry) McpCall(outcome review.CallStatus) {
	r.calls.WithLabelValues(bounded(string(outcome), Outcomes, "error")).Inc()
}

// McpOperation records one MCP client operation. errorType is empty on
// success, else a fixed code (timeout, server_unreachable, tool_error, a
// JSON-RPC code, …).
func (r *Registry) McpOperation(method, errorType string, d time.Duration) {
	r.mcpOps.WithLabelValues(bounded(method, mcpMethods, otherMethod), errorType).Observe(d.Seconds())
}

// HTTPRequest records one request under its route pattern (never the
// raw path, which holds ids).
func (r *Registry) HTTPRequest(method, route string, status int, d time.Duration) {
	r.http.WithLabelValues(bounded(method, httpMethods, otherMethod), route, strconv.Itoa(status)).Observe(d.Seconds())
}

// ReviewRun records one review attempt.
func (r *Registry) ReviewRun(outcome string, d time.Duration) {
	r.reviews.WithLabelValues(bounded(outcome, ReviewOutcomes, "failed")).Observe(d.Seconds())
}

// JobLatency records how long a job waited in the queue.
func (r *Registry) JobLatency(kind string, d time.Duration) {
	r.jobLatency.WithLabelValues(kind).Observe(max(d, 0).Seconds())
}

// RetentionDeleted adds the rows one retention run deleted from table
// (a table name of the schema: a bounded label set).
func (r *Registry) RetentionDeleted(table string, rows int64) {
	r.retention.WithLabelValues(table).Add(float64(max(rows, 0)))
}

// McpRecheck counts one server's recheck between reviews; an outcome
// outside ports.RecheckOutcomes is counted as failed.
func (r *Registry) McpRecheck(outcome string) {
	r.rechecks.WithLabelValues(bounded(outcome, ports.RecheckOutcomes, ports.RecheckFailed)).Inc()
}

// AuditDelivery counts one delivery of the audit stream; an outcome
// outside ports.AuditOutcomes is counted as failed.
func (r *Registry) AuditDelivery(outcome string) {
	r.audit.WithLabelValues(bounded(outcome, ports.AuditOutcomes, ports.AuditFailed)).Inc()
}

// ObserveAuditOutbox exposes the audit stream's outbox: how many entries
// wait (quavon_audit_outbox_events) and the age of the oldest
// (quavon_audit_outbox_oldest_age_seconds, 0 when none), read from
// backlog at every scrape.
func (r *Registry) ObserveAuditOutbox(backlog func(context.Context) (int64, time.Time, error)) {
	r.reg.MustRegister(outboxCollector{backlog: backlog,
		events: prometheus.NewDesc(AuditBacklogName, "Audit stream events waiting in the outbox for the webhook.", nil, nil),
		oldest: prometheus.NewDesc(AuditOldestName, "Age of the oldest audit stream event waiting in the outbox (0 when none).", nil, nil)})
}

type outboxCollector struct {
	backlog        func(context.Context) (int64, time.Time, error)
	events, oldest *prometheus.Desc
}

func (c outboxCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.events; ch <- c.oldest }

// Collect reports nothing when the database does not answer in time.
func (c outboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueDepthTimeout)
	defer cancel()
	n, oldest, err := c.backlog(ctx)
	if err != nil {
		return
	}
	age := 0.0
	if !oldest.IsZero() {
		age = max(time.Since(oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(c.events, prometheus.GaugeValue, float64(n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age)
}

// ObserveQueue exposes the job queue's depth by state (quavon_queue_jobs),
// read from depth at every scrape.
func (r *Registry) ObserveQueue(depth func(context.Context) (map[string]int64, error)) {
	r.reg.MustRegister(queueCollector{depth: depth,
		desc: prometheus.NewDesc(QueueDepthName, "Jobs in the queue by state (available, scheduled, retryable, running).", []string{"state"}, nil)})
}

type queueCollector struct {
	depth func(context.Context) (map[string]int64, error)
	desc  *prometheus.Desc
}

func (c queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

// Collect reports nothing when the database does not answer in time: a
// missing series is visible, a stale number is not.
func (c queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), queueDepthTimeout)
	defer cancel()
	depth, err := c.depth(ctx)
	if err != nil {
		return
	}
	for state, n := range depth {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), state)
	}
}

// Handler serves GET /metrics in the Prometheus text format.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{})
}

func bounded(v string, allowed []string, other string) string {
	if slices.Contains(allowed, v) {
		return v
	}
	return other
}
