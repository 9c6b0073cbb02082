package ports

import (
	"example.com/bad/adapters/mcp"
	"example.com/bad/app"
)

var _ = mcp.X
var _ = app.Z

type Store interface{}
