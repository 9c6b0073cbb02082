package mcpclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
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
	bearer tokenSource
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
		Transport: chain(g, tr),
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			// Unreachable while the origin layer refuses every 3xx; kept so
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
