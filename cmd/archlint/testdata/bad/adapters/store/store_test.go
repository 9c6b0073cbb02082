package store

// Tests may use another adapter's test helpers.
import "example.com/bad/adapters/mcp"

var _ = mcp.X
