package app

import (
	"context"
	"fmt"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// AllowlistedConnector is the MCP connector the application modules hold
// (MC1): every MCP connection, a review's session, a discovery, a
// connection test and the client-credentials token request behind it,
// opens through it, and a target whose URL the operator's allowlist
// (QUAVON_MCP_ALLOWED_URLS, [server.AllowedURLs]) does not allow is
// refused with [server.ErrOutsideAllowlist] before next is asked for
// anything: no lookup, no connection, no credential. The use cases refuse
// such a server earlier, in their own words; this is the one place a
// path that forgot to cannot pass. An empty allowlist is next itself.
func AllowlistedConnector(next ports.MCPConnector, allowed server.AllowedURLs) ports.MCPConnector {
	if allowed.Len() == 0 {
		return next
	}
	return allowlistedConnector{next: next, allowed: allowed}
}

type allowlistedConnector struct {
	next    ports.MCPConnector
	allowed server.AllowedURLs
}

func (c allowlistedConnector) Open(ctx context.Context, target ports.MCPTarget, responseCap int64) (ports.MCPSession, error) {
	if !c.allowed.Allows(target.URL) {
		// The server's id only: the URL may hold a secret in its path.
		return nil, fmt.Errorf("mcp server %s: %w", target.ServerID, server.ErrOutsideAllowlist)
	}
	return c.next.Open(ctx, target, responseCap)
}
