//go:build signedoff

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests through the real binary, the
// real connector and a go-sdk server: parallel calls of one finder turn
// wait for the run's byte budget instead of failing, and a result whose
// structuredContent repeats its text reaches the model once.

// TestE2EParallelCallsWaitForTheBudget: the finder asks for six calls in
// one turn; the server holds every call until four are at it together,
// so the budget (four 64 KiB reservations of 256 KiB) is full while the
// other two ask for it. They wait, and all six are made.
func TestE2EParallelCallsWaitForTheBudget(t *testing.T) {
	t.Parallel()
	const n = 6
	var turn []map[string]any
	for i := range n {
		turn = append(turn, call("mcp_wiki_search", map[string]any{"query": fmt.Sprint("cache ", i)}))
	}
	in, logPath := scriptedInstance(t, map[string]any{
		"finder":  []any{toolTurn(turn...), contentTurn(map[string]any{"findings": []any{}})},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	_, c := in.tenant("budgetwait", "tenant:manage,repo:manage")
	var inFlight, peak atomic.Int32
	full := make(chan struct{})
	var once sync.Once
	p := startMCP(t, era2025, func(p *mcpPeer) {
		p.srv.AddTool(&mcp.Tool{Name: "search", Description: "Searches the wiki.", InputSchema: searchSchema(), Annotations: readOnly()},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				m := inFlight.Add(1)
				defer inFlight.Add(-1)
				for q := peak.Load(); m > q && !peak.CompareAndSwap(q, m); q = peak.Load() {
				}
				if m == 4 {
					// The other calls of the turn started with these four;
					// give them a moment to find the budget full.
					once.Do(func() { time.AfterFunc(300*time.Millisecond, func() { close(full) }) })
				}
				select {
				case <-full:
				case <-time.After(5 * time.Second):
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "The cache was added in ADR-7."}}}, nil
			})
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-budgetwait-bearer-Qw81")
	repoID := privateRepoWithCalls(t, c, 10, serverID)

	_, r := runReview(t, c, repoID)
	expectDone(t, r)
	if st := mcpStats(t, r); st["calls"] != float64(n) {
		t.Errorf("stats.mcp = %v, want %d calls", st, n)
	}
	if peak.Load() != 4 {
		t.Errorf("%d calls at the server at once, want 4 (the budget full)", peak.Load())
	}
	statuses := map[string]int{}
	for _, rec := range calls(t, c, serverID) {
		statuses[str(rec, "status")]++
	}
	if statuses["ok"] != n || len(statuses) != 1 {
		t.Errorf("call statuses = %v, want %d ok", statuses, n)
	}
	finder := byStep(readModelLog(t, logPath), "finder")
	if len(finder) != 2 {
		t.Fatalf("%d finder requests, want 2", len(finder))
	}
	for i, m := range finder[1].toolMessages() {
		if !strings.Contains(m, "The cache was added in ADR-7.") {
			t.Errorf("tool message %d = %.200q, want the result", i, m)
		}
	}
}

// TestE2EResultsReachTheModelOnce: a go-sdk server answers as the SDKs
// do: FastMCP's str result (the text and {"result": text}), a typed
// result (its JSON as text, the same object as structuredContent, which
// the connector reads back with its members sorted), and a result whose
// structuredContent is its own. The first two reach the model, and the
// byte count, once; the third with both parts.
func TestE2EResultsReachTheModelOnce(t *testing.T) {
	t.Parallel()
	const (
		fastmcp = "The cache was added in ADR-7; see the eviction notes."
		typed   = `{"title":"ADR-7 cache","hits":3,"tags":["cache","eviction"]}`
		own     = "Three pages mention ADR-7."
	)
	results := map[string]*mcp.CallToolResult{
		"fastmcp": {Content: []mcp.Content{&mcp.TextContent{Text: fastmcp}}, StructuredContent: map[string]any{"result": fastmcp}},
		"typed":   {Content: []mcp.Content{&mcp.TextContent{Text: typed}}, StructuredContent: json.RawMessage(typed)},
		"own":     {Content: []mcp.Content{&mcp.TextContent{Text: own}}, StructuredContent: map[string]any{"pages": []any{"ADR-7", "Caching"}}},
	}
	in, logPath := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "fastmcp"})),
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "typed"})),
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "own"})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	_, c := in.tenant("once", "tenant:manage,repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.srv.AddTool(&mcp.Tool{Name: "search", Description: "Searches the wiki.", InputSchema: searchSchema(), Annotations: readOnly()},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args struct {
					Query string `json:"query"`
				}
				_ = json.Unmarshal(req.Params.Arguments, &args)
				return results[args.Query], nil
			})
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-once-bearer-Zt42")
	repoID := privateRepoWithMCP(t, c, serverID)

	_, r := runReview(t, c, repoID)
	expectDone(t, r)
	ownStructured := `{"pages":["ADR-7","Caching"]}`
	wantBytes := len(fastmcp) + len(typed) + len(own) + 2 + len(ownStructured)
	if st := mcpStats(t, r); st["calls"] != float64(3) || st["bytes"] != float64(wantBytes) {
		t.Errorf("stats.mcp = %v, want 3 calls and %d bytes", st, wantBytes)
	}
	finder := byStep(readModelLog(t, logPath), "finder")
	if len(finder) != 4 {
		t.Fatalf("%d finder requests, want 4", len(finder))
	}
	msgs := finder[3].toolMessages()
	if len(msgs) != 3 {
		t.Fatalf("%d tool messages, want 3", len(msgs))
	}
	for i, want := range []struct {
		marker string
		count  int
	}{{"see the eviction notes", 1}, {`"eviction"`, 1}, {"ADR-7", 2}} {
		if got := strings.Count(msgs[i], want.marker); got != want.count {
			t.Errorf("tool message %d shows %q %d times, want %d:\n%s", i, want.marker, got, want.count, msgs[i])
		}
	}
	if !strings.Contains(msgs[2], ownStructured) {
		t.Errorf("the structured content of its own is missing:\n%s", msgs[2])
	}
}
