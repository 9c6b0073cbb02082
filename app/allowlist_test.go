package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// countingConnector counts the opens that reach it.
type countingConnector struct{ opened []string }

func (c *countingConnector) Open(_ context.Context, t ports.MCPTarget, _ int64) (ports.MCPSession, error) {
	c.opened = append(c.opened, t.URL.String())
	return nil, errors.New("fake: no session")
}

func allowTarget(t *testing.T, raw string) ports.MCPTarget {
	t.Helper()
	u, err := server.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return ports.MCPTarget{ServerID: "srv-1", TenantID: "ten-1", URL: u, Credential: server.NoCredential()}
}

// TestAllowlistedConnectorRefusesBeforeTheTransport: a target outside
// the operator's allowlist never reaches the transport, and the refusal
// is ErrOutsideAllowlist without the URL; a target inside, and every
// target under an empty list, is opened by the transport.
func TestAllowlistedConnectorRefusesBeforeTheTransport(t *testing.T) {
	allowed, err := server.ParseAllowedURLs("https://wiki.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	next := &countingConnector{}
	c := app.AllowlistedConnector(next, allowed)
	for _, raw := range []string{"https://wiki.example.com/mcpx", "https://wiki.example.com.evil.test/mcp", "https://wiki.example.com:8443/mcp"} {
		_, err := c.Open(context.Background(), allowTarget(t, raw), 1<<20)
		if !errors.Is(err, server.ErrOutsideAllowlist) || strings.Contains(err.Error(), "example") {
			t.Errorf("Open(%q) = %v, want ErrOutsideAllowlist without the URL", raw, err)
		}
	}
	if len(next.opened) != 0 {
		t.Fatalf("the transport was asked for %v", next.opened)
	}
	if _, err := c.Open(context.Background(), allowTarget(t, "https://wiki.example.com/mcp/v1"), 1<<20); errors.Is(err, server.ErrOutsideAllowlist) {
		t.Errorf("an allowed target was refused: %v", err)
	}
	if len(next.opened) != 1 {
		t.Errorf("an allowed target did not reach the transport: %v", next.opened)
	}
	unlisted := app.AllowlistedConnector(next, server.AllowedURLs{})
	if _, err := unlisted.Open(context.Background(), allowTarget(t, "https://evil.test/"), 1<<20); errors.Is(err, server.ErrOutsideAllowlist) {
		t.Errorf("an empty allowlist refused a target: %v", err)
	}
	if len(next.opened) != 2 {
		t.Errorf("under an empty allowlist the target did not reach the transport: %v", next.opened)
	}
}
