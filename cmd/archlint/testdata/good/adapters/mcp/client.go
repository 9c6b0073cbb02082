package mcp

import (
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func Remote(c *http.Client) any { return &sdk.StreamableClientTransport{HTTPClient: c} }
