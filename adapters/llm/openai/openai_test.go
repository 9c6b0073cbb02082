package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/llm/openai"
	"github.com/codelotse/codelotse/ports"
)

const (
	apiKey = "sk-test-CANARY-4f1d2c"
	prompt = "PROMPT-CANARY review this diff"
)

// fake is an OpenAI-compatible endpoint: it records each request and
// answers with the handler's status and body.
type fake struct {
	mu      sync.Mutex
	reqs    []recorded
	status  int
	body    string
	handler http.HandlerFunc // overrides status and body when set
}

type recorded struct {
	method, path string
	header       http.Header
	body         []byte
}

func newFake(t *testing.T, status int, body string) (*fake, *httptest.Server) {
	t.Helper()
	f := &fake{status: status, body: body}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.Header.Clone(), b})
		h := f.handler
		f.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.body)
	}))
	t.Cleanup(srv.Close)
	return f, srv
}

func (f *fake) last(t *testing.T) recorded {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the fake endpoint received no request")
	}
	return f.reqs[len(f.reqs)-1]
}

func client(t *testing.T, baseURL string, mod func(*openai.Options)) *openai.Client {
	t.Helper()
	opts := openai.Options{BaseURL: baseURL + "/v1/", APIKey: apiKey, Model: "gpt-test"}
	if mod != nil {
		mod(&opts)
	}
	c, err := openai.New(opts)
	if err != nil {
		t.Fatalf("New() = %v", err)
	}
	return c
}

// conversation is a finder turn after one tool round trip.
func conversation() ports.ModelRequest {
	return ports.ModelRequest{
		Step: ports.StepFinder,
		Messages: []ports.Message{
			{Role: ports.RoleSystem, Content: "You review code."},
			{Role: ports.RoleUser, Content: prompt},
			{Role: ports.RoleAssistant, ToolCalls: []ports.ModelToolCall{
				{ID: "call_a", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`)},
			}},
			{Role: ports.RoleTool, ToolCallID: "call_a", Content: "package a"},
		},
		Tools: []ports.ToolSpec{
			{Name: "read_file", Description: "Reads a file of the review.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "mcp_wiki_search", Description: "wiki: search", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		},
	}
}

const toolCallTurn = `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": null, "refusal": null,
    "tool_calls": [
      {"id": "call_1", "type": "function", "function": {"name": "mcp_wiki_search", "arguments": "{\"query\":\"cache\"}"}},
      {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"b.go\"}"}}
    ]}}],
  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
}`

func TestCompleteToolCallTurn(t *testing.T) {
	f, srv := newFake(t, http.StatusOK, toolCallTurn)
	got, err := client(t, srv.URL, nil).Complete(context.Background(), conversation())
	if err != nil {
		t.Fatalf("Complete() = %v", err)
	}
	want := ports.ModelResponse{ToolCalls: []ports.ModelToolCall{
		{ID: "call_1", Name: "mcp_wiki_search", Arguments: json.RawMessage(`{"query":"cache"}`)},
		{ID: "call_2", Name: "read_file", Arguments: json.RawMessage(`{"path": "b.go"}`)},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Complete() = %+v, want %+v", got, want)
	}

	r := f.last(t)
	if r.method != http.MethodPost || r.path != "/v1/chat/completions" {
		t.Errorf("request = %s %s, want POST /v1/chat/completions", r.method, r.path)
	}
	if h := r.header.Get("Authorization"); h != "Bearer "+apiKey {
		t.Errorf("Authorization = %q, want the bearer key", h)
	}
	if h := r.header.Get("Content-Type"); h != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", h)
	}

	// The body, field by field, as generic JSON: what the wire carries.
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Fatalf("request body is not JSON: %v", err)
	}
	if body["model"] != "gpt-test" {
		t.Errorf("model = %v, want gpt-test", body["model"])
	}
	wantMessages := []any{
		map[string]any{"role": "system", "content": "You review code."},
		map[string]any{"role": "user", "content": prompt},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
			map[string]any{"id": "call_a", "type": "function", "function": map[string]any{
				"name": "read_file", "arguments": `{"path":"a.go"}`,
			}},
		}},
		map[string]any{"role": "tool", "content": "package a", "tool_call_id": "call_a"},
	}
	if !reflect.DeepEqual(body["messages"], wantMessages) {
		got, _ := json.MarshalIndent(body["messages"], "", " ")
		t.Errorf("messages = %s", got)
	}
	wantTools := []any{
		map[string]any{"type": "function", "function": map[string]any{
			"name": "read_file", "description": "Reads a file of the review.",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []any{"path"}},
		}},
		map[string]any{"type": "function", "function": map[string]any{
			"name": "mcp_wiki_search", "description": "wiki: search",
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}},
		}},
	}
	if !reflect.DeepEqual(body["tools"], wantTools) {
		got, _ := json.MarshalIndent(body["tools"], "", " ")
		t.Errorf("tools = %s", got)
	}
	if len(body) != 3 {
		t.Errorf("request body has keys %v, want model, messages, tools", keys(body))
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestCompleteContentTurn(t *testing.T) {
	f, srv := newFake(t, http.StatusOK, `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"One paragraph."}}]}`)
	req := ports.ModelRequest{Step: ports.StepSummary, Messages: []ports.Message{{Role: ports.RoleUser, Content: "Summarise."}}}
	got, err := client(t, srv.URL, nil).Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete() = %v", err)
	}
	if want := (ports.ModelResponse{Content: "One paragraph."}); !reflect.DeepEqual(got, want) {
		t.Errorf("Complete() = %+v, want %+v", got, want)
	}
	var body map[string]any
	if err := json.Unmarshal(f.last(t).body, &body); err != nil {
		t.Fatal(err)
	}
	if _, ok := body["tools"]; ok {
		t.Errorf("request body has tools %v, want none when no tool is offered", body["tools"])
	}
}

func TestCompleteArguments(t *testing.T) {
	tests := []struct {
		name string
		wire string // the "arguments" field as it appears on the wire
		want string
	}{
		{"object in a string", `"{\"q\":1}"`, `{"q":1}`},
		{"empty string", `""`, `{}`},
		{"null", `null`, `{}`},
		{"invalid JSON kept as a string value", `"{\"q\": "`, `"{\"q\": "`},
		{"object instead of a string", `{"q":1}`, `{"q":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := newFake(t, http.StatusOK, `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":`+tt.wire+`}}]}}]}`)
			got, err := client(t, srv.URL, nil).Complete(context.Background(), ports.ModelRequest{Step: ports.StepFinder})
			if err != nil {
				t.Fatalf("Complete() = %v", err)
			}
			if len(got.ToolCalls) != 1 || string(got.ToolCalls[0].Arguments) != tt.want {
				t.Errorf("Complete() = %+v, want arguments %s", got, tt.want)
			}
		})
	}
}

func TestInvalidArgumentsGoBackUnchanged(t *testing.T) {
	f, srv := newFake(t, http.StatusOK, `{"choices":[{"message":{"content":"done"}}]}`)
	req := ports.ModelRequest{Step: ports.StepFinder, Messages: []ports.Message{
		{Role: ports.RoleAssistant, ToolCalls: []ports.ModelToolCall{{ID: "c", Name: "f", Arguments: json.RawMessage(`"{\"q\": "`)}}},
	}}
	if _, err := client(t, srv.URL, nil).Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct{ Arguments string }
			} `json:"tool_calls"`
		}
	}
	if err := json.Unmarshal(f.last(t).body, &body); err != nil {
		t.Fatal(err)
	}
	if got := body.Messages[0].ToolCalls[0].Function.Arguments; got != `{"q": ` {
		t.Errorf("arguments sent back = %q, want the model's own text", got)
	}
}

func TestCompleteErrors(t *testing.T) {
	echo := `{"error":{"message":"bad request: ` + prompt + ` ` + apiKey + `"}}`
	tests := []struct {
		name   string
		status int
		body   string
		max    int64
		check  func(error) bool
	}{
		{"500", 500, echo, 0, func(err error) bool {
			var se *openai.StatusError
			return errors.As(err, &se) && se.StatusCode == 500
		}},
		{"401", 401, echo, 0, func(err error) bool {
			var se *openai.StatusError
			return errors.As(err, &se) && se.StatusCode == 401
		}},
		{"malformed body", 200, `{"choices": [` + prompt, 0, func(err error) bool { return errors.Is(err, openai.ErrMalformedResponse) }},
		{"no choice", 200, `{"choices": []}`, 0, func(err error) bool { return errors.Is(err, openai.ErrMalformedResponse) }},
		{"nameless tool call", 200, `{"choices":[{"message":{"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}}]}`, 0, func(err error) bool { return errors.Is(err, openai.ErrMalformedResponse) }},
		{"oversized body", 200, `{"choices":[{"message":{"content":"` + strings.Repeat("x", 2048) + `"}}]}`, 1024, func(err error) bool { return errors.Is(err, openai.ErrResponseTooLarge) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, srv := newFake(t, tt.status, tt.body)
			c := client(t, srv.URL, func(o *openai.Options) { o.MaxResponseBytes = tt.max })
			_, err := c.Complete(context.Background(), conversation())
			if err == nil || !tt.check(err) {
				t.Fatalf("Complete() = %v, want the %s error", err, tt.name)
			}
			if h := f.last(t).header.Get("Authorization"); h != "Bearer "+apiKey {
				t.Errorf("Authorization = %q, want the bearer key on the request", h)
			}
			assertClean(t, err, srv.URL)
		})
	}
}

func TestDefaultCapIsEightMiB(t *testing.T) {
	big := `{"choices":[{"message":{"content":"` + strings.Repeat("x", 8<<20) + `"}}]}`
	_, srv := newFake(t, 200, big)
	_, err := client(t, srv.URL, nil).Complete(context.Background(), conversation())
	if !errors.Is(err, openai.ErrResponseTooLarge) {
		t.Fatalf("Complete() = %v, want ErrResponseTooLarge", err)
	}
}

// assertClean fails when err carries the API key, the prompt or the URL.
func assertClean(t *testing.T, err error, url string) {
	t.Helper()
	for _, bad := range []string{apiKey, "CANARY", url, "Bearer"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("error %q contains %q", err, bad)
		}
	}
}

func TestContextCancellation(t *testing.T) {
	f, srv := newFake(t, 200, "")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.handler = func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}

	t.Run("caller cancels", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := client(t, srv.URL, nil).Complete(ctx, conversation())
		if !errors.Is(err, context.Canceled) || !errors.Is(err, openai.ErrRequestFailed) {
			t.Fatalf("Complete() = %v, want context.Canceled", err)
		}
		assertClean(t, err, srv.URL)
	})
	t.Run("timeout option", func(t *testing.T) {
		c := client(t, srv.URL, func(o *openai.Options) { o.Timeout = 50 * time.Millisecond })
		_, err := c.Complete(context.Background(), conversation())
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Complete() = %v, want context.DeadlineExceeded", err)
		}
		assertClean(t, err, srv.URL)
	})
}

func TestUnreachableEndpoint(t *testing.T) {
	_, srv := newFake(t, 200, "")
	url := srv.URL
	srv.Close()
	_, err := client(t, url, nil).Complete(context.Background(), conversation())
	if !errors.Is(err, openai.ErrRequestFailed) {
		t.Fatalf("Complete() = %v, want ErrRequestFailed", err)
	}
	assertClean(t, err, url)
}

func TestNoAPIKeyNoAuthorization(t *testing.T) {
	f, srv := newFake(t, 200, `{"choices":[{"message":{"content":"ok"}}]}`)
	c := client(t, srv.URL, func(o *openai.Options) { o.APIKey = "" })
	if _, err := c.Complete(context.Background(), conversation()); err != nil {
		t.Fatal(err)
	}
	if h, ok := f.last(t).header["Authorization"]; ok {
		t.Errorf("Authorization = %q, want none without a key", h)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name string
		opts openai.Options
		ok   bool
	}{
		{"valid", openai.Options{BaseURL: "https://api.example.com/v1", Model: "m"}, true},
		{"http for a local endpoint", openai.Options{BaseURL: "http://127.0.0.1:11434/v1", Model: "m"}, true},
		{"no model", openai.Options{BaseURL: "https://api.example.com/v1"}, false},
		{"no base URL", openai.Options{Model: "m"}, false},
		{"ftp", openai.Options{BaseURL: "ftp://api.example.com", Model: "m"}, false},
		{"no host", openai.Options{BaseURL: "https:///v1", Model: "m"}, false},
		{"user info", openai.Options{BaseURL: "https://u:p@api.example.com/v1", Model: "m"}, false},
		{"query", openai.Options{BaseURL: "https://api.example.com/v1?x=1", Model: "m"}, false},
		{"line break in key", openai.Options{BaseURL: "https://api.example.com/v1", Model: "m", APIKey: "a\nb"}, false},
		{"negative cap", openai.Options{BaseURL: "https://api.example.com/v1", Model: "m", MaxResponseBytes: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openai.New(tt.opts)
			if (err == nil) != tt.ok {
				t.Fatalf("New(%s) = %v, want ok=%v", tt.name, err, tt.ok)
			}
			if err != nil {
				if !errors.Is(err, openai.ErrConfig) {
					t.Errorf("New() = %v, want ErrConfig", err)
				}
				if strings.Contains(err.Error(), "u:p") || strings.Contains(err.Error(), "a\nb") {
					t.Errorf("New() = %q, echoes the value", err)
				}
			}
		})
	}
}
