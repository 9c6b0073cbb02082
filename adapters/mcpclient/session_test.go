package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

func TestMain(m *testing.M) {
	// Started by the conformance suite as its client under test
	// (conformance_test.go): run one scenario, not the tests.
	if os.Getenv(conformanceClientEnv) != "" {
		os.Exit(runConformanceClient(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

const (
	era2026 = "2026-07-28"
	era2025 = "2025-11-25"
)

var searchSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"query": map[string]any{"type": "string"}},
	"required":   []any{"query"},
}

// sdkServer is a go-sdk server pinned to one protocol era: 2026-07-28
// needs the stateless HTTP handler; the 2025 era is the stateful one,
// which refuses server/discover, so the client falls back to initialize.
func sdkServer(t testing.TB, era string, nTools, pageSize int) *testServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{era},
		PageSize:                  pageSize,
	})
	s.AddTool(&mcp.Tool{
		Name:        "search",
		Description: "Searches the wiki.",
		InputSchema: searchSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct{ Query string }
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "found: " + args.Query},
				&mcp.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
				&mcp.ResourceLink{URI: "https://wiki.example/page", Name: "page"},
				&mcp.TextContent{Text: "second"},
			},
			StructuredContent: map[string]any{"hits": 1},
		}, nil
	})
	s.AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "backend down"}}}, nil
		})
	for i := 2; i < nTools; i++ {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%03d", i), InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:                  era == era2026,
		DisableLocalhostProtection: true, // the Host is mcp.test, on loopback
	})
	return startServer(t, h)
}

func openSession(t testing.TB, c *Connector, ts *testServer, cred server.Credential, responseCap int64) *Session {
	t.Helper()
	s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t), Credential: cred}, responseCap)
	if err != nil {
		t.Fatalf("OpenSession: %v", err)
	}
	return s
}

func TestDiscoversAndCallsToolsInBothProtocolEras(t *testing.T) {
	for _, era := range []string{era2026, era2025} {
		t.Run(era, func(t *testing.T) {
			ts := sdkServer(t, era, 2, 0)
			ignore := goleak.IgnoreCurrent()
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			cred, _ := server.NewHeader("x-api-key", "secret-value-1234")
			s := openSession(t, c, ts, cred, limits.DiscoveryResponseCap)

			defs, err := s.ListTools(context.Background())
			if err != nil {
				t.Fatalf("ListTools: %v", err)
			}
			var search tool.Definition
			names := []string{}
			for _, d := range defs {
				names = append(names, d.Name)
				if d.Name == "search" && d.Err == nil {
					search = d.Definition
				}
			}
			if len(defs) != 2 || !slices.Contains(names, "broken") || !slices.Contains(names, "search") {
				t.Fatalf("ListTools = %v, want search and broken", names)
			}
			if search.Description() != "Searches the wiki." || tool.WriteCapable(search) {
				t.Errorf("search: description %q, writeCapable %v", search.Description(), tool.WriteCapable(search))
			}
			if got := string(search.InputSchema()); !strings.Contains(got, `"query"`) {
				t.Errorf("search schema = %s", got)
			}

			res, err := s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"cache"}`))
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if strings.Join(res.Texts, "|") != "found: cache|second" || res.Dropped != 2 || res.IsError {
				t.Errorf("CallTool = %+v, want two texts, two dropped, no error", res)
			}
			if string(res.Structured) != `{"hits":1}` {
				t.Errorf("Structured = %s", res.Structured)
			}
			res, err = s.CallTool(context.Background(), "broken", tooltest.Args(""))
			if err != nil || !res.IsError || strings.Join(res.Texts, "") != "backend down" {
				t.Errorf("CallTool(broken) = %+v, %v, want isError with the text", res, err)
			}
			_, err = s.CallTool(context.Background(), "missing", tooltest.Args(""))
			wantCode(t, err, ports.ErrProtocol)

			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
			goleak.VerifyNone(t, ignore)

			checkWire(t, era, ts.requests())
		})
	}
}

// checkWire checks what the client sent: the era's handshake, the
// credential on every request, and no capability anywhere.
func checkWire(t *testing.T, era string, reqs []recordedRequest) {
	t.Helper()
	var methods []string
	for _, r := range reqs {
		if got := r.Header.Get("X-Api-Key"); got != "secret-value-1234" {
			t.Errorf("%s request without the credential header", r.Method)
		}
		if r.Method != http.MethodPost {
			methods = append(methods, r.Method)
			continue
		}
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta            map[string]json.RawMessage `json:"_meta"`
				Capabilities    *json.RawMessage           `json:"capabilities"`
				ProtocolVersion string                     `json:"protocolVersion"`
			} `json:"params"`
		}
		if err := json.Unmarshal(r.Body, &m); err != nil {
			t.Fatalf("request body %s: %v", r.Body, err)
		}
		methods = append(methods, m.Method)
		for _, word := range []string{"roots", "sampling", "elicitation"} {
			if strings.Contains(string(r.Body), word) {
				t.Errorf("%s request mentions %q: %s", m.Method, word, r.Body)
			}
		}
		if m.Method == "initialize" {
			if m.Params.Capabilities != nil && string(*m.Params.Capabilities) != "{}" {
				t.Errorf("initialize capabilities = %s, want {} or absent", *m.Params.Capabilities)
			}
			if m.Params.ProtocolVersion != era2025 {
				t.Errorf("initialize protocolVersion = %q", m.Params.ProtocolVersion)
			}
		}
		if caps, ok := m.Params.Meta[mcp.MetaKeyClientCapabilities]; ok && string(caps) != "{}" {
			t.Errorf("%s _meta clientCapabilities = %s, want {}", m.Method, caps)
		}
		if era == era2026 && m.Method != "" {
			if _, ok := m.Params.Meta[mcp.MetaKeyClientCapabilities]; !ok {
				t.Errorf("%s carries no per-request clientCapabilities", m.Method)
			}
			if got := r.Header.Get("Mcp-Protocol-Version"); got != era2026 {
				t.Errorf("%s Mcp-Protocol-Version = %q", m.Method, got)
			}
		}
	}
	want := map[string][]string{
		era2026: {"server/discover", "tools/list", "tools/call", "tools/call", "tools/call"},
		era2025: {"server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call", "tools/call", "tools/call", "DELETE"},
	}[era]
	if strings.Join(methods, " ") != strings.Join(want, " ") {
		t.Errorf("requests = %v, want %v", methods, want)
	}
	if os.Getenv("MCPCLIENT_DUMP_WIRE") != "" {
		for _, r := range reqs {
			t.Logf("%s %s", r.Method, r.Body)
		}
	}
}

func TestAnswersServerRequestsWithMethodNotFound(t *testing.T) {
	raw := newRawServer()
	raw.toolsCall = func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		send := func(msg string) {
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
			w.(http.Flusher).Flush()
		}
		send(`{"jsonrpc":"2.0","id":"r1","method":"roots/list","params":{}}`)
		send(`{"jsonrpc":"2.0","id":"r2","method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":10}}`)
		send(`{"jsonrpc":"2.0","id":"r3","method":"elicitation/create","params":{"message":"your password?","requestedSchema":{"type":"object","properties":{"p":{"type":"string"}}}}}`)
		send(`{"jsonrpc":"2.0","id":"r4","method":"acme/made-up","params":{}}`)
		send(`{"jsonrpc":"2.0","id":"r5","method":"ping"}`)
		got := map[string]rpcMessage{}
		for len(got) < 5 {
			select {
			case m := <-raw.responses:
				var id string
				_ = json.Unmarshal(m.ID, &id)
				got[id] = m
			case <-time.After(3 * time.Second):
				t.Errorf("only %d answers from the client", len(got))
				return
			}
		}
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			m := got[id]
			if m.Error == nil || m.Error.Code != -32601 || m.Result != nil {
				t.Errorf("answer to %s = %+v (result %s), want error -32601", id, m.Error, m.Result)
			}
		}
		if m := got["r5"]; m.Error != nil || string(m.Result) != "{}" {
			t.Errorf("answer to ping = %+v %s, want {}", m.Error, m.Result)
		}
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`, id))
	}
	ts := startServer(t, raw)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	s := openSession(t, c, ts, server.NoCredential(), limits.ReviewResponseCap)
	defer s.Close()
	res, err := s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"x"}`))
	if err != nil || len(res.Texts) != 1 || res.Texts[0] != "done" {
		t.Fatalf("CallTool = %+v, %v", res, err)
	}
}

// TestRefusesInputRequestsOfTheNewProtocol: on 2026-07-28 a server asks
// for roots, sampling or elicitation inside a result (multi-round-trip);
// the client fulfils none and does not call again.
func TestRefusesInputRequestsOfTheNewProtocol(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{era2026}})
	var calls atomic.Int64
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"roots": &mcp.ListRootsParams{}}}, nil
		})
	ts := startServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true}))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	sess := openSession(t, c, ts, server.NoCredential(), limits.ReviewResponseCap)
	defer sess.Close()
	_, err := sess.CallTool(context.Background(), "ask", tooltest.Args(""))
	wantCode(t, err, ports.ErrProtocol)
	if n := calls.Load(); n != 1 {
		t.Errorf("tool called %d times, want 1 (no retry with input responses)", n)
	}
}

func TestPagesThroughToolsUpToTheLimit(t *testing.T) {
	for _, era := range []string{era2026, era2025} {
		t.Run(era+"/200 tools", func(t *testing.T) {
			ts := sdkServer(t, era, limits.MaxListedTools, 30)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
			defer s.Close()
			defs, err := s.ListTools(context.Background())
			if err != nil || len(defs) != limits.MaxListedTools {
				t.Fatalf("ListTools = %d tools, %v; want %d", len(defs), err, limits.MaxListedTools)
			}
		})
		t.Run(era+"/250 tools", func(t *testing.T) {
			ts := sdkServer(t, era, 250, 30)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
			defer s.Close()
			_, err := s.ListTools(context.Background())
			wantCode(t, err, ports.ErrProtocol)
		})
	}
}

func TestStopsEndlessCursors(t *testing.T) {
	tests := []struct {
		name     string
		page     func(n int) string // the result of the n-th tools/list
		maxPages int
	}{
		{"repeated cursor", func(int) string {
			return `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"again"}`
		}, 2},
		{"empty pages", func(n int) string {
			return fmt.Sprintf(`{"tools":[],"nextCursor":"c%d"}`, n)
		}, 1},
		{"one tool per page, forever", func(n int) string {
			return fmt.Sprintf(`{"tools":[{"name":"t%d","inputSchema":{"type":"object"}}],"nextCursor":"c%d"}`, n, n)
		}, limits.MaxListedTools + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := newRawServer()
			var pages atomic.Int64
			raw.toolsList = func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
				writeJSON(w, id, tt.page(int(pages.Add(1))))
			}
			ts := startServer(t, raw)
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
			defer s.Close()
			_, err := s.ListTools(context.Background())
			wantCode(t, err, ports.ErrProtocol)
			if n := pages.Load(); n != int64(tt.maxPages) {
				t.Errorf("server answered %d pages, want %d", n, tt.maxPages)
			}
		})
	}
}

// TestListsToolsThatCannotBecomeDefinitions: a schema nested deeper than
// the domain accepts is still listed, with the reason, so discovery can
// show it as unsupported.
func TestListsToolsThatCannotBecomeDefinitions(t *testing.T) {
	deep := strings.Repeat(`{"a":`, tool.MaxJSONDepth+1) + "1" + strings.Repeat("}", tool.MaxJSONDepth+1)
	raw := newRawServer()
	raw.toolsList = func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		writeJSON(w, id, `{"tools":[{"name":"deep","description":"d","inputSchema":`+deep+`},{"name":"ok","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}]}`)
	}
	ts := startServer(t, raw)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
	defer s.Close()
	all, err := s.ListAll(context.Background())
	if err != nil || len(all) != 2 {
		t.Fatalf("ListAll = %d, %v", len(all), err)
	}
	var ue *tool.UnsupportedError
	if all[0].Name != "deep" || all[0].Description != "d" || !errors.As(all[0].Err, &ue) {
		t.Errorf("deep = %+v, want an UnsupportedError", all[0])
	}
	if all[1].Err != nil || all[1].Definition.Name() != "ok" || tool.WriteCapable(all[1].Definition) {
		t.Errorf("ok = %+v", all[1])
	}
	listed, err := s.ListTools(context.Background())
	if err != nil || len(listed) != 2 || listed[0].Err == nil || listed[1].Err != nil {
		t.Errorf("ListTools = %+v, %v; want both tools, deep with its error", listed, err)
	}
}

// TestServerErrorTextNeverReachesTheLog: a server's JSON-RPC error message
// may echo the arguments or carry output; the debug log keeps the code.
func TestServerErrorTextNeverReachesTheLog(t *testing.T) {
	const canary = "canary-in-server-error-41d7"
	raw := newRawServer()
	raw.toolsCall = func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"no page for %s"}}`, id, canary)
	}
	ts := startServer(t, raw)
	var logs bytes.Buffer
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
	c.opts.Logger = zerolog.New(&logs).Level(zerolog.DebugLevel)
	s := openSession(t, c, ts, server.NoCredential(), limits.ReviewResponseCap)
	defer s.Close()
	_, err := s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"`+canary+`"}`))
	if !errors.Is(err, ports.ErrProtocol) {
		t.Fatalf("CallTool = %v, want ErrProtocol", err)
	}
	if strings.Contains(logs.String(), canary) || strings.Contains(err.Error(), canary) {
		t.Errorf("the server's error text reached the log or the error:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "JSON-RPC error -32000") {
		t.Errorf("the log lacks the JSON-RPC code:\n%s", logs.String())
	}
}

// TestCloseIsBoundedWhenTheServerHangsOnDelete: a stateful (2025-era)
// session ends with a DELETE; a server that never answers it holds Close
// for one request timeout at most, not the SDK's own 5 s.
func TestCloseIsBoundedWhenTheServerHangsOnDelete(t *testing.T) {
	const timeout = 300 * time.Millisecond
	raw := newRawServer()
	raw.initialize = func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		w.Header().Set("Mcp-Session-Id", "session-1")
		writeJSON(w, id, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`)
	}
	var deletes atomic.Int64
	ts := startServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
			<-r.Context().Done()
			return
		}
		raw.ServeHTTP(w, r)
	}))
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), timeout)
	s := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	took := time.Since(start)
	if deletes.Load() != 1 {
		t.Fatalf("the server saw %d DELETE requests, want 1", deletes.Load())
	}
	if took > timeout+time.Second {
		t.Errorf("Close took %v with a request timeout of %v", took, timeout)
	}
	t.Logf("Close returned after %v", took)
}

// TestFallsBackToInitializeOnlyWhenTheServerSaysSo: the 2025 handshake
// follows server/discover only when the server answered that it does not
// know the method or the version; after a timeout, a dropped connection
// or any other answer exactly one request reached the server, so a slow
// server costs one request timeout, not two.
func TestFallsBackToInitializeOnlyWhenTheServerSaysSo(t *testing.T) {
	const timeout = time.Second // a loaded machine must still finish the TLS handshake
	type handler = func(http.ResponseWriter, *http.Request, json.RawMessage)
	status := func(code int) handler {
		return func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) { w.WriteHeader(code) }
	}
	tests := []struct {
		name     string
		discover handler // the answer to server/discover; nil: the raw server's -32601
		fallback bool
		want     error
	}{
		{"JSON-RPC method not found", nil, true, nil},
		{"JSON-RPC unsupported protocol version", func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"unsupported protocol version"}}`, id)
		}, true, nil},
		{"HTTP 400", status(http.StatusBadRequest), true, nil},
		{"HTTP 404", status(http.StatusNotFound), true, nil},
		{"HTTP 405", status(http.StatusMethodNotAllowed), true, nil},
		{"no answer", func(_ http.ResponseWriter, r *http.Request, _ json.RawMessage) { <-r.Context().Done() }, false, ports.ErrTimeout},
		{"headers, then a stalled body", func(w http.ResponseWriter, r *http.Request, _ json.RawMessage) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, false, ports.ErrTimeout},
		{"dropped connection", func(w http.ResponseWriter, _ *http.Request, _ json.RawMessage) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, false, ports.ErrServerUnreachable},
		{"HTTP 500", status(http.StatusInternalServerError), false, ports.ErrServerUnreachable},
		{"HTTP 415", status(http.StatusUnsupportedMediaType), false, ports.ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startServer(t, onDiscover(newRawServer(), tt.discover))
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), timeout)
			s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t)}, limits.DiscoveryResponseCap)
			if s != nil {
				defer s.Close()
			}
			var methods []string
			for _, r := range ts.requests() {
				var m rpcMessage
				_ = json.Unmarshal(r.Body, &m)
				methods = append(methods, m.Method)
			}
			if n := strings.Count(strings.Join(methods, " "), "server/discover"); n != 1 {
				t.Errorf("server/discover sent %d times, want once", n)
			}
			if tt.fallback {
				if err != nil || !slices.Contains(methods, "initialize") {
					t.Fatalf("OpenSession = %v after %v; want the initialize fallback", err, methods)
				}
				return
			}
			wantCode(t, err, tt.want)
			if len(methods) != 1 {
				t.Errorf("the server received %v, want server/discover alone", methods)
			}
		})
	}
}

// TestWrongCredentialsAreNotProtocolErrors: a 401 or 403, with or without
// a JSON-RPC error in the body, is ErrServerUnauthorized wherever it comes:
// on server/discover (and then no initialize follows), on tools/list, on
// tools/call.
func TestWrongCredentialsAreNotProtocolErrors(t *testing.T) {
	refuse := func(status int, rpcBody bool) func(http.ResponseWriter, *http.Request, json.RawMessage) {
		return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			if !rpcBody {
				w.WriteHeader(status)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32001,"message":"invalid token"}}`, id)
		}
	}
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		for _, rpcBody := range []bool{false, true} {
			for _, during := range []string{"server/discover", "tools/list", "tools/call"} {
				t.Run(fmt.Sprintf("%d/rpc body %v/%s", status, rpcBody, during), func(t *testing.T) {
					raw := newRawServer()
					h := refuse(status, rpcBody)
					var discover func(http.ResponseWriter, *http.Request, json.RawMessage)
					switch during {
					case "server/discover":
						discover = h
					case "tools/list":
						raw.toolsList = h
					case "tools/call":
						raw.toolsCall = h
					}
					ts := startServer(t, onDiscover(raw, discover))
					c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
					cred, _ := server.NewBearer("expired-token-1234")
					s, err := c.OpenSession(context.Background(), ports.MCPTarget{URL: ts.url(t), Credential: cred}, limits.ReviewResponseCap)
					if during == "server/discover" {
						wantCode(t, err, ports.ErrServerUnauthorized)
						if n := len(ts.requests()); n != 1 {
							t.Errorf("the server received %d requests, want server/discover alone", n)
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					defer s.Close()
					if during == "tools/list" {
						_, err = s.ListTools(context.Background())
					} else {
						_, err = s.CallTool(context.Background(), "search", tooltest.Args(`{"query":"x"}`))
					}
					wantCode(t, err, ports.ErrServerUnauthorized)
				})
			}
		}
	}
}
