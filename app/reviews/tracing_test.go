package reviews_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/ports"
)

const traceCanary = "canary91d2"

// canaryModel calls the external tool once in the finder, then finds one
// issue whose evidence is in the diff; every text it returns carries the
// canary.
type canaryModel struct{ finderTurns int }

func (m *canaryModel) Complete(_ context.Context, req ports.ModelRequest) (ports.ModelResponse, error) {
	switch req.Step {
	case ports.StepFinder:
		m.finderTurns++
		if m.finderTurns == 1 {
			return ports.ModelResponse{ToolCalls: []ports.ModelToolCall{{ID: "1", Name: "mcp_wiki_search", Arguments: json.RawMessage(`{"query":"` + traceCanary + `"}`)}}}, nil
		}
		return ports.ModelResponse{Content: `{"findings": [{"path": "a.go", "line": 1, "title": "` + traceCanary + `", "body": "b", "evidence": "x := 1"}]}`}, nil
	case ports.StepVerifier:
		return ports.ModelResponse{Content: `{"verdicts": [{"index": 0, "keep": true, "reason": "` + traceCanary + `"}]}`}, nil
	}
	return ports.ModelResponse{Content: "Summary " + traceCanary}, nil
}

type canaryTool struct{}

func (canaryTool) Spec() ports.ToolSpec {
	return ports.ToolSpec{Name: "mcp_wiki_search", Description: "search", Parameters: json.RawMessage(`{"type":"object"}`)}
}
func (canaryTool) Call(context.Context, json.RawMessage) string { return "result " + traceCanary }

// TestTracesEveryReviewStepWithoutContent: one span per step, named by the
// step, with the number of model turns; no prompt, diff, tool argument,
// tool result or model output in any of them.
func TestTracesEveryReviewStepWithoutContent(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	out, err := (&reviews.Pipeline{Model: &canaryModel{}}).Run(context.Background(), reviews.ReviewPipelineInput{
		Title: traceCanary, Diff: "+x := 1 // " + traceCanary, ExternalTools: []reviews.ExternalTool{canaryTool{}}})
	if err != nil || out.Summary == "" {
		t.Fatalf("Run = %+v, %v; want a summary", out, err)
	}
	turns := map[string]string{}
	for _, s := range sr.Ended() {
		text := s.Name() + " " + s.Status().Description
		for _, kv := range s.Attributes() {
			text += " " + string(kv.Key) + "=" + kv.Value.Emit()
			if kv.Key == "codelotse.review.turns" {
				turns[s.Name()] = kv.Value.Emit()
			}
		}
		if strings.Contains(text, traceCanary) {
			t.Errorf("span carries review content: %s", text)
		}
	}
	want := map[string]string{"review finder": "2", "review verifier": "1", "review summary": "1"}
	for name, n := range want {
		if turns[name] != n {
			t.Errorf("span %q turns = %q, want %q (spans: %v)", name, turns[name], n, turns)
		}
	}
}

// TestTracesEveryMcpContextCallWithItsStatus: a span per call of the
// finder, refused ones included, with the tool's name and the recorded
// status, inside the finder's span; never the arguments.
func TestTracesEveryMcpContextCallWithItsStatus(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	e := newReviewEnv(t, 5)
	e.finderCalls(`{"query": "AKIAIOSFODNN7EXAMPLE"}`, `{"query": "cache `+traceCanary+`"}`)
	e.run(t)

	var finder trace.SpanContext
	for _, s := range sr.Ended() {
		if s.Name() == "review finder" {
			finder = s.SpanContext()
		}
	}
	var statuses []string
	for _, s := range sr.Ended() {
		if s.Name() != "mcp context call search" {
			continue
		}
		if s.Parent().SpanID() != finder.SpanID() {
			t.Errorf("call span outside the finder's span")
		}
		for _, kv := range s.Attributes() {
			v := kv.Value.Emit()
			if strings.Contains(v, traceCanary) || strings.Contains(v, "AKIA") {
				t.Errorf("call span attribute %s = %q", kv.Key, v)
			}
			if kv.Key == "codelotse.mcp.call.status" {
				statuses = append(statuses, v)
			}
		}
	}
	slices.Sort(statuses)
	var want []string
	for _, s := range e.statuses() {
		want = append(want, string(s))
	}
	slices.Sort(want)
	if len(statuses) != 2 || !slices.Equal(statuses, want) {
		t.Errorf("call spans with statuses %v, want the recorded %v", statuses, want)
	}
}
