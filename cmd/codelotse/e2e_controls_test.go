//go:build signedoff

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end proofs of single controls through the production wiring: the
// real secret scanner, the untrusted wrapper on crypto/rand, the worker's
// call pipeline and a go-sdk server that counts what reaches it.

// TestE2EArgumentsThatMustNotLeave: the finder calls the tool with a
// secret that appears only once the JSON string is decoded ("note\nAKIA…":
// in the JSON text a letter precedes the key id), with an extra property
// and with a 501-character string. The two secrets are blocked, the other
// two are invalid_arguments, and the MCP server receives no tools/call.
func TestE2EArgumentsThatMustNotLeave(t *testing.T) {
	t.Parallel()
	const awsKey = "AKIAQYLPMN5HHHFPZAM2"
	long := strings.Repeat("é", 501)
	in, _ := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(
				call("mcp_wiki_search", map[string]any{"query": "note\n" + awsKey}),
				call("mcp_wiki_search", map[string]any{"query": "see\t" + awsKey}),
				call("mcp_wiki_search", map[string]any{"query": "cache", "extra": "x"}),
				call("mcp_wiki_search", map[string]any{"query": long}),
			),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	in.secret(awsKey)
	_, c := in.tenant("leave", "tenant:manage,repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "nothing found")
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-leave-bearer-Kk42")
	repoID := privateRepoWithMCP(t, c, serverID)

	_, r := runReview(t, c, repoID)
	expectDone(t, r)
	if tc := toolCalls(p.requests()); len(tc) != 0 {
		t.Errorf("the MCP server received %d tools/call requests, want none", len(tc))
	}
	if got := p.calledWith(); len(got) != 0 {
		t.Errorf("the server's search ran with %s", got)
	}
	for _, req := range p.requests() {
		if b := string(req.Body); strings.Contains(b, awsKey) || strings.Contains(b, "extra") || strings.Contains(b, "éééé") {
			t.Errorf("a %s request carried a refused argument: %.200s", req.RPCMethod, b)
		}
	}
	statuses := map[string]int{}
	for _, rec := range calls(t, c, serverID) {
		statuses[str(rec, "status")]++
	}
	if statuses["blocked"] != 2 || statuses["invalid_arguments"] != 2 || len(statuses) != 2 {
		t.Errorf("call statuses = %v, want exactly 2 blocked and 2 invalid_arguments", statuses)
	}
	if st := mcpStats(t, r); st["calls"] != float64(0) || st["blocked"] != float64(2) || st["bytes"] != float64(0) {
		t.Errorf("stats.mcp = %v, want 0 calls, 2 blocked, 0 bytes", st)
	}
}

// TestE2EWrappedResultsOfOneRun: two results of one run reach the model
// each in its own untrusted block, with different 128-bit boundaries drawn
// by the production wiring, and each cut to exactly 8,000 characters (the
// server answers 9,000).
func TestE2EWrappedResultsOfOneRun(t *testing.T) {
	t.Parallel()
	in, logPath := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(
				call("mcp_wiki_search", map[string]any{"query": "cache"}),
				call("mcp_wiki_search", map[string]any{"query": "eviction"}),
			),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	_, c := in.tenant("boundaries", "tenant:manage,repo:manage")
	p := startMCP(t, era2025, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), strings.Repeat("é", 9000))
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-boundary-bearer-Pp07")
	repoID := privateRepoWithMCP(t, c, serverID)

	_, r := runReview(t, c, repoID)
	expectDone(t, r)
	if st := mcpStats(t, r); st["calls"] != float64(2) {
		t.Fatalf("stats.mcp = %v, want 2 calls", st)
	}
	finder := byStep(readModelLog(t, logPath), "finder")
	if len(finder) != 2 {
		t.Fatalf("%d finder requests, want 2", len(finder))
	}
	open := regexp.MustCompile(`<untrusted source="mcp:wiki/search" boundary="([0-9a-f]{32})">`)
	seen := map[string]bool{}
	for i, m := range finder[1].toolMessages() {
		o := open.FindAllStringSubmatch(m, -1)
		if len(o) != 1 {
			t.Fatalf("tool message %d has %d opening tags, want one: %.200q", i, len(o), m)
		}
		bnd := o[0][1]
		if !strings.HasSuffix(m, `</untrusted boundary="`+bnd+`">`) {
			t.Errorf("tool message %d does not close with its own boundary", i)
		}
		if seen[bnd] {
			t.Errorf("tool message %d reuses boundary %s", i, bnd)
		}
		seen[bnd] = true
		if n := strings.Count(m, "é"); n != 8000 {
			t.Errorf("tool message %d carries %d characters of the result, want exactly 8000", i, n)
		}
	}
	if len(seen) != 2 {
		t.Errorf("%d distinct boundaries in the finder's tool messages, want 2", len(seen))
	}
}

// TestE2ESaveRacedByAURLChange: while the save's live discovery waits for
// tools/list, a PATCH moves the server to another URL. The save answers
// 422 unknown_tool (the contract has no conflict code) and stores nothing:
// the allowlist stays empty as the URL change left it, and the audit log
// has no allowlist event for it.
func TestE2ESaveRacedByAURLChange(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t)
	in := startInstance(t, env...)
	in.secret(key)
	_, c := in.tenant("race", "tenant:manage,repo:manage")

	p := &mcpPeer{era: era2026}
	p.srv = mcp.NewServer(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{era2026}})
	p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "hit")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return p.srv }, &mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true})
	var (
		armed    atomic.Bool
		serverID string
		patched  = make(chan int, 1)
	)
	p.peer = startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/list"`)) && armed.CompareAndSwap(true, false) {
			patched <- patchURL(in, c.token, serverID, strings.TrimSuffix(p.url(), "/mcp")+"/moved")
		}
		h.ServeHTTP(w, r)
	}))
	serverID = registerServer(t, c, "wiki", p.url(), "e2e-race-bearer-Rr31")
	if d := discover(t, c, serverID)["search"]; d["supported"] != true {
		t.Fatalf("search is not supported: %v", d)
	}

	armed.Store(true)
	s := c.do("PUT", "/v1/mcp/servers/"+serverID+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search the team wiki."}}})
	select {
	case status := <-patched:
		if status != http.StatusOK {
			t.Fatalf("the PATCH during the save answered %d", status)
		}
	default:
		t.Fatal("the save's discovery never listed the tools")
	}
	expect(t, "PUT …/tools raced by a URL change", s, 422, "unknown_tool")
	if bytes.Contains(s.Raw, []byte("localhost")) {
		t.Errorf("the error names the URL: %s", s.Raw)
	}
	g := c.do("GET", "/v1/mcp/servers/"+serverID, nil)
	if !strings.HasSuffix(str(g.Body, "url"), "/moved") || len(snapshots(t, g)) != 0 {
		t.Errorf("after the raced save the server is %s, want the moved URL and no tool", g.Raw)
	}
	for _, ev := range auditEvents(t, c, 20) {
		if ev["action"] == "server.tools" {
			t.Errorf("the refused save was audited: %v", ev)
		}
	}
	if strings.Contains(dumpDatabase(t, in), "Search the team wiki.") {
		t.Errorf("the database holds the refused allowlist's description")
	}
}

// patchURL moves a server to url (acknowledged) through the API, outside
// the test's goroutine, and returns the status.
func patchURL(in *instance, token, id, url string) int {
	raw, _ := json.Marshal(map[string]any{"url": url, "acknowledged": true})
	req, err := http.NewRequest("PATCH", in.base+"/v1/mcp/servers/"+id, bytes.NewReader(raw))
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
