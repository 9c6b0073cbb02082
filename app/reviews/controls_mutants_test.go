package reviews_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/reviews"
	"github.com/codelotse/codelotse/domain/policy"
	"github.com/codelotse/codelotse/domain/review"
	"github.com/codelotse/codelotse/domain/settings"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

// Each of these tests fails when its control is removed (the mutants of
// tools/mutants/catalogue.json).

// TestAToolResultIsInNoSpan: the MCP server's result (with a canary in
// it) reaches the model, and no span of the run carries it: not in a
// name, an attribute, a status or an event.
func TestAToolResultIsInNoSpan(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	const canary = "resultcanary5b7e"
	e := newReviewEnv(t, 5)
	e.mcp.answer = func(string, json.RawMessage) (ports.ToolResult, error) {
		return ports.ToolResult{Texts: []string{"The cache was added in ADR-7 " + canary + "."}}, nil
	}
	e.finderCalls(`{"query": "cache"}`)
	if run := e.run(t); run.Status() != review.Done {
		t.Fatalf("run %s", run.Status())
	}
	if st := e.statuses(); len(st) != 1 || st[0] != review.CallOK {
		t.Fatalf("call statuses %v, want one ok call (the result must be kept for this test to mean anything)", st)
	}
	if !modelSaw(e.model, canary) {
		t.Fatal("the model never saw the result: the test proves nothing")
	}
	spans := sr.Ended()
	if len(spans) == 0 {
		t.Fatal("no spans recorded")
	}
	for _, s := range spans {
		texts := []string{s.Name(), s.Status().Description}
		for _, kv := range s.Attributes() {
			texts = append(texts, string(kv.Key)+"="+kv.Value.Emit())
		}
		for _, ev := range s.Events() {
			texts = append(texts, ev.Name)
			for _, kv := range ev.Attributes {
				texts = append(texts, kv.Value.Emit())
			}
		}
		if strings.Contains(strings.Join(texts, " "), canary) {
			t.Errorf("span %q carries the tool result: %q", s.Name(), texts)
		}
	}
}

// TestPromptLogsRedactTheModelsAnswer: an answer of the model holding a
// secret is kept redacted in its debug prompt log, like the request.
func TestPromptLogsRedactTheModelsAnswer(t *testing.T) {
	e, _, logs := promptEnv(t, debugOn(t, 2))
	const secret = "AKIAZZZZANSWER123456"
	e.model.turns[ports.StepSummary] = []ports.ModelResponse{{Content: "Adds a cache; the deploy key is " + secret + "."}}
	if run := e.run(t); run.Status() != review.Done {
		t.Fatalf("run %s", run.Status())
	}
	if len(logs.Logs) == 0 {
		t.Fatal("no prompt logs kept")
	}
	for _, l := range logs.Logs {
		plain, _ := hex.DecodeString(strings.SplitN(string(l.Sealed), "|", 3)[2])
		if strings.Contains(string(l.Sealed), secret) || strings.Contains(string(plain), secret) {
			t.Errorf("log %s%d holds the model's secret", l.Step, l.Turn)
		}
	}
	prompts, err := reviews.NewListPromptsHandler(reviews.Deps{Tenants: e.tenants, Cipher: e.deps.Cipher, Clock: e.deps.Clock}).Handle(context.Background(), admin(), reviews.ListPrompts{ReviewID: revReview})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	last := prompts[len(prompts)-1]
	answer := last.Messages[len(last.Messages)-1]
	if last.Step != ports.StepSummary || answer.Role != "assistant" || !strings.Contains(answer.Content, "Adds a cache; the deploy key is [REDACTED:aws-access-token]") {
		t.Errorf("the summary's answer is not kept redacted: step %s, %s %q", last.Step, answer.Role, answer.Content)
	}
}

// modelSaw reports whether any request to the model held text.
func modelSaw(m *scriptModel, text string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.reqs {
		for _, msg := range r.Messages {
			if strings.Contains(msg.Content, text) {
				return true
			}
		}
	}
	return false
}

// TestPromptLogsWhileOffTouchNothing: while the tenant keeps no prompt
// logs, a request is neither redacted nor sealed for one; on an instance
// without a key ring that means no "not written" warning at every model
// request.
func TestPromptLogsWhileOffTouchNothing(t *testing.T) {
	e, _, logs := promptEnv(t, settings.Default())
	var warnings []string
	e.deps.Warn = func(msg string, fields map[string]string) {
		if strings.Contains(msg, "prompt log") {
			warnings = append(warnings, msg)
		}
	}
	e.deps.Cipher = app.NewVault(&portfake.Cipher{Keys: nil})
	e.run(t)
	if len(logs.Logs) != 0 || len(warnings) != 0 {
		t.Errorf("debug prompts off: %d logs, warnings %q; want none", len(logs.Logs), warnings)
	}
}

// TestSendsTheArgumentsThatWereChecked: the server receives the
// canonical arguments the schema check and the scan judged, never the
// model's own bytes (whitespace, key order, escapes).
func TestSendsTheArgumentsThatWereChecked(t *testing.T) {
	e := newReviewEnv(t, 5)
	e.finderCalls("{ \"query\" :\n \"\\u0063ache\" }")
	if run := e.run(t); run.Status() != review.Done {
		t.Fatalf("run %s", run.Status())
	}
	if len(e.mcp.sent) != 1 || e.mcp.sent[0] != `{"query":"cache"}` {
		t.Errorf("sent %q, want the canonical arguments {\"query\":\"cache\"} once", e.mcp.sent)
	}
}

// TestAPublicRepositoryGetsNoMcpWhateverElseWorks: a repository that
// turned public after its policy was set gets no MCP context, with every
// server, table and policy working (MC6: the visibility at run time
// alone stops it; TestNeverRunsOnPublicRepositories also breaks the
// servers' table, which stops a run too).
func TestAPublicRepositoryGetsNoMcpWhateverElseWorks(t *testing.T) {
	e := newReviewEnv(t, 5)
	r := e.repos.ByID[revRepo]
	if err := r.ChangeVisibility(policy.VisibilityPublic); err != nil {
		t.Fatal(err)
	}
	e.repos.ByID[revRepo] = r
	var warnings []string
	e.deps.Warn = func(msg string, _ map[string]string) { warnings = append(warnings, msg) }
	e.finderCalls(`{"query": "cache"}`)
	run := e.run(t)
	if e.mcp.opened != 0 || len(e.calls.Records) != 0 || run.Stats().Mcp.Prompt != nil {
		t.Errorf("public repository: %d sessions, %d call records, prompt %v; want no MCP context", e.mcp.opened, len(e.calls.Records), run.Stats().Mcp.Prompt)
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q: a public repository is not a failure to skip", warnings)
	}
}
