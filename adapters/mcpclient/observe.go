package mcpclient

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// OperationMetrics records MCP client operations
// (mcp_client_operation_duration_seconds). errorType is empty on success.
type OperationMetrics interface {
	McpOperation(method, errorType string, d time.Duration)
}

// TracerName names this package's OpenTelemetry tracer.
const TracerName = "github.com/codelotse/codelotse/adapters/mcpclient"

// observe is a sending middleware: one client span and one histogram
// observation per MCP request, following OpenTelemetry's semantic
// conventions for MCP clients (span "{mcp.method.name} {tool}", attributes
// mcp.method.name, gen_ai.tool.name, error.type). Never the arguments, the
// result, the server's URL, its session id or a header: the tool name is
// the only text of the tenant's that a span carries.
func observe(m OperationMetrics) mcp.Middleware {
	tracer := otel.Tracer(TracerName)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			name := method
			attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method)}
			if p, ok := req.GetParams().(*mcp.CallToolParams); ok {
				name += " " + p.Name
				attrs = append(attrs, attribute.String("gen_ai.tool.name", p.Name), attribute.String("gen_ai.operation.name", "execute_tool"))
			}
			ctx, span := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
			start := time.Now()
			res, err := next(ctx, method, req)
			d := time.Since(start)
			errType := errorType(ctx, res, err)
			if errType != "" {
				span.SetAttributes(attribute.String("error.type", errType))
				span.SetStatus(codes.Error, errType)
			}
			span.End()
			if m != nil {
				m.McpOperation(method, errType, d)
			}
			return res, err
		}
	}
}

// errorType is a fixed code, never the server's text: the failure the
// guarded transport recorded (server_unreachable, response_too_large,
// address_blocked, …), timeout, the JSON-RPC error code, "tool_error" for
// a tool result with isError, else protocol_error.
func errorType(ctx context.Context, res mcp.Result, err error) string {
	if err == nil {
		if r, ok := res.(*mcp.CallToolResult); ok && r.IsError {
			return "tool_error"
		}
		return ""
	}
	if f := recorderFrom(ctx).get(); f != nil {
		return f.code.Error()
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return "timeout"
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return strconv.FormatInt(rpcErr.Code, 10)
	}
	return "protocol_error"
}
