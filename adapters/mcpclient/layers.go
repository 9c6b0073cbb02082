package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/codelotse/codelotse/ports"
)

// The layers of the guarded transport, in the order of chain (chain.go).
// Each takes the request, calls next at most as often as its job says,
// and gives back the answer or a *failure. A request's context carries
// the operation's recorder (withRecorder), if any: what a layer counts or
// remembers per operation lives there.

// closeBody closes the body of a request that is not sent: a round
// tripper closes it even when it fails.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// originLock keeps the session on its one origin: a request to another
// (scheme, host, port, user info, or a Host header naming another) is
// refused before any other layer sees it, and an answer that redirects
// (any 3xx, to another path of the same origin too) is refused rather
// than handed to a client that could follow it. Both mark the session.
func (g *guard) originLock(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if !g.sameOrigin(req.URL) || (req.Host != "" && req.Host != req.URL.Host) {
		closeBody(req)
		f := fail(ports.ErrRedirectRefused, errors.New("request to another origin"))
		g.record(req.Context(), f, true)
		return nil, f
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		resp.Body.Close()
		f := fail(ports.ErrRedirectRefused, fmt.Errorf("status %d", resp.StatusCode))
		g.record(req.Context(), f, true)
		return nil, f
	}
	return resp, nil
}

// handshakeOnce ends the handshake at its first failure: once a request
// of the operation that opens the session failed (a timeout, a dropped
// connection, a status that is no "unknown method or version"), no
// request follows, so the go-sdk cannot try the other protocol era.
func (g *guard) handshakeOnce(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	op := recorderFrom(req.Context())
	if f := op.get(); f != nil && op.handshake.Load() {
		closeBody(req)
		return nil, f
	}
	return next.RoundTrip(req)
}

// resumptionBound lets an operation resume its event stream (a GET with
// Last-Event-ID) at most maxResumptions times; a request without an
// operation never. Only the operation fails: the session stays usable.
func (g *guard) resumptionBound(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "" {
		if op := recorderFrom(req.Context()); op == nil || op.resumed.Add(1) > maxResumptions {
			f := fail(ports.ErrProtocol, fmt.Errorf("more than %d stream resumptions", maxResumptions))
			g.record(req.Context(), f, false)
			return nil, f
		}
	}
	return next.RoundTrip(req)
}

// classifyStatus gives the operation the code of the status of its final
// answer (after the credential layer's one retry). The answer still goes
// to the SDK, which reports the status in its own words; this gives it the
// code. It marks the operation only, never the session.
func (g *guard) classifyStatus(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	ctx := req.Context()
	op := recorderFrom(ctx)
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		// A wrong or expired credential, whatever the body says.
		g.record(ctx, fail(ports.ErrServerUnauthorized, fmt.Errorf("status %d", code)), false)
	case code == http.StatusTooManyRequests:
		// The server asks us to slow down, perhaps saying for how long.
		g.record(ctx, fail(&ports.RateLimited{RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now())}, fmt.Errorf("status %d", code)), false)
	case code >= 500:
		// The server is there but cannot serve.
		g.record(ctx, fail(ports.ErrServerUnreachable, fmt.Errorf("status %d", code)), false)
	case code >= 400 && !fallbackStatus(code) && op != nil && op.handshake.Load():
		// Not an answer that the method or the version is unknown:
		// the handshake ends here, without the other era.
		g.record(ctx, fail(ports.ErrProtocol, fmt.Errorf("status %d", code)), false)
	}
	return resp, nil
}

// maxRetryAfter caps the wait a server's Retry-After may ask for.
const maxRetryAfter = 10 * time.Minute

// retryAfter reads a Retry-After header (RFC 9110: delay-seconds or an
// HTTP date) as a wait from now, at most maxRetryAfter; zero when it is
// absent, unreadable or in the past.
func retryAfter(v string, now time.Time) time.Duration {
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		d = time.Duration(min(n, int(maxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), maxRetryAfter)
}

// fallbackStatus reports an HTTP status by which a server says it does not
// know a method or a protocol version; only after one of these (or a
// JSON-RPC error) may the handshake try the other era.
func fallbackStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusNotFound || code == http.StatusMethodNotAllowed
}

// tokenSource gives the requests of an OAuth session their access token
// (*bearerSource; tests use their own).
type tokenSource interface {
	// token is the current access token (cached, or fetched).
	token(ctx context.Context) (string, *failure)
	// refresh drops stale, the token a 401 came back for, and fetches anew.
	refresh(ctx context.Context, stale string) (string, *failure)
}

// credential adds the server's credential to a copy of the request: the
// static header (bearer or named header), or for the OAuth kinds the
// access token. The token is fetched under the caller's context, outside
// the request's deadline (the deadline layer is inside this one), so that
// fetching it does not eat into the request's timeout. After a 401 the
// OAuth kinds get one new token per operation and send the request once
// more, never a second time.
func (g *guard) credential(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	if g.bearer == nil {
		return next.RoundTrip(g.authorized(req, ""))
	}
	parent := req.Context()
	token, f := g.bearer.token(parent)
	for attempt := 0; ; attempt++ {
		if f != nil {
			closeBody(req)
			g.record(parent, f, true)
			return nil, f
		}
		out := g.authorized(req, token)
		if attempt > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				f := fail(ports.ErrProtocol, errors.New("request body cannot be sent again"))
				g.record(parent, f, false)
				return nil, f
			}
			out.Body = body
		}
		resp, err := next.RoundTrip(out)
		if err != nil || attempt > 0 || !mayRefresh(req, resp) {
			return resp, err
		}
		// The access token was refused (revoked, or expired early):
		// one new token per operation, and the request once more.
		resp.Body.Close()
		g.log.Debug().Msg("mcp server refused the access token: one refresh")
		token, f = g.bearer.refresh(parent, token)
	}
}

// authorized returns req as it leaves: a copy with the credential's
// header and, for OAuth, the access token; req itself as it is when there
// is none. The caller's request is never changed.
func (g *guard) authorized(req *http.Request, token string) *http.Request {
	name := g.cred.HeaderName()
	if name == "" && g.bearer == nil {
		return req
	}
	out := req.Clone(req.Context())
	if name != "" {
		out.Header.Set(name, g.cred.HeaderValue())
	}
	if g.bearer != nil {
		out.Header.Set("Authorization", "Bearer "+token)
	}
	return out
}

// mayRefresh reports whether a 401 may get a new token: the first of its
// operation (a request outside an operation gets none), and only for a
// request whose body can be sent again. The operation's one refresh is
// spent by the first 401, even when its body cannot be sent again.
func mayRefresh(req *http.Request, resp *http.Response) bool {
	op := recorderFrom(req.Context())
	return resp.StatusCode == http.StatusUnauthorized && op != nil &&
		op.refreshed.CompareAndSwap(false, true) && (req.Body == nil || req.GetBody != nil)
}

// deadline bounds each request that is sent, its body included, by
// Options.Timeout, a fresh one for each (a retry too), within the
// caller's context. An answer that comes as the deadline passes is a
// timeout; a failure of the request or of reading its body gets its code
// (failureOf) and, unless the caller gave up, marks the session.
func (g *guard) deadline(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	parent := req.Context()
	ctx, cancel := context.WithTimeout(parent, g.timeout)
	resp, err := next.RoundTrip(req.WithContext(ctx))
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
	resp.Body = &deadlineBody{rc: resp.Body, cancel: cancel, ctx: ctx, parent: parent, g: g}
	return resp, nil
}

// deadlineBody reads a body within its request's deadline and ends the
// deadline when closed.
type deadlineBody struct {
	rc     io.ReadCloser
	err    error
	cancel context.CancelFunc
	ctx    context.Context // the request's, with the timeout
	parent context.Context // the caller's
	g      *guard
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if err == io.EOF && errors.Is(b.ctx.Err(), context.DeadlineExceeded) {
		// Go's HTTP/1.1 client may end the body of a request whose
		// deadline passed with a clean EOF; a cut-off answer is a
		// timeout, not a short, valid one.
		err = b.ctx.Err()
	}
	if err != nil && err != io.EOF {
		// A caller that gave up (the call is answered, or cancelled) is
		// not the server's failure: it does not mark the session. The
		// cap's failure was recorded where it arose.
		f := b.g.failureOf(b.ctx, b.parent, err)
		b.err = f
		if !errors.Is(f, ports.ErrResponseTooLarge) {
			b.g.record(b.parent, f, b.parent.Err() == nil)
		}
		return n, f
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	err := b.rc.Close()
	b.cancel()
	return err
}

// byteCap caps what the server sends: the bodies of an operation's
// answers together (resumed streams included; each answer on its own
// outside an operation) may stream at most the session's cap. It wraps
// the body as the transport returns it, so no other layer and nothing
// above reads a byte past the cap.
func (g *guard) byteCap(next http.RoundTripper, req *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	read := new(atomic.Int64)
	if op := recorderFrom(req.Context()); op != nil {
		read = &op.read // every response of the operation, resumed streams included
	}
	resp.Body = &cappedBody{rc: resp.Body, limit: g.cap, n: read, parent: req.Context(), g: g}
	return resp, nil
}

// cappedBody fails as soon as the bytes read by its operation exceed the
// cap, while it streams, and then drops the transfer at once.
type cappedBody struct {
	rc     io.ReadCloser
	limit  int64
	n      *atomic.Int64 // shared by the responses of one operation
	err    error
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
		b.rc.Close() // abort the transfer now, not when the caller closes
		return max(0, n-int(total-b.limit)), f
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
