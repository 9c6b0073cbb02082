// Package tracing installs the process's OpenTelemetry tracer provider.
// Traces leave the process only when the operator names a collector with
// OpenTelemetry's standard variables (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); otherwise the global provider stays
// the API's no-op and spans cost next to nothing.
package tracing

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ShutdownTimeout bounds the final flush of buffered spans.
const ShutdownTimeout = 5 * time.Second

// Setup installs an OTLP/HTTP exporter when an endpoint is set and returns
// the function that flushes and stops it (a no-op otherwise). The exporter
// reads the other OTEL_EXPORTER_OTLP_* variables itself (headers,
// certificates, timeout); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// name the resource. Only the http/protobuf protocol is built in: another
// OTEL_EXPORTER_OTLP_PROTOCOL is a startup error, not a silent fallback.
func Setup(ctx context.Context, getenv func(string) string, version string) (func(), error) {
	if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func() {}, nil
	}
	for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := getenv(v); p != "" && p != "http/protobuf" {
			return nil, fmt.Errorf("configuration: %s must be http/protobuf (the only OTLP protocol built in), not %q", v, p)
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "codelotse"), attribute.String("service.version", version)),
		resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
		defer cancel()
		_ = tp.Shutdown(ctx)
	}, nil
}
