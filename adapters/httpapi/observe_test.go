package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type itemRoutes struct{}

func (itemRoutes) register(rt *router) {
	rt.handle("GET /v1/items/{id}", "", func(r *http.Request, p ports.Principal) (int, any, error) {
		return http.StatusOK, map[string]string{"id": r.PathValue("id")}, nil
	})
}

type httpRecord struct {
	method, route string
	status        int
}

type fakeHTTPMetrics struct {
	mu   sync.Mutex
	seen []httpRecord
}

func (f *fakeHTTPMetrics) HTTPRequest(method, route string, status int, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen = append(f.seen, httpRecord{method, route, status})
}

// TestTracesAndTimesRequestsByRoutePattern: one server span and one
// observation per request, named by the route pattern; never the path's
// ids, the query, the body or the token.
func TestTracesAndTimesRequestsByRoutePattern(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	const canary = "canary5b1e"
	m := &fakeHTTPMetrics{}
	srv := NewServer("127.0.0.1:0", zerolog.Nop(), okReady{}, oneToken{}, app.Gates{}, netpolicy.TrustedProxies{}, []Routes{panicRoutes{}, itemRoutes{}}, m)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	doReq(t, ts, "GET", "/v1/items/"+canary+"?q="+canary, "")
	doReq(t, ts, "POST", "/v1/echo", `{"x":"`+canary+`"}`)
	doReq(t, ts, "GET", "/v1/panic", "")
	doReq(t, ts, "GET", "/nowhere/"+canary, "")
	doReq(t, ts, "GET", "/healthz", "")

	want := []httpRecord{
		{"GET", "/v1/items/{id}", 200}, {"POST", "/v1/echo", 400}, {"GET", "/v1/panic", 500},
		{"GET", "/", 404}, {"GET", "/healthz", 200},
	}
	if fmt.Sprint(m.seen) != fmt.Sprint(want) {
		t.Errorf("metrics saw %v, want %v", m.seen, want)
	}
	spans := sr.Ended()
	var got []string
	for _, s := range spans {
		got = append(got, s.Name())
		text := s.Name()
		for _, kv := range s.Attributes() {
			text += " " + string(kv.Key) + "=" + kv.Value.Emit()
		}
		if strings.Contains(text, canary) || strings.Contains(text, mwToken) {
			t.Errorf("span carries request data: %s", text)
		}
		if s.SpanKind() != trace.SpanKindServer {
			t.Errorf("span %q kind %v", s.Name(), s.SpanKind())
		}
		if s.Name() == "GET /v1/panic" && (s.Status().Code != codes.Error || !hasAttr(s.Attributes(), "http.response.status_code", "500")) {
			t.Errorf("the panic's span: status %v, attributes %v", s.Status(), s.Attributes())
		}
		if s.Name() == "GET /v1/items/{id}" && !hasAttr(s.Attributes(), "http.route", "/v1/items/{id}") {
			t.Errorf("no http.route: %v", s.Attributes())
		}
	}
	wantNames := "[GET /v1/items/{id} POST /v1/echo GET /v1/panic GET / GET /healthz]"
	if fmt.Sprint(got) != wantNames {
		t.Errorf("spans %v, want %s", got, wantNames)
	}
}

func hasAttr(kvs []attribute.KeyValue, key, value string) bool {
	for _, kv := range kvs {
		if string(kv.Key) == key && kv.Value.Emit() == value {
			return true
		}
	}
	return false
}
