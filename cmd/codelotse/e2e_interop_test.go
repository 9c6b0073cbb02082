//go:build signedoff

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/codelotse/codelotse/internal/npmtest"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codelotse/codelotse/domain/tool"
)

// The interop matrix (docs/interop.md): real MCP servers written with the
// official SDKs, each over TLS on loopback, each registered, discovered,
// allowlisted and called in a review through the real binary and its
// connector. Every cell is one tenant with one server named "interop" and
// one review whose scripted finder makes the same calls: the valid ones
// must reach the server and come back ok, every call that violates one
// constraint of the tool's schema must be invalid_arguments, and an
// e-mail address is blocked; the server's own record of the requests it
// received must hold exactly the valid calls. docs/interop.md describes
// the matrix and the pinned versions.

// interopCall is one call of a cell's review: the tool, the arguments the
// model sends, the call record's status it must end in, and what it
// proves.
type interopCall struct {
	tool   string
	args   map[string]any
	status string
	what   string
}

// withArgs returns base with the keys of extra set (nil values included).
func withArgs(base map[string]any, extra map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(extra))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// tsSearchBase is the least valid argument set of the TypeScript search tool.
var tsSearchBase = map[string]any{"query": "cache", "mode": "fast", "note": nil}

// tsCalls are the calls of every TypeScript cell (testdata/interop/harness.mjs).
var tsCalls = []interopCall{
	{"echo", map[string]any{"text": "hello interop"}, "ok", "plain string"},
	{"search", map[string]any{"query": "cache eviction", "limit": 10, "offset": 0, "score": 0.5, "step": 10, "page": nil,
		"kind": "ticket", "ticket": "CL-42", "mode": "fast", "level": 2, "exact": true, "note": nil}, "ok", "every idiom within its constraint"},
	{"lookup", map[string]any{"topic": "cache", "since": "2026-01-02T03:04:05Z", "day": "2026-01-02",
		"id": "0b4f9b36-5c1e-4c8e-9a47-2d3c1f6e8a10", "link": "https://wiki.example.com/cache"}, "ok", "every format"},
	{"notify", map[string]any{"to": "dev@example.com"}, "blocked", "an e-mail address is never sent"},

	{"search", withArgs(tsSearchBase, map[string]any{"query": strings.Repeat("q", 41)}), "invalid_arguments", "maxLength"},
	{"search", withArgs(tsSearchBase, map[string]any{"limit": 0}), "invalid_arguments", "minimum"},
	{"search", withArgs(tsSearchBase, map[string]any{"limit": 2.5}), "invalid_arguments", "integer"},
	{"search", withArgs(tsSearchBase, map[string]any{"score": 1}), "invalid_arguments", "exclusiveMaximum"},
	{"search", withArgs(tsSearchBase, map[string]any{"step": 7}), "invalid_arguments", "multipleOf"},
	{"search", withArgs(tsSearchBase, map[string]any{"kind": "wiki"}), "invalid_arguments", "enum"},
	{"search", withArgs(tsSearchBase, map[string]any{"ticket": "cl-42"}), "invalid_arguments", "pattern"},
	{"search", withArgs(tsSearchBase, map[string]any{"mode": "slow"}), "invalid_arguments", "string const"},
	{"search", withArgs(tsSearchBase, map[string]any{"level": 3}), "invalid_arguments", "number const"},
	{"search", withArgs(tsSearchBase, map[string]any{"page": "x"}), "invalid_arguments", "nullable integer"},
	{"lookup", map[string]any{"topic": "cache", "since": "2026-01-02 03:04"}, "invalid_arguments", "format date-time"},
	{"lookup", map[string]any{"topic": "cache", "day": "2026-02-30"}, "invalid_arguments", "format date"},
	{"lookup", map[string]any{"topic": "cache", "id": "not-a-uuid"}, "invalid_arguments", "format uuid"},
	{"lookup", map[string]any{"topic": "cache", "link": "not a url"}, "invalid_arguments", "format uri"},
	{"notify", map[string]any{"to": "nobody"}, "invalid_arguments", "format email"},
}

// goCalls are the calls of every go-sdk cell (goInteropArgs).
var goCalls = []interopCall{
	{"echo", map[string]any{"text": "hello interop"}, "ok", "plain string"},
	{"find", map[string]any{"query": "cache", "limit": nil, "page": 3, "level": -5, "small": 200, "exact": true}, "ok", "null pointer, unsigned and small integers"},
	{"find", map[string]any{"query": "cache", "limit": 10, "level": 127, "small": 0}, "ok", "pointer set, bounds reached"},

	{"find", map[string]any{"query": "cache", "page": -1}, "invalid_arguments", "uint minimum"},
	{"find", map[string]any{"query": "cache", "level": 128}, "invalid_arguments", "int8 maximum"},
	{"find", map[string]any{"query": "cache", "level": -129}, "invalid_arguments", "int8 minimum"},
	{"find", map[string]any{"query": "cache", "small": 256}, "invalid_arguments", "uint8 maximum"},
	{"find", map[string]any{"query": "cache", "limit": 2.5}, "invalid_arguments", "*int integer"},
	{"find", map[string]any{"query": "cache", "limit": "ten"}, "invalid_arguments", "*int type"},
	{"find", map[string]any{"limit": 1}, "invalid_arguments", "required"},
	{"find", map[string]any{"query": "cache", "extra": 1}, "invalid_arguments", "additionalProperties"},
}

// interopScript is the scripted model of a matrix: every review gets the
// same turns. The first turn makes up to four calls (the run's byte
// budget holds four reservations); later turns make three, so that the
// budget is never the reason a call is refused while earlier results are
// kept. Then the finder reports nothing.
func interopScript(calls []interopCall) map[string]any {
	var finder []any
	for i := 0; i < len(calls); {
		n := 3
		if i == 0 {
			n = 4
		}
		var turn []map[string]any
		for _, c := range calls[i:min(i+n, len(calls))] {
			turn = append(turn, call("mcp_interop_"+c.tool, c.args))
		}
		finder = append(finder, toolTurn(turn...))
		i += n
	}
	finder = append(finder, contentTurn(map[string]any{"findings": []any{}}))
	return map[string]any{
		"perReview": true,
		"finder":    finder,
		"summary":   []any{contentTurn("Nothing to report.")},
	}
}

// okCalls counts the calls that must reach the server.
func okCalls(calls []interopCall) int {
	n := 0
	for _, c := range calls {
		if c.status == "ok" {
			n++
		}
	}
	return n
}

// checkEchoReachedModel fails t unless, in each of the cells' reviews,
// the finder got the echo tool's result back as untrusted text: the
// finder's request after the first turn carries one tool message per call
// of that turn, the first the echo's result (the model's request log
// holds every review of the instance).
func checkEchoReachedModel(t *testing.T, logPath string, cells int, calls []interopCall) {
	t.Helper()
	firstTurn := min(4, len(calls))
	n := 0
	for _, q := range byStep(readModelLog(t, logPath), "finder") {
		tm := q.toolMessages()
		if len(tm) != firstTurn {
			continue
		}
		n++
		if !strings.Contains(tm[0], `<untrusted source="mcp:interop/echo"`) || !strings.Contains(tm[0], "Echo: hello interop") {
			t.Errorf("the echo's tool message = %.300q, want its result wrapped as untrusted", tm[0])
		}
	}
	if n != cells {
		t.Errorf("%d finder requests carry the first turn's results, want one per cell (%d)", n, cells)
	}
}

// serverRequest is one HTTP request an interop server received, as it
// recorded it before its SDK saw the request.
type serverRequest struct {
	HTTP      string          `json:"http"`
	RPC       string          `json:"rpc"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// interopCell is one server of the matrix.
type interopCell struct {
	name string
	url  string
	// era is the protocol era the connector must negotiate.
	era string
	// tools are the tools the server lists.
	tools []string
	// keywords are schema keywords the listed tools must use: the idioms
	// the cell exercises.
	keywords []string
	// warned are the tools whose discovery must carry a warning (every
	// call would be blocked).
	warned []string
	// refused are the tools discovery must refuse, with a word of the
	// reason; they are not allowlisted, and the model's calls of them are
	// answered "unknown tool" without a call record.
	refused map[string]string
	calls   []interopCall
	// requests is the server's record of the requests it received.
	requests func(t *testing.T) []serverRequest
}

// runInteropCell registers the cell's server in a tenant of its own,
// discovers and allowlists every supported tool, runs a review and checks the call
// records, the review's stats and what the server received.
func runInteropCell(t *testing.T, in *instance, cell interopCell, bearer string) {
	_, c := in.tenant("interop-"+strings.ReplaceAll(cell.name, "/", "-"), "tenant:manage,repo:manage")
	serverID := registerServer(t, c, "interop", cell.url, bearer)

	// Discovery lists every tool; each is supported and read-only, but
	// the ones the cell expects refused.
	found := discover(t, c, serverID)
	var names []string
	used := map[string]bool{}
	for name, d := range found {
		names = append(names, name)
		schema, _ := json.Marshal(d["inputSchema"])
		t.Logf("discovered %-6s supported=%v reason=%q warning=%q schema %s", name, d["supported"], d["reason"], d["warning"], schema)
		schemaKeywords(d["inputSchema"], used)
	}
	sort.Strings(names)
	if !slices.Equal(names, cell.tools) {
		t.Fatalf("discovery lists %v, want %v", names, cell.tools)
	}
	for _, kw := range cell.keywords {
		if !used[kw] {
			t.Errorf("no listed schema uses %q: the cell does not exercise that idiom", kw)
		}
	}
	var allow []any
	for _, name := range cell.tools {
		d := found[name]
		if word, ok := cell.refused[name]; ok {
			if reason, _ := d["reason"].(string); d["supported"] != false || !strings.Contains(reason, word) {
				t.Errorf("%s: supported=%v (reason %q), want refused for %s", name, d["supported"], d["reason"], word)
			}
			continue
		}
		if d["supported"] != true || d["writeCapable"] != false {
			t.Errorf("%s: supported=%v (reason %q) writeCapable=%v, want a supported read-only tool", name, d["supported"], d["reason"], d["writeCapable"])
		}
		if w, _ := d["warning"].(string); (w != "") != slices.Contains(cell.warned, name) {
			t.Errorf("%s: warning %q, want one only for %v", name, w, cell.warned)
		}
		allow = append(allow, map[string]any{"name": name, "description": "Interop tool " + name + "."})
	}
	s := c.do("PUT", "/v1/mcp/servers/"+serverID+"/tools", map[string]any{"tools": allow})
	if s.Status != http.StatusOK {
		t.Fatalf("save the allowlist %v: %d %s", allow, s.Status, s.Raw)
	}
	if got := snapshots(t, s); len(got) != len(allow) {
		t.Fatalf("the allowlist holds %d tools, want %d: %s", len(got), len(allow), s.Raw)
	}
	var expected []interopCall
	for _, cl := range cell.calls {
		if _, ok := cell.refused[cl.tool]; !ok {
			expected = append(expected, cl)
		}
	}

	repoID := privateRepoWithCalls(t, c, 20, serverID)
	reviewID, r := runReview(t, c, repoID)
	expectDone(t, r)

	// One call record per call, each with the status its arguments earn;
	// records are matched to calls by the hash of the canonical arguments.
	type want struct{ status, what, canonical string }
	byHash := map[string]want{}
	sentCount, blocked := 0, 0
	var sent []string // tool + canonical arguments of every call that must reach the server
	for _, cl := range expected {
		raw, err := json.Marshal(cl.args)
		if err != nil {
			t.Fatal(err)
		}
		canon, err := tool.Canonicalize(raw)
		if err != nil {
			t.Fatalf("canonical form of %s: %v", raw, err)
		}
		byHash[cl.tool+" "+sha256Hex(string(canon))] = want{cl.status, cl.what, string(canon)}
		switch cl.status {
		case "ok":
			sentCount++
			sent = append(sent, cl.tool+" "+string(canon))
		case "blocked":
			blocked++
		}
	}
	recs := calls(t, c, serverID)
	if len(recs) != len(expected) {
		t.Errorf("%d call records, want %d", len(recs), len(expected))
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		key := str(rec, "tool") + " " + str(rec, "argumentsHash")
		w, ok := byHash[key]
		if !ok || seen[key] {
			t.Errorf("call record %v matches no call of the script (or a call twice)", rec)
			continue
		}
		seen[key] = true
		if rec["reviewId"] != reviewID || str(rec, "status") != w.status {
			t.Errorf("%s %s (%s): status %q, want %q", str(rec, "tool"), w.canonical, w.what, str(rec, "status"), w.status)
		}
		if rb, _ := rec["responseBytes"].(float64); (rb > 0) != (w.status == "ok") {
			t.Errorf("%s %s (%s): responseBytes %v", str(rec, "tool"), w.canonical, w.what, rec["responseBytes"])
		}
	}
	if st := mcpStats(t, r); st["calls"] != float64(sentCount) || st["blocked"] != float64(blocked) {
		t.Errorf("stats.mcp = %v, want %d calls and %d blocked", st, sentCount, blocked)
	}

	// What reached the server: the valid calls, each once with the
	// canonical arguments, and nothing of the refused ones.
	var got []string
	var methods []string
	for _, q := range cell.requests(t) {
		methods = append(methods, strings.TrimSpace(q.HTTP+" "+q.RPC))
		if q.RPC != "tools/call" {
			continue
		}
		canon, err := tool.Canonicalize(q.Arguments)
		if err != nil {
			t.Errorf("the server received tools/call %s with arguments %s: %v", q.Tool, q.Arguments, err)
		}
		got = append(got, q.Tool+" "+string(canon))
	}
	t.Logf("the server received: %s", strings.Join(methods, ", "))
	sort.Strings(got)
	sort.Strings(sent)
	if !slices.Equal(got, sent) {
		t.Errorf("the server received tools/call\n  %s\nwant exactly\n  %s", strings.Join(got, "\n  "), strings.Join(sent, "\n  "))
	}
	if era := negotiatedEra(methods); era != cell.era {
		t.Errorf("negotiated era %q, want %q (requests %v)", era, cell.era, methods)
	}
}

// negotiatedEra is 2025-11-25 when the client initialized a session,
// 2026-07-28 when it used server/discover alone.
func negotiatedEra(methods []string) string {
	switch {
	case slices.Contains(methods, "POST initialize"):
		return era2025
	case slices.Contains(methods, "POST server/discover"):
		return era2026
	}
	return ""
}

// schemaKeywords adds to used the keywords of every property schema of an
// input schema, and "null" for a nullable property (type list or a
// {type: null} branch of anyOf/oneOf).
func schemaKeywords(schema any, used map[string]bool) {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	var walk func(p map[string]any)
	walk = func(p map[string]any) {
		for k, v := range p {
			used[k] = true
			switch k {
			case "type":
				if list, ok := v.([]any); ok && slices.Contains(list, any("null")) {
					used["null"] = true
				}
				if v == "null" {
					used["null"] = true
				}
			case "anyOf", "oneOf":
				list, _ := v.([]any)
				for _, b := range list {
					if m, ok := b.(map[string]any); ok {
						walk(m)
					}
				}
			}
		}
	}
	for _, p := range props {
		if m, ok := p.(map[string]any); ok {
			walk(m)
		}
	}
	if ap, ok := s["additionalProperties"]; ok && ap == false {
		used["additionalProperties"] = true
	}
}

// tsKeywords are the idioms every TypeScript cell's schemas must show.
var tsKeywords = []string{"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"multipleOf", "pattern", "format", "enum", "const", "default", "null", "anyOf"}

// TestInteropTypeScript runs the matrix of the TypeScript SDKs: SDK 1.x
// with zod 3 and with zod/v4 schemas, SDK 2.x with zod 4; sessionful and
// stateless, SSE and JSON responses; and SDK 2.x's createMcpHandler, which
// serves protocol 2026-07-28.
func TestInteropTypeScript(t *testing.T) {
	t.Parallel()
	node := npmtest.RequireNode(t, interopMinNode, "the interop matrix (the TypeScript MCP SDKs pinned in "+interopRepoDir+")")
	const bearer = "interop-ts-bearer-Zq81"
	certFile, keyFile := writeLeafPEM(t)
	sdk1 := startNodeInterop(t, node, "sdk1", certFile, keyFile, bearer)
	sdk2 := startNodeInterop(t, node, "sdk2", certFile, keyFile, bearer)

	in, logPath := scriptedInstance(t, interopScript(tsCalls))
	tools := []string{"echo", "filter", "lookup", "notify", "search"}
	var cells []interopCell
	add := func(srv *nodeInterop, path, era string) {
		cell := interopCell{
			name: strings.TrimPrefix(path, "/"), url: srv.url(path), era: era,
			tools: tools, keywords: tsKeywords, warned: []string{"notify"}, calls: tsCalls,
			refused:  map[string]string{"filter": "unsupported schema: array in property tags"},
			requests: func(t *testing.T) []serverRequest { return srv.requests(t, path) },
		}
		cells = append(cells, cell)
	}
	for _, flavor := range []string{"zod3", "zod4"} {
		for _, mode := range []string{"sessionful-sse", "sessionful-json", "stateless-sse", "stateless-json"} {
			add(sdk1, "/"+flavor+"/"+mode, era2025)
		}
	}
	for _, mode := range []string{"sessionful-sse", "sessionful-json", "stateless-sse", "stateless-json"} {
		add(sdk2, "/v2/"+mode, era2025)
	}
	for _, mode := range []string{"handler-sse", "handler-json"} {
		add(sdk2, "/v2/"+mode, era2026)
	}
	var reviews atomic.Int64 // cells run (-run may pick some)
	t.Cleanup(func() {
		if !t.Failed() {
			checkEchoReachedModel(t, logPath, int(reviews.Load()), tsCalls)
		}
	})
	for _, cell := range cells {
		t.Run(cell.name, func(t *testing.T) {
			t.Parallel()
			reviews.Add(1)
			runInteropCell(t, in.on(t), cell, bearer)
		})
	}
}

// goInteropArgs is the input of the go-sdk find tool; mcp.AddTool infers
// its schema with jsonschema-go: a nullable integer for the pointer,
// minimum 0 for uint, the bounds of int8 and uint8.
type goInteropArgs struct {
	Query string `json:"query" jsonschema:"what to look for"`
	Limit *int   `json:"limit,omitempty"`
	Page  uint   `json:"page,omitempty"`
	Level int8   `json:"level,omitempty"`
	Small uint8  `json:"small,omitempty"`
	Exact bool   `json:"exact,omitempty"`
}

type goEchoArgs struct {
	Text string `json:"text"`
}

// goInterop is a go-sdk server of the matrix with the handlers' record.
type goInterop struct {
	*peer
	mu    sync.Mutex
	calls []string // tool and arguments of every handler run
}

// startGoInterop serves a go-sdk server with typed tools over TLS on
// loopback, stateful or stateless, with SSE or JSON responses, and with
// the SDK's defaults otherwise (every protocol version it knows, its
// localhost protection on).
func startGoInterop(t *testing.T, stateless, jsonResponse bool) *goInterop {
	t.Helper()
	g := &goInterop{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "interop-go", Version: "1"}, nil)
	ran := func(tool string, args any) {
		b, _ := json.Marshal(args)
		g.mu.Lock()
		g.calls = append(g.calls, tool+" "+string(b))
		g.mu.Unlock()
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes a text.", Annotations: readOnly()},
		func(_ context.Context, _ *mcp.CallToolRequest, in goEchoArgs) (*mcp.CallToolResult, any, error) {
			ran("echo", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Text}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "find", Description: "Finds pages.", Annotations: readOnly()},
		func(_ context.Context, _ *mcp.CallToolRequest, in goInteropArgs) (*mcp.CallToolResult, any, error) {
			ran("find", in)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Found 1 page for %s.", in.Query)}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: jsonResponse})
	g.peer = startTLS(t, h)
	return g
}

func (g *goInterop) handled() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

// TestInteropGo runs the go-sdk's cells: stateful and stateless, SSE and
// JSON responses, the input schemas inferred by mcp.AddTool.
func TestInteropGo(t *testing.T) {
	t.Parallel()
	const bearer = "interop-go-bearer-Hk36"
	in, logPath := scriptedInstance(t, interopScript(goCalls))
	var reviews atomic.Int64 // cells run (-run may pick some)
	t.Cleanup(func() {
		if !t.Failed() {
			checkEchoReachedModel(t, logPath, int(reviews.Load()), goCalls)
		}
	})
	for _, stateless := range []bool{false, true} {
		for _, jsonResponse := range []bool{false, true} {
			name := map[bool]string{false: "stateful", true: "stateless"}[stateless] + "-" + map[bool]string{false: "sse", true: "json"}[jsonResponse]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				reviews.Add(1)
				g := startGoInterop(t, stateless, jsonResponse)
				cell := interopCell{
					name: "go/" + name, url: g.url(), era: map[bool]string{false: era2025, true: era2026}[stateless],
					tools:    []string{"echo", "find"},
					keywords: []string{"minimum", "maximum", "null", "additionalProperties"},
					calls:    goCalls,
					requests: func(t *testing.T) []serverRequest { return wireServerRequests(t, g.requests()) },
				}
				runInteropCell(t, in.on(t), cell, bearer)
				// The handlers ran exactly for the valid calls.
				if got, want := len(g.handled()), okCalls(goCalls); got != want {
					t.Errorf("the go-sdk handlers ran %d times (%v), want %d", got, g.handled(), want)
				}
			})
		}
	}
}

// wireServerRequests turns the requests a go-sdk peer recorded into the
// matrix's record.
func wireServerRequests(t *testing.T, reqs []wireRequest) []serverRequest {
	t.Helper()
	var out []serverRequest
	for _, r := range reqs {
		q := serverRequest{HTTP: r.HTTPMethod, RPC: r.RPCMethod}
		if r.RPCMethod == "tools/call" {
			var m struct {
				Params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"params"`
			}
			if err := json.Unmarshal(r.Body, &m); err != nil {
				t.Errorf("tools/call body %q: %v", r.Body, err)
			}
			q.Tool, q.Arguments = m.Params.Name, m.Params.Arguments
		}
		out = append(out, q)
	}
	return out
}
