package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// HTTPMetrics records requests (http_server_request_duration_seconds).
type HTTPMetrics interface {
	HTTPRequest(method, route string, status int, d time.Duration)
}

// TracerName names this package's OpenTelemetry tracer.
const TracerName = "github.com/codelotse/codelotse/adapters/httpapi"

// startSpan opens the request's server span. Its name and attributes are
// set when the route is known (endSpan): the method and the route
// pattern, never the path (it holds ids), the query or a header.
func startSpan(r *http.Request) (context.Context, trace.Span) {
	return otel.Tracer(TracerName).Start(r.Context(), r.Method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", r.Method)))
}

// route is a ServeMux pattern without its method ("GET /v1/x/{id}" →
// "/v1/x/{id}"), or "unmatched".
func route(pattern string) string {
	if pattern == "" {
		return "unmatched"
	}
	if _, path, ok := strings.Cut(pattern, " "); ok {
		return path
	}
	return pattern
}

func endSpan(span trace.Span, m HTTPMetrics, method, pattern string, status int, d time.Duration) {
	rt := route(pattern)
	span.SetName(method + " " + rt)
	span.SetAttributes(attribute.String("http.route", rt), attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(status)))
		span.SetStatus(codes.Error, "")
	}
	span.End()
	if m != nil {
		m.HTTPRequest(method, rt, status, d)
	}
}
