//go:build signedoff

package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestE2EReviewMcpParamHeader: a 2026-07-28 server whose search tool
// carries its "region" argument also as the HTTP header Mcp-Param-Region
// (x-mcp-header). Discovery lists the tool as supported and pins the
// header in its hash; in a review, a valid call leaves with the header
// holding the validated value, and a call whose region holds a secret is
// blocked before anything leaves: no tools/call, and the secret in no
// request body or header.
func TestE2EReviewMcpParamHeader(t *testing.T) {
	t.Parallel()
	const (
		region = "eu-west-1"
		awsKey = "AKIAQYLPMN5HHHFPZAM2"
	)
	okArgs := map[string]any{"query": "cache", "region": region}
	in, _ := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(call("mcp_wiki_search", okArgs)),
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache", "region": awsKey})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	in.secret(awsKey)
	_, c := in.tenant("mcpheader", "tenant:manage,repo:manage")
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query":  map[string]any{"type": "string"},
			"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		},
		"required": []any{"query"},
	}
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the wiki.", schema, readOnly(), "nothing found")
	})
	serverID := allowlistSearch(t, c, "wiki", p, "e2e-mcpheader-bearer-Hh42")

	// The pin covers the header: the stored schema keeps it, and the same
	// tool without it hashes differently.
	d := snapshots(t, c.do("GET", "/v1/mcp/servers/"+serverID, nil))["search"]
	props, _ := d["inputSchema"].(map[string]any)["properties"].(map[string]any)
	if r, _ := props["region"].(map[string]any); r["x-mcp-header"] != "Region" {
		t.Fatalf("pinned schema = %v, want region's x-mcp-header", d["inputSchema"])
	}
	without := map[string]any{"type": "object", "properties": map[string]any{
		"query": map[string]any{"type": "string"}, "region": map[string]any{"type": "string"}}, "required": []any{"query"}}
	if h := liveHash(t, "search", "Searches the wiki.", d); h != d["hash"] {
		t.Errorf("pinned hash %v, recomputed %v", d["hash"], h)
	}
	if h := liveHash(t, "search", "Searches the wiki.", map[string]any{"inputSchema": without, "annotations": d["annotations"]}); h == d["hash"] {
		t.Errorf("the hash without x-mcp-header equals the pinned one %v", h)
	}

	repoID := privateRepoWithMCP(t, c, serverID)
	seen := len(p.requests())
	_, r := runReview(t, c, repoID)
	expectDone(t, r)
	if st := mcpStats(t, r); st["calls"] != float64(1) || st["blocked"] != float64(1) {
		t.Errorf("stats.mcp = %v, want 1 call and 1 blocked", st)
	}

	reqs := p.requests()[seen:]
	tc := toolCalls(reqs)
	if len(tc) != 1 {
		t.Errorf("the server received %d tools/call requests, want 1 (the second is blocked)", len(tc))
	}
	if len(tc) > 0 {
		if got := tc[0].Header.Values("Mcp-Param-Region"); len(got) != 1 || got[0] != region {
			t.Errorf("Mcp-Param-Region = %q, want [%q]", got, region)
		}
	}
	if got := p.calledWith(); len(got) != 1 || string(got[0]) != `{"query":"cache","region":"`+region+`"}` {
		t.Errorf("the server's search ran with %s, want the validated arguments once", got)
	}
	for _, req := range reqs {
		if strings.Contains(string(req.Body), awsKey) {
			t.Errorf("a %s request carried the secret in its body", req.RPCMethod)
		}
		for name, values := range req.Header {
			for _, v := range values {
				if strings.Contains(v, awsKey) || strings.Contains(v, "QUtJQVFZTFBNTjVISEhGUFpBTTI") { // base64 of the key
					t.Errorf("a %s request carried the secret in its header %s", req.RPCMethod, name)
				}
			}
		}
	}
	cs := calls(t, c, serverID)
	statuses := map[any]int{}
	for _, rec := range cs {
		statuses[rec["status"]]++
	}
	if statuses["ok"] != 1 || statuses["blocked"] != 1 {
		t.Errorf("call records = %v, want one ok and one blocked", cs)
	}
	if g := c.do("GET", "/v1/mcp/servers/"+serverID, nil); g.Status != http.StatusOK || g.Body["lastError"] != nil {
		t.Errorf("server = %d %s, want no lastError", g.Status, g.Raw)
	}
}
