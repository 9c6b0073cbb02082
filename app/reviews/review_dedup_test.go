package reviews_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/domain/review"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/ports"
)

// wrapped is FastMCP's structuredContent of a str result, as the go-sdk
// client hands it on.
func wrapped(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"result": s})
	return b
}

// oneCall runs a review whose finder makes one call answered by res, and
// returns what the finder saw, the call's record and the run's stats.
func oneCall(t *testing.T, res ports.ToolResult) (answer string, rec ports.ToolCall, stats review.McpStats) {
	t.Helper()
	e := newReviewEnv(t, 5)
	e.mcp.answer = func(string, json.RawMessage) (ports.ToolResult, error) { return res, nil }
	e.finderCalls(`{"query": "cache"}`)
	run := e.run(t)
	answers := e.model.toolAnswers()
	if len(answers) != 1 || len(e.calls.Records) != 1 {
		t.Fatalf("answers %d, records %d; want one call", len(answers), len(e.calls.Records))
	}
	return answers[0], e.calls.Records[0], run.Stats().Mcp
}

// TestResultsReachTheModelOnce: a structuredContent that repeats the text
// (FastMCP's {"result": text}, the TypeScript and Go SDKs' JSON text)
// reaches the model once and is counted once; other structuredContent
// still reaches it next to the text.
func TestResultsReachTheModelOnce(t *testing.T) {
	const text = "The cache was added in ADR-7; ask bob@example.org."
	tests := []struct {
		name      string
		res       ports.ToolResult
		wantBytes int
		wantIn    []string
	}{
		{"FastMCP str result", ports.ToolResult{Texts: []string{text}, Structured: wrapped(text)}, len(text), nil},
		{"TypeScript JSON text", ports.ToolResult{Texts: []string{`{"adr": "The cache was added in ADR-7"}`}, Structured: json.RawMessage(`{"adr":"The cache was added in ADR-7"}`)},
			len(`{"adr": "The cache was added in ADR-7"}`), nil},
		{"structured content of its own", ports.ToolResult{Texts: []string{text}, Structured: json.RawMessage(`{"adr":"The cache was added in ADR-7","hits":3}`)},
			len(text) + 2 + len(`{"adr":"The cache was added in ADR-7","hits":3}`), []string{`"hits":3`}},
		{"differs by one character", ports.ToolResult{Texts: []string{text}, Structured: wrapped(text + " ")},
			len(text) + 2 + len(wrapped(text+" ")), []string{`{"result":`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer, rec, stats := oneCall(t, tt.res)
			copies := 1 + len(tt.wantIn)
			if n := strings.Count(answer, "The cache was added in ADR-7"); n != copies {
				t.Errorf("the model saw the result %d times, want %d:\n%s", n, copies, answer)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(answer, w) {
					t.Errorf("the model did not see %s", w)
				}
			}
			if strings.Contains(answer, "bob@example.org") {
				t.Errorf("the kept text was not redacted")
			}
			if rec.Status != review.CallOK || rec.ResponseBytes != tt.wantBytes || stats.Bytes != tt.wantBytes {
				t.Errorf("status %s, recorded %d bytes, run %d; want ok and %d", rec.Status, rec.ResponseBytes, stats.Bytes, tt.wantBytes)
			}
		})
	}
}

// TestCapsApplyToTheTextThatIsKept: the 64 KiB cap, the byte budget and
// the 8,000 characters count the deduplicated text: a 40 KiB str result
// fits (its two copies would not), a 70 KiB one is still too large, and
// a 5,000-character result reaches the model as exactly its 5,000
// characters.
func TestCapsApplyToTheTextThatIsKept(t *testing.T) {
	fits := strings.Repeat("x", 40<<10)
	answer, rec, stats := oneCall(t, ports.ToolResult{Texts: []string{fits}, Structured: wrapped(fits)})
	if rec.Status != review.CallOK || rec.ResponseBytes != len(fits) || stats.Bytes != len(fits) {
		t.Errorf("40 KiB repeated: status %s, %d bytes, run %d; want ok and %d", rec.Status, rec.ResponseBytes, stats.Bytes, len(fits))
	}
	if !strings.Contains(answer, "xxxx") {
		t.Errorf("40 KiB repeated: the model saw no result")
	}

	over := strings.Repeat("x", limits.ToolResultCap+6<<10)
	answer, rec, _ = oneCall(t, ports.ToolResult{Texts: []string{over}, Structured: wrapped(over)})
	if rec.Status != review.CallTooLarge || strings.Contains(answer, "xxxx") {
		t.Errorf("70 KiB repeated: status %s; want too_large, nothing shown", rec.Status)
	}

	chars := strings.Repeat("é", 5000)
	answer, rec, _ = oneCall(t, ports.ToolResult{Texts: []string{chars}, Structured: wrapped(chars)})
	if n := strings.Count(answer, "é"); n != 5000 || rec.Status != review.CallOK {
		t.Errorf("5,000 characters repeated: the model saw %d (status %s), want exactly 5000", n, rec.Status)
	}
}

// TestScansWhatReachesTheModel: the secret scan reads the text that is
// kept, and structured content that is not a repeat is kept and scanned
// with it, so a secret in either drops the result.
func TestScansWhatReachesTheModel(t *testing.T) {
	const key = "AKIAIOSFODNN7EXAMPLE"
	for name, res := range map[string]ports.ToolResult{
		"repeated, secret in both":          {Texts: []string{"the key is " + key}, Structured: wrapped("the key is " + key)},
		"secret only in the structured one": {Texts: []string{"the key is hidden"}, Structured: wrapped("the key is " + key)},
		"secret next to a repeated result":  {Texts: []string{"the key is hidden"}, Structured: json.RawMessage(`{"result":"the key is hidden","k":"` + key + `"}`)},
		"secret in a JSON text of its own":  {Texts: []string{`{"k":"` + key + `"}`}, Structured: json.RawMessage(`{"k":"AKIAIOSFODNN7EXAMPLF"}`)},
	} {
		t.Run(name, func(t *testing.T) {
			answer, rec, _ := oneCall(t, res)
			if rec.Status != review.CallBlocked || strings.Contains(answer, "AKIA") {
				t.Errorf("status %s, answer %.200q; want blocked, nothing of the result", rec.Status, answer)
			}
		})
	}
}
