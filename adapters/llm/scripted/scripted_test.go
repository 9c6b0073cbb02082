package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/codelotse/codelotse/adapters/llm/scripted"
	"github.com/codelotse/codelotse/ports"
)

// contractScript is the example of the package doc.
const contractScript = `{"finder":   [{"toolCalls": [{"name": "mcp_wiki_search", "arguments": {"query": "cache"}}]},
              {"content": "{\"findings\": [{\"path\": \"a.go\", \"line\": 3, \"title\": \"t\", \"body\": \"b\", \"evidence\": \"e\"}]}"}],
 "verifier": [{"content": "{\"verdicts\": [{\"index\": 0, \"keep\": true, \"reason\": \"r\"}]}"}],
 "summary":  [{"content": "One paragraph."}]}`

func write(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func model(t *testing.T, script, logPath string) *scripted.Model {
	t.Helper()
	m, err := scripted.New(write(t, script), logPath)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return m
}

func complete(t *testing.T, m *scripted.Model, step string) ports.ModelResponse {
	t.Helper()
	resp, err := m.Complete(context.Background(), ports.ModelRequest{Step: step})
	if err != nil {
		t.Fatalf("Complete(%s) = %v", step, err)
	}
	return resp
}

func TestTurnsReplayedInOrderPerStep(t *testing.T) {
	m := model(t, `{"finder": [
	    {"toolCalls": [{"name": "mcp_wiki_search", "arguments": {"query": "cache"}}, {"name": "read_file", "arguments": {"path": "a.go"}}]},
	    {"toolCalls": [{"name": "search_diff"}]},
	    {"content": "finder done"}],
	  "verifier": [{"content": "verifier 1"}, {"content": "verifier 2"}],
	  "summary": [{"content": "One paragraph."}]}`, "")

	steps := []struct {
		step string
		want ports.ModelResponse
	}{
		// Steps interleave; each keeps its own place.
		{ports.StepVerifier, ports.ModelResponse{Content: "verifier 1"}},
		{ports.StepFinder, ports.ModelResponse{ToolCalls: []ports.ModelToolCall{
			{ID: "call_finder_1_1", Name: "mcp_wiki_search", Arguments: json.RawMessage(`{"query":"cache"}`)},
			{ID: "call_finder_1_2", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
		}}},
		{ports.StepFinder, ports.ModelResponse{ToolCalls: []ports.ModelToolCall{
			{ID: "call_finder_2_1", Name: "search_diff", Arguments: json.RawMessage(`{}`)},
		}}},
		{ports.StepSummary, ports.ModelResponse{Content: "One paragraph."}},
		{ports.StepFinder, ports.ModelResponse{Content: "finder done"}},
		{ports.StepVerifier, ports.ModelResponse{Content: "verifier 2"}},
		// Exhausted: empty content, for ever.
		{ports.StepFinder, ports.ModelResponse{}},
		{ports.StepFinder, ports.ModelResponse{}},
		{ports.StepVerifier, ports.ModelResponse{}},
		{ports.StepSummary, ports.ModelResponse{}},
	}
	for i, s := range steps {
		if got := complete(t, m, s.step); !reflect.DeepEqual(got, s.want) {
			t.Errorf("call %d: Complete(%s) = %+v, want %+v", i+1, s.step, got, s.want)
		}
	}
}

func TestContractExample(t *testing.T) {
	m := model(t, contractScript, "")
	if got := complete(t, m, ports.StepFinder); len(got.ToolCalls) != 1 || got.ToolCalls[0].Name != "mcp_wiki_search" {
		t.Errorf("finder turn 1 = %+v, want the wiki search", got)
	}
	if got := complete(t, m, ports.StepFinder); !strings.HasPrefix(got.Content, `{"findings": [`) {
		t.Errorf("finder turn 2 = %+v, want the findings", got)
	}
	if got := complete(t, m, ports.StepSummary); got.Content != "One paragraph." {
		t.Errorf("summary = %+v", got)
	}
}

func TestMissingStepAnswersEmpty(t *testing.T) {
	m := model(t, `{"summary": [{"content": "s"}]}`, "")
	if got := complete(t, m, ports.StepFinder); !reflect.DeepEqual(got, ports.ModelResponse{}) {
		t.Errorf("Complete(finder) = %+v, want empty content", got)
	}
}

func TestUnknownStepRefused(t *testing.T) {
	m := model(t, contractScript, "")
	_, err := m.Complete(context.Background(), ports.ModelRequest{Step: "planner"})
	if !errors.Is(err, scripted.ErrUnknownStep) {
		t.Fatalf("Complete(planner) = %v, want ErrUnknownStep", err)
	}
}

func TestCancelledContext(t *testing.T) {
	m := model(t, contractScript, "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Complete(ctx, ports.ModelRequest{Step: ports.StepSummary}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Complete() = %v, want context.Canceled", err)
	}
	// The cancelled call did not use the turn up.
	if got := complete(t, m, ports.StepSummary); got.Content != "One paragraph." {
		t.Errorf("Complete(summary) = %+v, want the first turn", got)
	}
}

func TestMalformedScriptsRefused(t *testing.T) {
	tests := []struct {
		name, script, mention string
	}{
		{"not JSON", `{"finder": [`, ""},
		{"empty file", ``, ""},
		{"an array", `[{"content": "x"}]`, ""},
		{"null", `null`, "null"},
		{"unknown step", `{"planner": [{"content": "x"}]}`, "planner"},
		{"misspelt step", `{"Finder ": []}`, "Finder"},
		{"unknown turn key", `{"finder": [{"contents": "x"}]}`, "contents"},
		{"unknown tool call key", `{"finder": [{"toolCalls": [{"name": "f", "args": {}}]}]}`, "args"},
		{"both kinds in one turn", `{"finder": [{"toolCalls": [{"name": "f"}], "content": "x"}]}`, "finder turn 1"},
		{"empty turn", `{"verifier": [{"content": "x"}, {}]}`, "verifier turn 2"},
		{"empty tool calls", `{"finder": [{"toolCalls": []}]}`, "finder turn 1"},
		{"null turn", `{"summary": [null]}`, "summary turn 1"},
		{"nameless tool call", `{"finder": [{"toolCalls": [{"arguments": {}}]}]}`, "no name"},
		{"content not a string", `{"summary": [{"content": 3}]}`, ""},
		{"trailing data", `{"summary": []} {"finder": []}`, "after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scripted.New(write(t, tt.script), "")
			if !errors.Is(err, scripted.ErrScript) {
				t.Fatalf("New(%s) = %v, want ErrScript", tt.script, err)
			}
			if !strings.Contains(err.Error(), "scripted model") || !strings.Contains(err.Error(), tt.mention) {
				t.Errorf("New() = %q, want it to name the scripted model and %q", err, tt.mention)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		if _, err := scripted.New(filepath.Join(t.TempDir(), "nope.json"), ""); !errors.Is(err, scripted.ErrScript) || !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("New() = %v, want ErrScript and ErrNotExist", err)
		}
	})
	t.Run("unwritable log", func(t *testing.T) {
		if _, err := scripted.New(write(t, contractScript), filepath.Join(t.TempDir(), "no", "dir", "log")); err == nil {
			t.Fatal("New() = nil, want an error for a log that cannot be created")
		}
	})
}

func readLog(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}

func TestRequestLog(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	if err := os.WriteFile(logPath, []byte(`{"earlier":"line"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := model(t, contractScript, logPath)
	ctx := context.Background()

	finder := ports.ModelRequest{
		Step: ports.StepFinder,
		Messages: []ports.Message{
			{Role: ports.RoleSystem, Content: "review-v1.5 <rules> & more"},
			{Role: ports.RoleUser, Content: "diff"},
			{Role: ports.RoleAssistant, ToolCalls: []ports.ModelToolCall{{ID: "call_finder_1_1", Name: "mcp_wiki_search", Arguments: json.RawMessage(`{"query":"cache"}`)}}},
			{Role: ports.RoleTool, ToolCallID: "call_finder_1_1", Content: `<untrusted source="mcp:wiki/search">[REDACTED:email]</untrusted>`},
		},
		Tools: []ports.ToolSpec{{Name: "read_file"}, {Name: "mcp_wiki_search", Description: "wiki: search", Parameters: json.RawMessage(`{}`)}},
	}
	if _, err := m.Complete(ctx, finder); err != nil {
		t.Fatal(err)
	}
	summary := ports.ModelRequest{Step: ports.StepSummary, Messages: []ports.Message{{Role: ports.RoleUser, Content: "Summarise.\n\"quoted\""}}}
	if _, err := m.Complete(ctx, summary); err != nil {
		t.Fatal(err)
	}
	// An exhausted step is logged too.
	if _, err := m.Complete(ctx, summary); err != nil {
		t.Fatal(err)
	}

	want := []string{
		`{"earlier":"line"}`,
		`{"step":"finder","tools":["read_file","mcp_wiki_search"],"messages":[` +
			`{"role":"system","content":"review-v1.5 <rules> & more"},` +
			`{"role":"user","content":"diff"},` +
			`{"role":"assistant","content":""},` +
			`{"role":"tool","content":"<untrusted source=\"mcp:wiki/search\">[REDACTED:email]</untrusted>"}]}`,
		`{"step":"summary","tools":[],"messages":[{"role":"user","content":"Summarise.\n\"quoted\""}]}`,
		`{"step":"summary","tools":[],"messages":[{"role":"user","content":"Summarise.\n\"quoted\""}]}`,
	}
	if got := readLog(t, logPath); !reflect.DeepEqual(got, want) {
		t.Errorf("log lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNoLogWithoutPath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	m := model(t, contractScript, "")
	complete(t, m, ports.StepFinder)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("files written without a log path: %v", entries)
	}
}

func TestConcurrentUse(t *testing.T) {
	const n = 64
	var b strings.Builder
	b.WriteString(`{"finder": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"content": "turn ` + string(rune('A'+i%26)) + `"}`)
	}
	b.WriteString(`]}`)
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	m := model(t, b.String(), logPath)

	big := strings.Repeat("x", 64<<10) // larger than a pipe buffer: lines must not interleave
	var wg sync.WaitGroup
	results := make(chan string, 2*n)
	for range 2 * n {
		wg.Go(func() {
			resp, err := m.Complete(context.Background(), ports.ModelRequest{
				Step: ports.StepFinder, Messages: []ports.Message{{Role: ports.RoleUser, Content: big}},
			})
			if err != nil {
				t.Error(err)
			}
			results <- resp.Content
		})
	}
	wg.Wait()
	close(results)
	var turns, empty int
	for c := range results {
		if c == "" {
			empty++
		} else {
			turns++
		}
	}
	if turns != n || empty != n {
		t.Errorf("answers: %d turns and %d empty, want %d and %d", turns, empty, n, n)
	}
	lines := readLog(t, logPath)
	if len(lines) != 2*n {
		t.Fatalf("log has %d lines, want %d", len(lines), 2*n)
	}
	for i, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("log line %d is not JSON: %v", i+1, err)
		}
	}
}

// With perReview every conversation replays the script from its start:
// the turn is the number of assistant messages already in the request,
// so concurrent reviews each get every turn, and the process-wide counters
// are not used.
func TestPerReviewGivesEveryReviewTheSameTurns(t *testing.T) {
	m := model(t, `{"perReview": true,
	  "finder": [{"toolCalls": [{"name": "mcp_wiki_search", "arguments": {"query": "cache"}}]}, {"content": "finder done"}],
	  "summary": [{"content": "One paragraph."}]}`, "")
	first := []ports.Message{{Role: ports.RoleSystem, Content: "s"}, {Role: ports.RoleUser, Content: "u"}}
	second := append(append([]ports.Message(nil), first...),
		ports.Message{Role: ports.RoleAssistant}, ports.Message{Role: ports.RoleTool, Content: "result"})
	third := append(append([]ports.Message(nil), second...), ports.Message{Role: ports.RoleAssistant, Content: "finder done"})

	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tc := range []struct {
				step     string
				messages []ports.Message
				call     string
				content  string
			}{
				{ports.StepFinder, first, "mcp_wiki_search", ""},
				{ports.StepFinder, second, "", "finder done"},
				{ports.StepFinder, third, "", ""},
				{ports.StepSummary, first, "", "One paragraph."},
				{ports.StepVerifier, first, "", ""},
			} {
				resp, err := m.Complete(context.Background(), ports.ModelRequest{Step: tc.step, Messages: tc.messages})
				if err != nil {
					t.Errorf("Complete(%s, %d messages) = %v", tc.step, len(tc.messages), err)
					continue
				}
				call := ""
				if len(resp.ToolCalls) == 1 {
					call = resp.ToolCalls[0].Name
					resp.ToolCalls[0].Name = "changed by the caller"
				}
				if call != tc.call || resp.Content != tc.content {
					t.Errorf("Complete(%s, %d messages) = call %q content %q, want %q %q", tc.step, len(tc.messages), call, resp.Content, tc.call, tc.content)
				}
			}
		}()
	}
	wg.Wait()
}
