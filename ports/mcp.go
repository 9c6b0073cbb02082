package ports

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool"
)

// The fixed failure codes of an MCP connection. The transport adapter
// returns one of these (wrapped: errors.Is works) and keeps the cause,
// which may name the remote, for its debug log only.
var (
	ErrServerUnreachable = errors.New("server_unreachable")
	// ErrServerUnauthorized: the server answered 401 or 403, a wrong or
	// expired credential; not a protocol error.
	ErrServerUnauthorized = errors.New("server_unauthorized")
	ErrTimeout            = errors.New("timeout")
	ErrResponseTooLarge   = errors.New("response_too_large")
	ErrProtocol           = errors.New("protocol_error")
	ErrRedirectRefused    = errors.New("redirect_refused")
	ErrAddressBlocked     = errors.New("address_blocked")
	// ErrRateLimited: the server answered 429 Too Many Requests; a
	// [*RateLimited] in the chain carries its Retry-After.
	ErrRateLimited = errors.New("rate_limited")
)

// RateLimited is [ErrRateLimited] with the wait the server asked for in
// Retry-After (zero when it gave none or none that could be read).
type RateLimited struct{ RetryAfter time.Duration }

func (e *RateLimited) Error() string        { return ErrRateLimited.Error() }
func (e *RateLimited) Is(target error) bool { return target == ErrRateLimited }

// MCPTarget is what a connection needs to know about a server.
type MCPTarget struct {
	// ServerID keys the connector's cache of OAuth access tokens;
	// TenantID, the server's tenant, bounds that cache per tenant (one
	// tenant's tokens never evict another's).
	ServerID   string
	TenantID   string
	URL        server.URL
	Credential server.Credential
	// SaveCredential, when set, stores a rotated OAuth refresh token
	// (see [CredentialSaver]); nil for the static kinds.
	SaveCredential CredentialSaver
}

// MCPConnector opens sessions to MCP servers through the guarded
// transport. responseCap is the byte cap per HTTP response, and per MCP
// operation when a resumed event stream takes several (1 MiB during
// discovery, 256 KiB during a review). Safe for concurrent use.
type MCPConnector interface {
	Open(ctx context.Context, target MCPTarget, responseCap int64) (MCPSession, error)
}

// MCPSession is one open connection. It is not safe for concurrent
// ListTools; CallTool may run concurrently. Close must always be called.
type MCPSession interface {
	// ListTools pages through tools/list; more than limits.MaxListedTools
	// is ErrProtocol, never an unbounded loop. Every listed tool is
	// returned, also one whose definition cannot be read (Err set), so
	// discovery can show it as unsupported.
	ListTools(ctx context.Context) ([]ListedTool, error)
	// ListTTL is the cache hint of the last ListTools: the smallest
	// positive ttlMs of its pages (protocol 2026-07-28), 0 when none.
	ListTTL() time.Duration
	// CallTool calls a tool with arguments its schema admitted.
	CallTool(ctx context.Context, name string, args tool.Arguments) (ToolResult, error)
	Close() error
}

// ToolResult is a tool's answer reduced to what may reach the model: text
// items and structuredContent as JSON; images, audio, resources and links
// are dropped and only counted.
type ToolResult struct {
	Texts      []string
	Structured json.RawMessage
	IsError    bool
	Dropped    int
}

// ListedTool is one tool of a tools/list answer. Err is set (a
// *tool.UnsupportedError or *field.Error) when the server's definition
// could not become a [tool.Definition]; Definition is then empty.
type ListedTool struct {
	Name        string
	Description string
	Definition  tool.Definition
	Err         error
}
