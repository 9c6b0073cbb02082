package mcpclient

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
)

// TestListTTLIsTheSmallestHintOfTheListing: a 2026-07-28 server's ttlMs
// on every tools/list page; ListTTL is the smallest positive one of the
// last listing (a page's 0 is no hint), and 0 for a server that sends
// none.
func TestListTTLIsTheSmallestHintOfTheListing(t *testing.T) {
	for _, tt := range []struct {
		name string
		ttls []int // per page
		want time.Duration
	}{
		{"one page", []int{300_000}, 5 * time.Minute},
		{"the smallest page", []int{300_000, 120_000, 0}, 2 * time.Minute},
		{"no hint", nil, 0},
		{"only zero", []int{0, 0}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := &mcp.ServerOptions{SupportedProtocolVersions: []string{era2026}, PageSize: 1}
			if tt.ttls != nil {
				page := 0 // the pages are listed in turn
				opts.SetCacheable = func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
					if _, ok := req.GetParams().(*mcp.ListToolsParams); !ok {
						return
					}
					c.TTLMs = tt.ttls[min(page, len(tt.ttls)-1)]
					page++
				}
			}
			s := mcp.NewServer(&mcp.Implementation{Name: "ttl", Version: "1"}, opts)
			for i := range max(len(tt.ttls), 1) {
				s.AddTool(&mcp.Tool{Name: fmt.Sprintf("tool_%d", i), InputSchema: map[string]any{"type": "object"}},
					func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{}, nil
					})
			}
			ts := startServer(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: true, DisableLocalhostProtection: true}))
			c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 5*time.Second)
			sess := openSession(t, c, ts, server.NoCredential(), limits.DiscoveryResponseCap)
			defer sess.Close()
			if _, err := sess.ListTools(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := sess.ListTTL(); got != tt.want {
				t.Errorf("ListTTL = %v, want %v", got, tt.want)
			}
		})
	}
}
