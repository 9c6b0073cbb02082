package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
)

// Each layer of the guarded transport on its own, over fakeServer. The
// whole chain against real servers is in guard_test.go, resume_test.go,
// oauth_test.go and session_test.go; its order in chain_test.go.

// layerGuard is a guard for https://mcp.test:8443/mcp.
func layerGuard(t *testing.T, cred server.Credential, timeout time.Duration, responseCap int64) *guard {
	t.Helper()
	return newGuard(Options{Timeout: timeout}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test:8443/mcp"), Credential: cred}, responseCap)
}

// only is the one layer step around next.
func only(step func(http.RoundTripper, *http.Request) (*http.Response, error), next http.RoundTripper) http.RoundTripper {
	return assemble(next, []layer{{"only", step}})
}

const layerURL = "https://mcp.test:8443/mcp"

// trackedBody is a body that knows whether it was closed.
type trackedBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return nil }

func newRequest(t *testing.T, ctx context.Context, method, url, body string) (*http.Request, *trackedBody) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		return req, nil
	}
	tb := &trackedBody{Reader: strings.NewReader(body)}
	req.Body = tb
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	return req, tb
}

// fakeServer answers in the round tripper: its statuses in turn (the last
// one repeats), each with body, keeping what was sent.
type fakeServer struct {
	statuses []int
	body     string

	mu     sync.Mutex
	sent   []*http.Request
	bodies []string
	resps  []*trackedBody
}

func (s *fakeServer) RoundTrip(r *http.Request) (*http.Response, error) {
	var b []byte
	if r.Body != nil {
		b, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, r)
	s.bodies = append(s.bodies, string(b))
	code := 200
	if len(s.statuses) > 0 {
		code = s.statuses[min(len(s.sent), len(s.statuses))-1]
	}
	rb := &trackedBody{Reader: strings.NewReader(s.body)}
	s.resps = append(s.resps, rb)
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: rb, Request: r}, nil
}

func (s *fakeServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// wantFailure fails the test unless err is a failure with code.
func wantFailure(t *testing.T, err, code error) {
	t.Helper()
	var f *failure
	if !errors.As(err, &f) || f.code != code {
		t.Fatalf("err = %v, want a %v failure", err, code)
	}
}

func TestOriginLayerKeepsTheSessionOnItsOrigin(t *testing.T) {
	for _, tt := range []struct{ url, host string }{
		{"https://mcp.test:443/mcp", ""},
		{"https://mcp.test/mcp", ""},
		{"http://mcp.test:8443/mcp", ""},
		{"https://evil.test:8443/mcp", ""},
		{"https://mcp.test.evil.test:8443/mcp", ""},
		{"https://user@mcp.test:8443/mcp", ""},
		{layerURL, "evil.test:8443"},
	} {
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		srv := &fakeServer{}
		ctx, op := withRecorder(context.Background())
		req, body := newRequest(t, ctx, http.MethodPost, tt.url, "{}")
		req.Host = tt.host
		_, err := only(g.originLock, srv).RoundTrip(req)
		wantFailure(t, err, ports.ErrRedirectRefused)
		if srv.count() != 0 || !body.closed.Load() {
			t.Errorf("%s (Host %q): sent %d, body closed %v; want nothing sent, the body closed", tt.url, tt.host, srv.count(), body.closed.Load())
		}
		if op.get() == nil || g.session.get() == nil {
			t.Errorf("%s (Host %q): operation %v, session %v; want both marked", tt.url, tt.host, op.get(), g.session.get())
		}
	}

	g := layerGuard(t, server.NoCredential(), time.Second, 1024)
	srv := &fakeServer{}
	req, _ := newRequest(t, context.Background(), http.MethodPost, "https://MCP.test:8443/mcp", "{}")
	resp, err := only(g.originLock, srv).RoundTrip(req)
	if err != nil || resp.StatusCode != 200 || srv.count() != 1 {
		t.Fatalf("the pinned origin: %v, %v after %d requests", resp, err, srv.count())
	}
	resp.Body.Close()
	if g.session.get() != nil {
		t.Errorf("the session is marked: %v", g.session.get())
	}

	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusNotModified, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		srv := &fakeServer{statuses: []int{code}}
		req, _ := newRequest(t, context.Background(), http.MethodPost, layerURL, "{}")
		_, err := only(g.originLock, srv).RoundTrip(req)
		wantFailure(t, err, ports.ErrRedirectRefused)
		if !srv.resps[0].closed.Load() || g.session.get() == nil {
			t.Errorf("status %d: answer closed %v, session %v; want closed and marked", code, srv.resps[0].closed.Load(), g.session.get())
		}
	}
}

func TestHandshakeLayerEndsTheHandshakeAtItsFirstFailure(t *testing.T) {
	g := layerGuard(t, server.NoCredential(), time.Second, 1024)
	refused := fail(ports.ErrTimeout, errors.New("earlier"))
	for _, tt := range []struct {
		name      string
		handshake bool
		failed    bool
		sent      bool
	}{
		{"a failed handshake", true, true, false},
		{"a handshake without failure", true, false, true},
		{"a failed operation that is no handshake", false, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, op := withRecorder(context.Background())
			op.handshake.Store(tt.handshake)
			if tt.failed {
				op.record(refused)
			}
			srv := &fakeServer{}
			req, body := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
			resp, err := only(g.handshakeOnce, srv).RoundTrip(req)
			if !tt.sent {
				if !errors.Is(err, refused) || srv.count() != 0 || !body.closed.Load() {
					t.Errorf("= %v after %d requests, body closed %v; want the earlier failure, nothing sent", err, srv.count(), body.closed.Load())
				}
				return
			}
			if err != nil || srv.count() != 1 {
				t.Fatalf("= %v after %d requests, want it sent", err, srv.count())
			}
			resp.Body.Close()
		})
	}
	srv := &fakeServer{}
	req, _ := newRequest(t, context.Background(), http.MethodPost, layerURL, "{}")
	if _, err := only(g.handshakeOnce, srv).RoundTrip(req); err != nil || srv.count() != 1 {
		t.Errorf("outside an operation: %v after %d requests, want it sent", err, srv.count())
	}
}

func TestResumptionLayerBoundsTheResumptionsOfAnOperation(t *testing.T) {
	g := layerGuard(t, server.NoCredential(), time.Second, 1024)
	srv := &fakeServer{}
	rt := only(g.resumptionBound, srv)
	resume := func(ctx context.Context, method, lastEventID string) error {
		req, _ := newRequest(t, ctx, method, layerURL, "")
		if lastEventID != "" {
			req.Header.Set("Last-Event-ID", lastEventID)
		}
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		return err
	}
	wantFailure(t, resume(context.Background(), http.MethodGet, "e1"), ports.ErrProtocol)
	if srv.count() != 0 {
		t.Fatalf("a resumption outside an operation was sent")
	}

	ctx, op := withRecorder(context.Background())
	for i := range maxResumptions {
		if err := resume(ctx, http.MethodGet, fmt.Sprintf("e%d", i+1)); err != nil {
			t.Fatalf("resumption %d: %v", i+1, err)
		}
	}
	// Neither a GET without Last-Event-ID nor a POST counts.
	if err := resume(ctx, http.MethodGet, ""); err != nil {
		t.Fatal(err)
	}
	if err := resume(ctx, http.MethodPost, "e9"); err != nil {
		t.Fatal(err)
	}
	wantFailure(t, resume(ctx, http.MethodGet, "e3"), ports.ErrProtocol)
	if n := srv.count(); n != maxResumptions+2 {
		t.Errorf("%d requests sent, want %d", n, maxResumptions+2)
	}
	if f := op.get(); f == nil || f.code != ports.ErrProtocol || g.session.get() != nil {
		t.Errorf("operation %v, session %v; want the operation failed, the session usable", f, g.session.get())
	}
}

func TestStatusLayerGivesTheOperationTheCodeOfTheStatus(t *testing.T) {
	for _, tt := range []struct {
		status    int
		handshake bool
		want      error
	}{
		{200, false, nil}, {202, true, nil},
		{401, false, ports.ErrServerUnauthorized}, {403, true, ports.ErrServerUnauthorized},
		{429, false, ports.ErrRateLimited}, {500, false, ports.ErrServerUnreachable}, {503, true, ports.ErrServerUnreachable},
		{422, false, nil}, {422, true, ports.ErrProtocol}, {406, true, ports.ErrProtocol},
		{400, true, nil}, {404, true, nil}, {405, true, nil},
	} {
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		ctx, op := withRecorder(context.Background())
		op.handshake.Store(tt.handshake)
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := only(g.classifyStatus, &fakeServer{statuses: []int{tt.status}}).RoundTrip(req)
		if err != nil || resp.StatusCode != tt.status {
			t.Fatalf("status %d: %v, %v; want the answer itself", tt.status, resp, err)
		}
		resp.Body.Close()
		var got error
		if f := op.get(); f != nil {
			got = f.code
		}
		if !errors.Is(got, tt.want) || (got == nil) != (tt.want == nil) || g.session.get() != nil {
			t.Errorf("status %d (handshake %v): operation %v, session %v; want %v, the session unmarked", tt.status, tt.handshake, got, g.session.get(), tt.want)
		}
	}
}

// fakeTokens is a tokenSource: tok-0, then tok-1 after the first
// refresh, and so on.
type fakeTokens struct {
	mu         sync.Mutex
	n          int
	fail       *failure // token fails
	failAgain  *failure // refresh fails
	ctxs       []context.Context
	stale      []string
	refreshes  int
	tokenCalls int
}

func (f *fakeTokens) token(ctx context.Context) (string, *failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenCalls++
	f.ctxs = append(f.ctxs, ctx)
	if f.fail != nil {
		return "", f.fail
	}
	return fmt.Sprintf("tok-%d", f.n), nil
}

func (f *fakeTokens) refresh(ctx context.Context, stale string) (string, *failure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refreshes++
	f.ctxs = append(f.ctxs, ctx)
	f.stale = append(f.stale, stale)
	if f.failAgain != nil {
		return "", f.failAgain
	}
	f.n++
	return fmt.Sprintf("tok-%d", f.n), nil
}

func TestCredentialLayerAddsTheCredentialAndRefreshesOnce(t *testing.T) {
	t.Run("static credentials on a copy of the request", func(t *testing.T) {
		bearer, _ := server.NewBearer("tok-static-abcdef")
		header, _ := server.NewHeader("x-api-key", "secret-value-1234")
		for _, cred := range []server.Credential{bearer, header} {
			g := layerGuard(t, cred, time.Second, 1024)
			srv := &fakeServer{statuses: []int{401}}
			ctx, op := withRecorder(context.Background())
			req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
			resp, err := only(g.credential, srv).RoundTrip(req)
			if err != nil || resp.StatusCode != 401 {
				t.Fatalf("%s: %v, %v; want the 401 itself, no retry", cred.HeaderName(), resp, err)
			}
			if srv.count() != 1 || srv.sent[0].Header.Get(cred.HeaderName()) != cred.HeaderValue() {
				t.Errorf("%s: sent %d, header %q", cred.HeaderName(), srv.count(), srv.sent[0].Header.Get(cred.HeaderName()))
			}
			if req.Header.Get(cred.HeaderName()) != "" || op.refreshed.Load() {
				t.Errorf("%s: the caller's request was changed, or a refresh spent", cred.HeaderName())
			}
		}
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		srv := &fakeServer{}
		req, _ := newRequest(t, context.Background(), http.MethodPost, layerURL, "{}")
		if _, err := only(g.credential, srv).RoundTrip(req); err != nil || srv.sent[0] != req {
			t.Errorf("without a credential: %v; want the request sent as it is", err)
		}
	})

	oauth := func(t *testing.T, statuses ...int) (*guard, *fakeTokens, *fakeServer, http.RoundTripper) {
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		tokens := &fakeTokens{}
		g.bearer = tokens
		srv := &fakeServer{statuses: statuses}
		return g, tokens, srv, only(g.credential, srv)
	}
	sentTokens := func(srv *fakeServer) []string {
		var out []string
		for _, r := range srv.sent {
			out = append(out, r.Header.Get("Authorization"))
		}
		return out
	}

	t.Run("a 401 gets one new token and the request once more, body included", func(t *testing.T) {
		_, tokens, srv, rt := oauth(t, 401, 200, 401, 401)
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, `{"jsonrpc":"2.0"}`)
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("= %v, %v; want the retry's 200", resp, err)
		}
		if got := sentTokens(srv); fmt.Sprint(got) != "[Bearer tok-0 Bearer tok-1]" || fmt.Sprint(srv.bodies) != `[{"jsonrpc":"2.0"} {"jsonrpc":"2.0"}]` {
			t.Errorf("sent %q with bodies %q", got, srv.bodies)
		}
		if !srv.resps[0].closed.Load() || fmt.Sprint(tokens.stale) != "[tok-0]" {
			t.Errorf("refused answer closed %v, stale tokens %v", srv.resps[0].closed.Load(), tokens.stale)
		}
		// The operation's next 401 (the server refuses tok-1 too) gets
		// no new token: at most one per operation.
		req, _ = newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err = rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 401 || tokens.refreshes != 1 || srv.count() != 3 || !op.refreshed.Load() {
			t.Errorf("a second 401: %v, %v after %d refreshes and %d requests; want the 401, no refresh", resp, err, tokens.refreshes, srv.count())
		}
	})

	t.Run("a 401 on a retry is the answer", func(t *testing.T) {
		_, tokens, srv, rt := oauth(t, 401)
		ctx, _ := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := rt.RoundTrip(req)
		if err != nil || resp.StatusCode != 401 || tokens.refreshes != 1 || srv.count() != 2 {
			t.Errorf("= %v, %v after %d refreshes and %d requests; want the second 401, one refresh", resp, err, tokens.refreshes, srv.count())
		}
	})

	t.Run("no refresh outside an operation, or for a body that cannot be sent again", func(t *testing.T) {
		_, tokens, srv, rt := oauth(t, 401)
		req, _ := newRequest(t, context.Background(), http.MethodPost, layerURL, "{}")
		if resp, err := rt.RoundTrip(req); err != nil || resp.StatusCode != 401 {
			t.Fatalf("outside an operation: %v, %v", resp, err)
		}
		ctx, op := withRecorder(context.Background())
		req, _ = newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		req.GetBody = nil
		if resp, err := rt.RoundTrip(req); err != nil || resp.StatusCode != 401 {
			t.Fatalf("a body without GetBody: %v, %v", resp, err)
		}
		if tokens.refreshes != 0 || srv.count() != 2 || !op.refreshed.Load() {
			t.Errorf("%d refreshes, %d requests, refresh spent %v; want none, 2, spent", tokens.refreshes, srv.count(), op.refreshed.Load())
		}
	})

	t.Run("a body that fails to come again", func(t *testing.T) {
		g, _, srv, rt := oauth(t, 401, 200)
		ctx, _ := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		req.GetBody = func() (io.ReadCloser, error) { return nil, errors.New("gone") }
		_, err := rt.RoundTrip(req)
		wantFailure(t, err, ports.ErrProtocol)
		if srv.count() != 1 || g.session.get() != nil {
			t.Errorf("%d requests, session %v; want 1, the session unmarked", srv.count(), g.session.get())
		}
	})

	t.Run("no token, nothing sent", func(t *testing.T) {
		g, tokens, srv, rt := oauth(t, 200)
		tokens.fail = fail(ports.ErrServerUnauthorized, errors.New("refused"))
		ctx, _ := withRecorder(context.Background())
		req, body := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		_, err := rt.RoundTrip(req)
		wantFailure(t, err, ports.ErrServerUnauthorized)
		if srv.count() != 0 || !body.closed.Load() || g.session.get() == nil {
			t.Errorf("%d requests, body closed %v, session %v; want nothing sent, closed, marked", srv.count(), body.closed.Load(), g.session.get())
		}

		g, tokens, srv, rt = oauth(t, 401, 200)
		tokens.failAgain = fail(ports.ErrServerUnreachable, errors.New("token endpoint down"))
		ctx, _ = withRecorder(context.Background())
		req, _ = newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		_, err = rt.RoundTrip(req)
		wantFailure(t, err, ports.ErrServerUnreachable)
		if srv.count() != 1 || g.session.get() == nil {
			t.Errorf("failed refresh: %d requests, session %v; want 1, marked", srv.count(), g.session.get())
		}
	})
}

// netTimeout is a net.Error that timed out.
type netTimeout struct{}

func (netTimeout) Error() string   { return "i/o timeout" }
func (netTimeout) Timeout() bool   { return true }
func (netTimeout) Temporary() bool { return true }

var _ net.Error = netTimeout{}

func TestDeadlineLayerBoundsEachRequestAndItsBody(t *testing.T) {
	t.Run("the request is sent with the timeout", func(t *testing.T) {
		g := layerGuard(t, server.NoCredential(), time.Minute, 1024)
		srv := &fakeServer{body: "{}"}
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := only(g.deadline, srv).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		sent := srv.sent[0].Context()
		if d, ok := sent.Deadline(); !ok || time.Until(d) > time.Minute || time.Until(d) < 50*time.Second {
			t.Errorf("deadline %v, %v; want in a minute", d, ok)
		}
		if recorderFrom(sent) != op {
			t.Error("the operation's recorder is lost")
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "{}" {
			t.Errorf("body %q, %v", b, err)
		}
		resp.Body.Close()
		if sent.Err() == nil || !srv.resps[0].closed.Load() {
			t.Error("closing the body does not end the request's deadline")
		}
	})

	t.Run("an answer after the deadline", func(t *testing.T) {
		g := layerGuard(t, server.NoCredential(), 20*time.Millisecond, 1024)
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		var late *trackedBody
		_, err := only(g.deadline, roundTripFunc(func(r *http.Request) (*http.Response, error) {
			waitDone(r.Context())
			late = &trackedBody{Reader: strings.NewReader("{}")}
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: late}, nil
		})).RoundTrip(req)
		wantFailure(t, err, ports.ErrTimeout)
		if !late.closed.Load() || op.get() == nil || g.session.get() == nil {
			t.Errorf("late answer closed %v, operation %v, session %v", late.closed.Load(), op.get(), g.session.get())
		}
	})

	t.Run("failures get their codes", func(t *testing.T) {
		blocked := fail(ports.ErrAddressBlocked, errors.New("dial"))
		for _, tt := range []struct {
			name   string
			err    error
			cancel bool
			want   error
			sticky bool
		}{
			{"a refused connection", errors.New("connection refused"), false, ports.ErrServerUnreachable, true},
			{"a network timeout", netTimeout{}, false, ports.ErrTimeout, true},
			{"the dial's own failure", blocked, false, ports.ErrAddressBlocked, true},
			{"a caller that gave up", context.Canceled, true, ports.ErrTimeout, false},
		} {
			g := layerGuard(t, server.NoCredential(), time.Second, 1024)
			parent, cancel := context.WithCancel(context.Background())
			ctx, op := withRecorder(parent)
			if tt.cancel {
				cancel()
			}
			req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
			_, err := only(g.deadline, roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, tt.err })).RoundTrip(req)
			cancel()
			wantFailure(t, err, tt.want)
			if f := op.get(); f == nil || f.code != tt.want || (g.session.get() != nil) != tt.sticky {
				t.Errorf("%s: operation %v, session %v; want %v, session marked %v", tt.name, f, g.session.get(), tt.want, tt.sticky)
			}
		}
	})

	t.Run("a body cut off by the deadline is a timeout", func(t *testing.T) {
		g := layerGuard(t, server.NoCredential(), 20*time.Millisecond, 1024)
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := only(g.deadline, roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(readerFunc(func([]byte) (int, error) {
				waitDone(r.Context())
				return 0, io.EOF // a clean end, as Go's HTTP/1.1 client may give
			}))}, nil
		})).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		wantFailure(t, err, ports.ErrTimeout)
		if _, again := resp.Body.Read(make([]byte, 1)); again != err || op.get() == nil || g.session.get() == nil {
			t.Errorf("read again: %v; operation %v, session %v", again, op.get(), g.session.get())
		}
	})

	t.Run("a body that breaks", func(t *testing.T) {
		g := layerGuard(t, server.NoCredential(), time.Second, 1024)
		ctx, op := withRecorder(context.Background())
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, _ := only(g.deadline, roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(io.MultiReader(strings.NewReader("{"), readerFunc(func([]byte) (int, error) {
				return 0, errors.New("connection reset")
			})))}, nil
		})).RoundTrip(req)
		defer resp.Body.Close()
		_, err := io.ReadAll(resp.Body)
		wantFailure(t, err, ports.ErrServerUnreachable)
		if op.get() == nil || g.session.get() == nil {
			t.Errorf("operation %v, session %v; want both marked", op.get(), g.session.get())
		}
	})
}

// waitDone waits for ctx to end, or five seconds: without a deadline
// the test fails instead of hanging.
func waitDone(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
	}
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestCapLayerCapsWhatTheOperationReads(t *testing.T) {
	read := func(t *testing.T, rt http.RoundTripper, ctx context.Context) (int, error) {
		t.Helper()
		req, _ := newRequest(t, ctx, http.MethodPost, layerURL, "{}")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return len(b), err
	}

	t.Run("one answer", func(t *testing.T) {
		for _, size := range []int{100, 101, 5000} {
			g := layerGuard(t, server.NoCredential(), time.Second, 100)
			srv := &fakeServer{body: strings.Repeat("x", size)}
			ctx, op := withRecorder(context.Background())
			n, err := read(t, only(g.byteCap, srv), ctx)
			if size <= 100 {
				if err != nil || n != size || g.session.get() != nil {
					t.Errorf("%d bytes: read %d, %v", size, n, err)
				}
				continue
			}
			wantFailure(t, err, ports.ErrResponseTooLarge)
			if n != 100 || !srv.resps[0].closed.Load() || op.get() == nil || g.session.get() == nil {
				t.Errorf("%d bytes: read %d, transfer dropped %v, operation %v, session %v; want 100, dropped, both marked", size, n, srv.resps[0].closed.Load(), op.get(), g.session.get())
			}
		}
	})

	t.Run("the answers of an operation together", func(t *testing.T) {
		g := layerGuard(t, server.NoCredential(), time.Second, 100)
		srv := &fakeServer{body: strings.Repeat("x", 60)}
		rt := only(g.byteCap, srv)
		ctx, _ := withRecorder(context.Background())
		if n, err := read(t, rt, ctx); err != nil || n != 60 {
			t.Fatalf("the first answer: %d, %v", n, err)
		}
		n, err := read(t, rt, ctx)
		wantFailure(t, err, ports.ErrResponseTooLarge)
		if n != 40 {
			t.Errorf("the second answer: read %d, want the 40 left", n)
		}
		// Outside an operation each answer has the cap to itself.
		for range 3 {
			if n, err := read(t, only(g.byteCap, srv), context.Background()); err != nil || n != 60 {
				t.Errorf("outside an operation: %d, %v", n, err)
			}
		}
	})
}
