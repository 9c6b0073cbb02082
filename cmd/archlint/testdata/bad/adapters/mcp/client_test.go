package mcp

import sdk "github.com/modelcontextprotocol/go-sdk/mcp"

// Tests may name the banned transports (to prove they are banned).
var _ = &sdk.StdioTransport{}
