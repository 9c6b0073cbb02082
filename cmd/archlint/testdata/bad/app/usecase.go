package app

import (
	"example.com/bad/adapters/mcp"
	"example.com/bad/cmd/tool"
	"example.com/bad/ports"
)

var _ = mcp.X
var _ = tool.Y
var _ ports.Store
var Z = 3
