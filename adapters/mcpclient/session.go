package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/tool"
	"github.com/codelotse/codelotse/ports"
)

// Session is one open MCP connection; it implements [ports.MCPSession].
// ListTools and ListAll must not run concurrently with each other;
// CallTool may run concurrently. Close is idempotent.
type Session struct {
	cs      *mcp.ClientSession
	tr      *http.Transport
	g       *guard
	timeout time.Duration
	log     zerolog.Logger
	// listTTL is the cache hint of the last ListAll (see ListTTL).
	listTTL time.Duration

	closeOnce sync.Once
}

var _ ports.MCPSession = (*Session)(nil)

// ListedTool is one tool of a tools/list answer. Either Definition is set
// and Err is nil, or Err says why the tool could not become a
// [tool.Definition] (a [*tool.UnsupportedError] for an input schema that
// does not canonicalise, such as one nested deeper than
// tool.MaxJSONDepth, or a [*field.Error] for an empty name); then
// Name and Description are the server's, so discovery can still list the
// tool as unsupported.
type ListedTool = ports.ListedTool

// ListTools implements [ports.MCPSession]: every listed tool, see
// [Session.ListAll].
func (s *Session) ListTools(ctx context.Context) ([]ports.ListedTool, error) { return s.ListAll(ctx) }

// ListTTL implements [ports.MCPSession].
func (s *Session) ListTTL() time.Duration { return s.listTTL }

// errPaging is the cause logged for a list that breaks the paging rules.
var errPaging = errors.New("tools/list paging")

// ListAll pages through tools/list. More than limits.MaxListedTools tools
// is ErrProtocol; so is a page that repeats an earlier cursor, or holds no
// tool yet names a next page, so the loop ends after at most
// limits.MaxListedTools+1 pages whatever the server answers. Each page is
// one operation bounded by the timeout; the whole list is bounded by ctx.
func (s *Session) ListAll(ctx context.Context) ([]ListedTool, error) {
	var out []ListedTool
	seen := map[string]bool{}
	cursor := ""
	s.listTTL = 0
	for page := 0; ; page++ {
		if page > limits.MaxListedTools {
			return nil, s.protocolError(errPaging, "too many pages")
		}
		var res *mcp.ListToolsResult
		err := s.do(ctx, "tools/list", func(ctx context.Context) error {
			var err error
			res, err = s.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
			return err
		})
		if err != nil {
			return nil, err
		}
		if len(out)+len(res.Tools) > limits.MaxListedTools {
			return nil, s.protocolError(errPaging, "more tools than allowed")
		}
		for _, t := range res.Tools {
			out = append(out, listed(t))
		}
		if ttl := time.Duration(res.TTLMs) * time.Millisecond; res.TTLMs > 0 && (s.listTTL == 0 || ttl < s.listTTL) {
			s.listTTL = ttl
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if len(res.Tools) == 0 {
			return nil, s.protocolError(errPaging, "empty page with a next cursor")
		}
		if seen[res.NextCursor] {
			return nil, s.protocolError(errPaging, "repeated cursor")
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

func (s *Session) protocolError(cause error, why string) error {
	s.log.Debug().Err(cause).Str("reason", why).Str("code", ports.ErrProtocol.Error()).Msg("mcp list refused")
	return &codedError{code: ports.ErrProtocol}
}

// listed turns an SDK tool into a ListedTool. The SDK has decoded the
// input schema into a map[string]any and the annotations into its own
// struct; both are encoded again here (see [annotationsJSON]), so the
// definition (and its hash) is over the SDK's reading of what the server
// sent.
func listed(t *mcp.Tool) ListedTool {
	lt := ListedTool{Name: t.Name, Description: t.Description}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil {
		lt.Err = &tool.UnsupportedError{Reason: "unsupported schema"}
		return lt
	}
	def, err := tool.NewDefinition(t.Name, t.Description, schema, annotationsJSON(t.Annotations))
	if err != nil {
		lt.Err = err
		return lt
	}
	lt.Definition = def
	return lt
}

// annotationsJSON encodes the annotations with a fixed set of keys, not
// with the SDK's MarshalJSON, whose output depends on MCPGODEBUG
// (hintomitempty): a hash must not change with an environment variable.
// readOnlyHint and idempotentHint are plain bools in the SDK, so an absent
// hint and false are the same (both mean "may write" for readOnlyHint).
func annotationsJSON(a *mcp.ToolAnnotations) json.RawMessage {
	if a == nil {
		return nil
	}
	m := map[string]any{
		"readOnlyHint":   a.ReadOnlyHint,
		"idempotentHint": a.IdempotentHint,
	}
	if a.DestructiveHint != nil {
		m["destructiveHint"] = *a.DestructiveHint
	}
	if a.OpenWorldHint != nil {
		m["openWorldHint"] = *a.OpenWorldHint
	}
	if a.Title != "" {
		m["title"] = a.Title
	}
	b, _ := json.Marshal(m) // bools and a string: cannot fail
	return b
}

// CallTool implements [ports.MCPSession]: text items and structuredContent
// are kept; images, audio, resources and links are counted in Dropped. A
// result that asks for input (multi-round-trip) is ErrProtocol: this
// client fulfils no input request.
func (s *Session) CallTool(ctx context.Context, name string, args tool.Arguments) (ports.ToolResult, error) {
	return s.call(ctx, name, args.Canonical())
}

// call is CallTool with arguments as JSON bytes.
func (s *Session) call(ctx context.Context, name string, args json.RawMessage) (ports.ToolResult, error) {
	var res *mcp.CallToolResult
	err := s.do(ctx, "tools/call", func(ctx context.Context) error {
		var err error
		res, err = s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return ports.ToolResult{}, err
	}
	if res.NeedsInput() || len(res.InputRequests) > 0 {
		return ports.ToolResult{}, s.protocolError(errors.New("input required"), "tool result asks for input")
	}
	out := ports.ToolResult{IsError: res.IsError}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.Texts = append(out.Texts, t.Text)
			continue
		}
		out.Dropped++
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return ports.ToolResult{}, s.protocolError(err, "structuredContent")
		}
		out.Structured = b
	}
	return out, nil
}

// do runs one MCP operation with the timeout and its own failure
// recorder, and turns its error into a sentinel.
func (s *Session) do(ctx context.Context, what string, op func(context.Context) error) error {
	opCtx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	opCtx, rec := withRecorder(opCtx)
	err := op(opCtx)
	if err == nil {
		return nil
	}
	ce, f := classify(ctx, opCtx, err, rec, s.g.session)
	s.log.Debug().Err(f).Str("op", what).Str("code", ce.Error()).Msg("mcp operation failed")
	return ce
}

// Close ends the session (a DELETE for servers that keep sessions) and
// closes its connections. The DELETE is one request of the guarded
// transport, so a server that never answers it holds Close for one
// request timeout at most. It is idempotent and always returns nil: there
// is nothing a caller could do about a failed goodbye.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if err := s.cs.Close(); err != nil {
			s.log.Debug().Err(err).Msg("mcp session close")
		}
		s.tr.CloseIdleConnections()
	})
	return nil
}
