package mcpclient

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

type opRecord struct{ method, errorType string }

type fakeOpMetrics struct {
	mu  sync.Mutex
	ops []opRecord
}

func (f *fakeOpMetrics) McpOperation(method, errorType string, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, opRecord{method, errorType})
}

func (f *fakeOpMetrics) count(want opRecord) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, o := range f.ops {
		if o == want {
			n++
		}
	}
	return n
}

// spanRecorder installs an in-memory span recorder as the global tracer
// provider for one test.
func spanRecorder(t *testing.T) *tracetest.SpanRecorder {
	t.Helper()
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	return sr
}

// spanText is everything a span exports as text: its name, status,
// attributes, events and links.
func spanText(s sdktrace.ReadOnlySpan) string {
	var b strings.Builder
	fmt.Fprintln(&b, s.Name(), s.Status().Description)
	write := func(kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			fmt.Fprintln(&b, kv.Key, kv.Value.Emit())
		}
	}
	write(s.Attributes())
	write(s.Resource().Attributes())
	for _, e := range s.Events() {
		fmt.Fprintln(&b, e.Name)
		write(e.Attributes)
	}
	for _, l := range s.Links() {
		write(l.Attributes)
	}
	return b.String()
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}

// TestTracesAndTimesEveryOperationWithoutTenantData: one client span and
// one histogram observation per MCP request, named by method (and tool),
// and no argument, result, URL or credential in any span.
func TestTracesAndTimesEveryOperationWithoutTenantData(t *testing.T) {
	sr := spanRecorder(t)
	const canary = "canary7f3a"
	ts := sdkServer(t, era2026, 2, 0)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	m := &fakeOpMetrics{}
	c.opts.Metrics = m
	cred, _ := server.NewBearer("token-" + canary + "-1234")
	u := mustURL(t, fmt.Sprintf("https://%s:%d/mcp/%s", testHost, ts.port(), canary))
	s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: u, Credential: cred}, limits.ReviewResponseCap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListTools(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"`+canary+`"}`))
	if err != nil || !strings.Contains(strings.Join(res.Texts, ""), canary) {
		t.Fatalf("CallTool = %+v, %v; the result must carry the canary for this test to mean anything", res, err)
	}
	if _, err := s.CallTool(context.Background(), "broken", tooltest.Args("")); err != nil {
		t.Fatal(err)
	}
	_, _ = s.CallTool(context.Background(), "missing", tooltest.Args(""))
	_ = s.Close()

	byName := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range sr.Ended() {
		byName[sp.Name()] = sp
		if strings.Contains(spanText(sp), canary) {
			t.Errorf("span %q carries tenant data:\n%s", sp.Name(), spanText(sp))
		}
		if sp.SpanKind() != trace.SpanKindClient || attr(sp, "mcp.method.name") == "" {
			t.Errorf("span %q: kind %v, mcp.method.name %q", sp.Name(), sp.SpanKind(), attr(sp, "mcp.method.name"))
		}
	}
	for _, name := range []string{"server/discover", "tools/list", "tools/call search", "tools/call broken", "tools/call missing"} {
		if _, ok := byName[name]; !ok {
			t.Errorf("no span %q among %v", name, names(sr.Ended()))
		}
	}
	if sp := byName["tools/call search"]; sp != nil && (attr(sp, "gen_ai.tool.name") != "search" || attr(sp, "error.type") != "" || sp.Status().Code == codes.Error) {
		t.Errorf("tools/call search: tool %q, error.type %q, status %v", attr(sp, "gen_ai.tool.name"), attr(sp, "error.type"), sp.Status())
	}
	if sp := byName["tools/call broken"]; sp != nil && (attr(sp, "error.type") != "tool_error" || sp.Status().Code != codes.Error) {
		t.Errorf("tools/call broken: error.type %q, status %v; want tool_error", attr(sp, "error.type"), sp.Status())
	}
	if sp := byName["tools/call missing"]; sp != nil && attr(sp, "error.type") == "" {
		t.Error("tools/call missing: no error.type")
	}

	for _, want := range []opRecord{{"tools/list", ""}, {"tools/call", ""}, {"tools/call", "tool_error"}} {
		if m.count(want) != 1 {
			t.Errorf("metrics recorded %+v %d times, want once (all: %+v)", want, m.count(want), m.ops)
		}
	}
	for _, o := range m.ops {
		if strings.Contains(o.method+o.errorType, canary) || strings.HasPrefix(o.method, "notifications/") {
			t.Errorf("metric labels %+v", o)
		}
	}
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}
