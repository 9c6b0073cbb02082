package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"

	"github.com/codelotse/codelotse/adapters/tracing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestExportsOnlyWithAnEndpoint: without an OTLP endpoint nothing is
// installed (the global provider stays the no-op); with one, spans reach
// the collector over OTLP/HTTP when the process stops.
func TestExportsOnlyWithAnEndpoint(t *testing.T) {
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	stop, err := tracing.Setup(context.Background(), env(nil), "test")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if otel.GetTracerProvider() != prev {
		t.Fatal("a tracer provider was installed without an endpoint")
	}

	var mu sync.Mutex
	var paths []string
	var body []byte
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths = append(paths, r.URL.Path)
		body = append(body, b...)
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(collector.Close)
	// The exporter reads the standard variables from the process.
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_SERVICE_NAME", "codelotse-test")
	stop, err = tracing.Setup(context.Background(), env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}), "1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	_, span := otel.Tracer("test").Start(context.Background(), "exported-span")
	span.End()
	stop()
	mu.Lock()
	defer mu.Unlock()
	if len(paths) == 0 || paths[0] != "/v1/traces" {
		t.Fatalf("the collector received %v, want a POST to /v1/traces", paths)
	}
	for _, want := range []string{"exported-span", "codelotse-test", "1.2.3"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the export lacks %q", want)
		}
	}
}

func TestRefusesProtocolsNotBuiltIn(t *testing.T) {
	_, err := tracing.Setup(context.Background(), env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}), "test")
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("Setup with grpc = %v, want a refusal naming http/protobuf", err)
	}
}
