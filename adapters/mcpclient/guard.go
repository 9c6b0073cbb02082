package mcpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// maxResponseHeaderBytes bounds the response headers; the body is bounded
// by the response cap.
const maxResponseHeaderBytes = 64 << 10

// maxResumptions bounds the resumptions of one operation's event stream
// (a GET with Last-Event-ID after the server closed the stream before the
// answer). They run under the operation's deadline and count against its
// byte cap.
const maxResumptions = 2

// guard is the egress policy of one session: one origin, one credential,
// one byte cap. It is immutable after construction.
type guard struct {
	rules    netpolicy.Rules
	resolver ports.Resolver
	timeout  time.Duration
	host     string // normalised (see netpolicy.NormalizeHost), IPv6 without brackets
	port     int
	cred     server.Credential
	cap      int64
	session  *recorder
	log      zerolog.Logger
	// bearer, for the OAuth kinds, gives each request to the origin its
	// access token (nil for the static kinds).
	bearer *bearerSource
	// connect opens the socket to a checked address; tests replace it to
	// see what would be dialled without reaching other hosts.
	connect func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error)
}

func dialSocket(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
	return d.DialContext(ctx, network, address)
}

func newGuard(o Options, target ports.MCPTarget, responseCap int64) *guard {
	return &guard{
		rules:    o.Rules,
		resolver: o.Resolver,
		timeout:  o.Timeout,
		host:     target.URL.Host(),
		port:     target.URL.Port(),
		cred:     target.Credential,
		cap:      responseCap,
		session:  &recorder{},
		log:      o.Logger,
		connect:  dialSocket,
	}
}

// httpClient returns the guarded client and its transport, whose idle
// connections the session closes when it ends. Each session has its own
// transport, so a connection is never reused for another origin, another
// tenant or another run.
func (g *guard) httpClient(roots *x509.CertPool) (*http.Client, *http.Transport) {
	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	tr := &http.Transport{
		Proxy:       nil, // never a proxy from the environment
		DialContext: g.dial,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			RootCAs:    roots, // nil: the system pool (SSL_CERT_FILE applies)
		},
		Protocols:              protocols,
		DisableCompression:     true,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		TLSHandshakeTimeout:    g.timeout,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        30 * time.Second,
	}
	hc := &http.Client{
		Transport: &guardedTransport{g: g, base: tr},
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			// Unreachable while guardedTransport refuses every 3xx; kept so
			// that no change there can make the client follow one.
			f := fail(ports.ErrRedirectRefused, errors.New("redirect"))
			g.record(req.Context(), f, true)
			return f
		},
	}
	return hc, tr
}

// record keeps f for the operation whose context carries a recorder and,
// if sticky, for the whole session; the cause goes to the debug log.
func (g *guard) record(ctx context.Context, f *failure, sticky bool) {
	recorderFrom(ctx).record(f)
	if sticky {
		g.session.record(f)
	}
	g.log.Debug().Err(f.cause).Str("code", f.code.Error()).Msg("mcp egress refused or failed")
}

// dial resolves the configured host, checks every address and dials the
// checked IP literal. It dials nothing but the configured host and port.
func (g *guard) dial(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil || !g.sameHost(host) || portStr != strconv.Itoa(g.port) {
		return nil, fail(ports.ErrRedirectRefused, fmt.Errorf("dial to another endpoint: %q", address))
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = g.resolver.LookupNetIP(ctx, "ip", g.host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fail(ports.ErrTimeout, err)
			}
			return nil, fail(ports.ErrServerUnreachable, err)
		}
	}
	if err := g.rules.CheckAll(g.host, addrs); err != nil {
		return nil, fail(ports.ErrAddressBlocked, fmt.Errorf("%w (resolved %v)", err, addrs))
	}
	d := &net.Dialer{Control: g.control, Timeout: g.timeout}
	var last error
	for _, a := range addrs {
		conn, err := g.connect(ctx, d, network, netip.AddrPortFrom(a.Unmap(), uint16(g.port)).String())
		if err == nil {
			return conn, nil
		}
		last = err
		var f *failure
		if errors.As(err, &f) || ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// control runs after the socket is created and before it connects: the
// address it is about to connect to is checked once more, whatever the
// resolver answered and whatever the dialer made of it.
func (g *guard) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fail(ports.ErrAddressBlocked, fmt.Errorf("unparsable dial address %q", address))
	}
	if ap.Port() != uint16(g.port) {
		return fail(ports.ErrAddressBlocked, fmt.Errorf("dial to port %d", ap.Port()))
	}
	if err := g.rules.Check(g.host, ap.Addr()); err != nil {
		return fail(ports.ErrAddressBlocked, fmt.Errorf("%w (connecting to %s)", err, ap.Addr()))
	}
	return nil
}

func (g *guard) sameHost(h string) bool {
	if h == g.host {
		return true
	}
	n, err := netpolicy.NormalizeHost(h)
	return err == nil && n == g.host
}

// sameOrigin reports whether u is on the configured origin: https, the
// configured host and port, no user info.
func (g *guard) sameOrigin(u *url.URL) bool {
	if u == nil || u.Scheme != "https" || u.User != nil || u.Opaque != "" {
		return false
	}
	if !g.sameHost(u.Hostname()) {
		return false
	}
	p := 443
	if s := u.Port(); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return false
		}
		p = n
	}
	return p == g.port
}

// failureOf maps a transport error to its failure. ctx is the request's
// own context (with the timeout), parent the caller's.
func (g *guard) failureOf(ctx, parent context.Context, err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || parent.Err() != nil {
		return fail(ports.ErrTimeout, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fail(ports.ErrTimeout, err)
	}
	return fail(ports.ErrServerUnreachable, err)
}

// guardedTransport enforces the origin, adds the credential, bounds each
// request in time and each response in size.
type guardedTransport struct {
	g    *guard
	base http.RoundTripper
}

func (t *guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := t.g
	parent := req.Context()
	if !g.sameOrigin(req.URL) || (req.Host != "" && req.Host != req.URL.Host) {
		if req.Body != nil {
			req.Body.Close()
		}
		f := fail(ports.ErrRedirectRefused, errors.New("request to another origin"))
		g.record(parent, f, true)
		return nil, f
	}
	op := recorderFrom(parent)
	if f := op.get(); f != nil && op.handshake.Load() {
		// The handshake already failed: no second protocol era.
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, f
	}
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" &&
		(op == nil || op.resumed.Add(1) > maxResumptions) {
		// The session stays usable: only this operation fails.
		f := fail(ports.ErrProtocol, fmt.Errorf("more than %d stream resumptions", maxResumptions))
		g.record(parent, f, false)
		return nil, f
	}
	var (
		ctx    context.Context
		cancel context.CancelFunc
		resp   *http.Response
		token  string // the access token of the last attempt
	)
	for attempt := 0; ; attempt++ {
		if g.bearer != nil {
			// The token first (from the cache, or its own requests to
			// the token URL), so that fetching it does not eat into this
			// request's timeout.
			var f *failure
			if attempt == 0 {
				token, f = g.bearer.token(parent)
			} else {
				token, f = g.bearer.refresh(parent, token)
			}
			if f != nil {
				if req.Body != nil {
					req.Body.Close()
				}
				g.record(parent, f, true)
				return nil, f
			}
		}
		ctx, cancel = context.WithTimeout(parent, g.timeout)
		out := req.Clone(ctx)
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				cancel()
				f := fail(ports.ErrProtocol, errors.New("request body cannot be sent again"))
				g.record(parent, f, false)
				return nil, f
			}
			out.Body = body
		}
		if name := g.cred.HeaderName(); name != "" {
			out.Header.Set(name, g.cred.HeaderValue())
		}
		if g.bearer != nil {
			out.Header.Set("Authorization", "Bearer "+token)
		}
		var err error
		resp, err = t.base.RoundTrip(out)
		if err == nil && ctx.Err() != nil {
			// The answer raced the deadline: giving up closes the connection,
			// which can make a server that never answered return an empty
			// response in the same instant. Past the deadline it is a timeout.
			resp.Body.Close()
			resp, err = nil, context.Cause(ctx)
		}
		if err != nil {
			f := g.failureOf(ctx, parent, err)
			cancel()
			g.record(parent, f, parent.Err() == nil)
			return nil, f
		}
		if resp.StatusCode == http.StatusUnauthorized && attempt == 0 && g.bearer != nil && op != nil &&
			op.refreshed.CompareAndSwap(false, true) && (req.Body == nil || req.GetBody != nil) {
			// The access token was refused (revoked, or expired early):
			// one new token per operation, and the request once more.
			resp.Body.Close()
			cancel()
			g.log.Debug().Msg("mcp server refused the access token: one refresh")
			continue
		}
		break
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Body.Close()
		cancel()
		f := fail(ports.ErrRedirectRefused, fmt.Errorf("status %d", resp.StatusCode))
		g.record(parent, f, true)
		return nil, f
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		// A wrong or expired credential, whatever the body says.
		g.record(parent, fail(ports.ErrServerUnauthorized, fmt.Errorf("status %d", resp.StatusCode)), false)
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		// The server is there but cannot serve; the SDK reports the
		// status in its own words, this gives it the code.
		g.record(parent, fail(ports.ErrServerUnreachable, fmt.Errorf("status %d", resp.StatusCode)), false)
	case resp.StatusCode >= 400 && !fallbackStatus(resp.StatusCode) && op != nil && op.handshake.Load():
		// Not an answer that the method or the version is unknown:
		// the handshake ends here, without the other era.
		g.record(parent, fail(ports.ErrProtocol, fmt.Errorf("status %d", resp.StatusCode)), false)
	}
	read := new(atomic.Int64)
	if op != nil {
		read = &op.read // every response of the operation, resumed streams included
	}
	resp.Body = &cappedBody{rc: resp.Body, limit: g.cap, n: read, cancel: cancel, ctx: ctx, parent: parent, g: g}
	return resp, nil
}

// fallbackStatus reports an HTTP status by which a server says it does not
// know a method or a protocol version; only after one of these (or a
// JSON-RPC error) may the handshake try the other era.
func fallbackStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

// cappedBody fails a response body as soon as the bytes read by its
// operation exceed the cap, while it streams, and ends the request's
// timeout when closed.
type cappedBody struct {
	rc     io.ReadCloser
	limit  int64
	n      *atomic.Int64 // shared by the responses of one operation
	err    error
	cancel context.CancelFunc
	ctx    context.Context
	parent context.Context
	g      *guard
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	room := max(b.limit+1-b.n.Load(), 1) // 1: the operation's cap is already reached
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.rc.Read(p)
	if total := b.n.Add(int64(n)); total > b.limit {
		f := fail(ports.ErrResponseTooLarge, fmt.Errorf("responses exceed %d bytes", b.limit))
		b.err = f
		b.g.record(b.parent, f, true)
		b.cancel() // abort the transfer now, not when the caller closes
		return max(0, n-int(total-b.limit)), f
	}
	if err == io.EOF && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		// Go's HTTP/1.1 client may end the body of a request whose
		// deadline passed with a clean EOF; a cut-off answer is a
		// timeout, not a short, valid one.
		err = b.ctx.Err()
	}
	if err != nil && err != io.EOF {
		// A caller that gave up (the call is answered, or cancelled) is
		// not the server's failure: it does not mark the session.
		f := b.g.failureOf(b.ctx, b.parent, err)
		b.err = f
		b.g.record(b.parent, f, b.parent.Err() == nil)
		return n, f
	}
	return n, err
}

func (b *cappedBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}
