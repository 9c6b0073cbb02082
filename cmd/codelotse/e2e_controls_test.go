//go:build signedoff

package main

import (
	"regexp"
	"strings"
	"testing"
)

// End-to-end proofs of single controls through the production wiring: the
// real secret scanner, the untrusted wrapper on crypto/rand, the worker's
// call pipeline and a go-sdk server that counts what reaches it (issue 8,
// section 1).

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
