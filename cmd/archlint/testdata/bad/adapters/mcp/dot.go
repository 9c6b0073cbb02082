package mcp

import . "github.com/modelcontextprotocol/go-sdk/mcp"

func Dotted() any { return &StdioTransport{} }
