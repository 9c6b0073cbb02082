package store

import (
	"example.com/bad/adapters/mcp"
	"example.com/bad/cmd/tool"
)

var _ = mcp.X
var _ = tool.Y
