//go:build signedoff

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End-to-end tests of wrong credentials through the real binary: a server
// that answers 401 or 403 is server_unauthorized (a credential to fix),
// never a protocol error, in a discovery and in a review.

// refusingPeer serves a go-sdk server (2026-07-28, stateless) with the
// read-only search tool; while refuse holds a status, every request whose
// JSON-RPC method is in methods (all when empty) is answered with it.
type refusingPeer struct {
	*mcpPeer
	refuse atomic.Int64
}

func startRefusingPeer(t *testing.T, methods ...string) *refusingPeer {
	t.Helper()
	rp := &refusingPeer{mcpPeer: &mcpPeer{era: era2026}}
	rp.srv = mcp.NewServer(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{era2026},
	})
	rp.addTool("search", "Searches the wiki.", searchSchema(), readOnly(), "hit")
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rp.srv }, &mcp.StreamableHTTPOptions{
		Stateless: true, DisableLocalhostProtection: true,
	})
	rp.peer = startTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status := int(rp.refuse.Load()); status != 0 {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				Method string `json:"method"`
			}
			_ = json.Unmarshal(body, &m)
			if len(methods) == 0 || slices.Contains(methods, m.Method) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				w.WriteHeader(status)
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	return rp
}

func TestE2EDiscoveryUnauthorized(t *testing.T) {
	t.Parallel()
	env, key := mcpEnv(t)
	in := startInstance(t, env...)
	in.secret(key)
	_, c := in.tenant("unauthorized", "tenant:manage")
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			p := startRefusingPeer(t)
			p.refuse.Store(int64(status))
			id := registerServer(t, c, fmt.Sprintf("wiki%d", status), p.url(), "e2e-expired-bearer-Zz99")
			r := c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil)
			expect(t, "discover with a refused credential", r, 502, "server_unauthorized")
			expectNoEcho(t, "discover with a refused credential", r, p.url(), "localhost", "Zz99", "invalid_token")
			if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "server_unauthorized" {
				t.Errorf("lastError = %v, want server_unauthorized", g.Body["lastError"])
			}
			if got := rpcMethods(p.requests()); len(got) != 1 || got[0] != "server/discover" {
				t.Errorf("the server received %v, want server/discover alone (no fallback after a 401/403)", got)
			}
		})
	}
}

// TestE2EReviewUnauthorized: the credential is revoked after the
// allowlist was saved. A server that refuses tools/call: the call is
// unavailable; one that refuses everything: it is skipped. Both reviews
// are done, and each server's lastError says server_unauthorized.
func TestE2EReviewUnauthorized(t *testing.T) {
	t.Parallel()
	in, _ := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache"})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	})
	for _, tc := range []struct {
		name    string
		methods []string
		status  int
		calls   []string // statuses of the server's call records
	}{
		{"tools/call refused", []string{"tools/call"}, http.StatusUnauthorized, []string{"unavailable"}},
		{"everything refused", nil, http.StatusForbidden, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, c := in.tenant("revoked", "tenant:manage,repo:manage")
			p := startRefusingPeer(t, tc.methods...)
			serverID := allowlistSearch(t, c, "wiki", p.mcpPeer, "e2e-revoked-bearer-Yy88")
			repoID := privateRepoWithMCP(t, c, serverID)
			p.refuse.Store(int64(tc.status))

			_, r := runReview(t, c, repoID)
			expectDone(t, r)
			var got []string
			for _, call := range calls(t, c, serverID) {
				got = append(got, str(call, "status"))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.calls) {
				t.Errorf("call records %v, want %v", got, tc.calls)
			}
			if g := c.do("GET", "/v1/mcp/servers/"+serverID, nil); g.Body["lastError"] != "server_unauthorized" {
				t.Errorf("lastError = %v, want server_unauthorized", g.Body["lastError"])
			}
			if len(p.calledWith()) != 0 {
				t.Errorf("the tool ran: %v", p.calledWith())
			}
		})
	}
}
