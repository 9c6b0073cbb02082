package reviews

import (
	"context"

	"github.com/codelotse/codelotse/domain/review"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName names the application's OpenTelemetry tracer. The app layer
// uses only the OpenTelemetry API (a no-op until the process installs a
// provider); spans carry step names and counts, never prompts, model
// output, tool arguments or results.
const TracerName = "github.com/codelotse/codelotse/app"

// startStep opens the span of one review step (finder, verifier, summary).
func startStep(ctx context.Context, step string) (context.Context, trace.Span) {
	return otel.Tracer(TracerName).Start(ctx, "review "+step,
		trace.WithAttributes(attribute.String("codelotse.review.step", step)))
}

// endStep ends a step's span with the number of model turns it took and
// its failure, if any (the error's presence, not its text, which may
// quote the model's endpoint).
func endStep(span trace.Span, turns int, err error) {
	span.SetAttributes(attribute.Int("codelotse.review.turns", turns))
	if err != nil {
		span.SetStatus(codes.Error, "step failed")
	}
	span.End()
}

// startCall opens the span of one MCP context call of a review: the tool's
// name and, at its end, the call's status (ok, blocked, too_large, …), so
// calls the pipeline refused before any request are traced too.
func startCall(ctx context.Context, toolName string) (context.Context, trace.Span) {
	return otel.Tracer(TracerName).Start(ctx, "mcp context call "+toolName,
		trace.WithAttributes(attribute.String("gen_ai.tool.name", toolName)))
}

func endCall(span trace.Span, status review.CallStatus) {
	span.SetAttributes(attribute.String("codelotse.mcp.call.status", string(status)))
	if status != review.CallOK {
		span.SetStatus(codes.Error, string(status))
	}
	span.End()
}
