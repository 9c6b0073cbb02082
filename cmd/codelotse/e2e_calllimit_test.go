//go:build signedoff

package main

import (
	"net/http"
	"testing"
	"time"
)

// TestE2EServerCallLimitAcrossReviews: a server's maxCallsPerMinute
// through the binary, on PostgreSQL: an admin sets 3 (the instance caps
// it at 5, so 6 is refused on maxCallsPerMinute); two reviews of two
// calls each share the minute's count, so the fourth call is
// rate_limited and the server receives three. null removes the limit.
func TestE2EServerCallLimitAcrossReviews(t *testing.T) {
	t.Parallel()
	in, _ := scriptedInstance(t, map[string]any{"perReview": true,
		"finder": []any{
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache"})),
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "eviction"})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	}, "QUAVON_MCP_MAX_CALLS_PER_MINUTE=5")
	_, c := in.tenant("calllimit", "tenant:manage,repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "Wiki page about caches.")
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-calllimit-bearer-Hq72")
	repoID := privateRepoWithCalls(t, c, 10, serverID)

	over := c.do("PATCH", "/v1/mcp/servers/"+serverID, map[string]any{"maxCallsPerMinute": 6})
	expect(t, "PATCH above the instance's cap", over, http.StatusUnprocessableEntity, "validation_failed")
	if f := fields(over); len(f) != 1 || f["maxCallsPerMinute"] == nil {
		t.Errorf("fields %v, want maxCallsPerMinute only", f)
	}
	set := c.do("PATCH", "/v1/mcp/servers/"+serverID, map[string]any{"maxCallsPerMinute": 3})
	expect(t, "PATCH maxCallsPerMinute", set, http.StatusOK, "")
	if set.Body["maxCallsPerMinute"] != float64(3) {
		t.Fatalf("the view after the PATCH: %s", set.Raw)
	}

	// The count is per minute of the database's clock: both reviews run
	// in one minute (this machine's clock is the database's).
	if left := time.Minute - time.Duration(time.Now().Second())*time.Second; left < 25*time.Second {
		time.Sleep(left + time.Second)
	}
	before := len(toolCalls(p.requests()))
	first, r1 := runReview(t, c, repoID)
	expectDone(t, r1)
	second, r2 := runReview(t, c, repoID)
	expectDone(t, r2)
	if st := mcpStats(t, r1); st["calls"] != float64(2) {
		t.Errorf("the first review's stats.mcp = %v, want 2 calls", st)
	}
	if st := mcpStats(t, r2); st["calls"] != float64(1) {
		t.Errorf("the second review's stats.mcp = %v, want 1 call sent", st)
	}
	if got := len(toolCalls(p.requests())) - before; got != 3 {
		t.Errorf("the server received %d tools/call, want 3", got)
	}
	statuses := map[string][]string{}
	for _, rec := range calls(t, c, serverID) {
		statuses[str(rec, "reviewId")] = append(statuses[str(rec, "reviewId")], str(rec, "status"))
	}
	// The records are newest first.
	if got := statuses[first]; len(got) != 2 || got[0] != "ok" || got[1] != "ok" {
		t.Errorf("the first review's calls %v, want two ok", got)
	}
	if got := statuses[second]; len(got) != 2 || got[0] != "rate_limited" || got[1] != "ok" {
		t.Errorf("the second review's calls %v (newest first), want ok, then rate_limited", got)
	}

	unset := c.do("PATCH", "/v1/mcp/servers/"+serverID, map[string]any{"maxCallsPerMinute": nil})
	expect(t, "PATCH maxCallsPerMinute null", unset, http.StatusOK, "")
	if v, ok := unset.Body["maxCallsPerMinute"]; !ok || v != nil {
		t.Errorf("the view after removing the limit: %s", unset.Raw)
	}
	_, r3 := runReview(t, c, repoID)
	expectDone(t, r3)
	if st := mcpStats(t, r3); st["calls"] != float64(2) {
		t.Errorf("a review without the limit: stats.mcp = %v, want 2 calls", st)
	}
}
