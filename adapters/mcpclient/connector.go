package mcpclient

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/ports"
)

// Options configure a [Connector].
type Options struct {
	// Rules judge every address a server host resolves to (MC1).
	Rules netpolicy.Rules
	// Resolver looks up server hosts; nil is net.DefaultResolver.
	Resolver ports.Resolver
	// Timeout bounds each HTTP request, its body included, and each MCP
	// operation; zero is limits.CallTimeout. Tests shorten it.
	Timeout time.Duration
	// RootCAs are the trusted CAs; nil is the system pool, to which
	// SSL_CERT_FILE adds a file.
	RootCAs *x509.CertPool
	// Logger receives the causes of failures at debug level. They may
	// name the remote; the errors returned never do.
	Logger zerolog.Logger
	// Metrics, when set, records every MCP operation's duration.
	Metrics OperationMetrics
	// Assertions signs the client assertions of private_key_jwt; nil when
	// the instance has no signing key (such a credential then fails with
	// server_unauthorized, nothing sent).
	Assertions ports.ClientAssertions
}

// clientName is the clientInfo sent to servers. It is not a capability.
const clientName = "codelotse"

// Connector opens MCP sessions through the guarded HTTP client. It
// implements [ports.MCPConnector] and is safe for concurrent use; it holds
// no connection itself, each session has its own.
type Connector struct {
	opts Options
	// connect, when set, replaces the socket dial (tests only).
	connect func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error)
	// tokens caches the access tokens of OAuth credentials (memory only).
	tokens *tokenCache
	// now is the clock of the token cache (tests move it).
	now func() time.Time
}

var _ ports.MCPConnector = (*Connector)(nil)

// NewConnector returns a Connector with the defaults of [Options] applied.
func NewConnector(opts Options) *Connector {
	if opts.Resolver == nil {
		opts.Resolver = net.DefaultResolver
	}
	if opts.Timeout <= 0 {
		opts.Timeout = limits.CallTimeout
	}
	return &Connector{opts: opts, tokens: newTokenCache(), now: time.Now}
}

func (c *Connector) egress() egress { return egress{opts: c.opts, connect: c.connect} }

// errBadTarget is a programming error of the caller, not of the remote.
var errBadTarget = errors.New("mcpclient: invalid target or response cap")

// Open implements [ports.MCPConnector]; the session is a [*Session].
func (c *Connector) Open(ctx context.Context, target ports.MCPTarget, responseCap int64) (ports.MCPSession, error) {
	s, err := c.OpenSession(ctx, target, responseCap)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSession connects to target: server/discover on protocol 2026-07-28,
// falling back to the 2025 initialize handshake when the server says it
// does not speak it (the go-sdk's own negotiation, narrowed by the
// guarded transport: never after a timeout or a dropped connection).
// responseCap is the byte cap of one MCP operation, over all its HTTP
// responses (limits.DiscoveryResponseCap or limits.ReviewResponseCap).
// Errors are the sentinels of ports.
func (c *Connector) OpenSession(ctx context.Context, target ports.MCPTarget, responseCap int64) (*Session, error) {
	if target.URL.IsZero() || responseCap <= 0 {
		return nil, errBadTarget
	}
	g := newGuard(c.opts, target, responseCap)
	if c.connect != nil {
		g.connect = c.connect
	}
	if target.Credential.Kind().IsOAuth() {
		// The access token comes first: a credential that cannot get
		// one (not connected, refused, its token endpoint blocked) fails
		// here, before anything reaches the MCP server.
		g.bearer = c.bearer(target)
		if _, f := g.bearer.token(ctx); f != nil {
			ce := &codedError{code: f.code, ctxErr: ctx.Err()}
			c.opts.Logger.Debug().Err(f.cause).Str("code", ce.Error()).Msg("mcp connect failed: no access token")
			return nil, ce
		}
	}
	hc, tr := g.httpClient(c.opts.RootCAs)

	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, &mcp.ClientOptions{
		// A non-nil, empty value: the go-sdk default (nil) advertises
		// roots. No handler is set, so nothing infers sampling or
		// elicitation either (client.go, Client.capabilities).
		Capabilities: &mcp.ClientCapabilities{},
		// The multi-round-trip middleware would answer input requests
		// (roots, sampling, elicitation) embedded in results by calling the
		// client's own handlers directly, bypassing the receiving
		// middleware below (mrtr.go, fulfillInputRequest).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	client.AddReceivingMiddleware(refuseServerRequests)
	client.AddSendingMiddleware(observe(c.opts.Metrics))

	transport := &mcp.StreamableClientTransport{
		Endpoint:   target.URL.String(),
		HTTPClient: hc,
		// A response stream that the server closes before the answer
		// is resumed with Last-Event-ID. The SDK bounds only resumptions
		// without progress; the guarded transport bounds them all
		// (maxResumptions per operation), under the operation's deadline
		// and byte cap.
		MaxRetries: maxResumptions,
		// No standalone GET stream: it exists for server-initiated
		// messages, which this client refuses anyway.
		DisableStandaloneSSE: true,
		// Above the body cap, so that the cap (with its own code) trips
		// first; an event is never larger than the body that carries it.
		MaxEventSize: int(responseCap) + 1,
	}

	// discover (may fall back) + initialize + initialized: up to three
	// requests, each bounded by the timeout; the handshake as a whole gets
	// two timeouts. The go-sdk falls back to initialize after any failure
	// of server/discover; the guarded transport lets it only when the
	// server answered that it does not know the method or the version (a
	// JSON-RPC error, or HTTP 400, 404 or 405), never after a timeout or
	// a dropped connection: a slow server costs one timeout, not two.
	opCtx, cancel := context.WithTimeout(ctx, 2*c.opts.Timeout)
	defer cancel()
	opCtx, rec := withRecorder(opCtx)
	rec.handshake.Store(true)
	cs, err := client.Connect(opCtx, transport, nil)
	// The SDK keeps the handshake's context for the session's last
	// request (the DELETE of Close): that one is not part of it.
	rec.handshake.Store(false)
	if err != nil {
		tr.CloseIdleConnections()
		ce, f := classify(ctx, opCtx, err, rec, g.session)
		c.opts.Logger.Debug().Err(f).Str("code", ce.Error()).Msg("mcp connect failed")
		return nil, ce
	}
	s := &Session{cs: cs, tr: tr, g: g, timeout: c.opts.Timeout, log: c.opts.Logger}
	if res := cs.InitializeResult(); res != nil {
		c.opts.Logger.Debug().Str("protocol", res.ProtocolVersion).Msg("mcp session open")
	}
	return s, nil
}

// refuseServerRequests answers every request a server sends to the client
// with JSON-RPC "method not found", except ping, which carries nothing and
// which servers with keep-alive use to decide whether the client is
// there. Notifications pass (they have no answer and the client sets no
// handler for them). Methods the SDK does not know never get here: the
// SDK answers them with -32601 itself (shared.go, checkRequest).
func refuseServerRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "ping" || strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}
	}
}
