package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
	"github.com/codelotse/codelotse/domain/limits"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

// Each of these tests of the transport and OAuth controls fails when its
// control is removed.

// tokenServer is an OAuth token endpoint (/token) and an MCP server
// (/mcp) on one origin. Tokens it issues are valid until it revokes
// them; a tools/call answers with an event stream that closes before the
// result and revokes every token, so the resumption's GET gets a 401
// unless a new token was fetched.
type tokenServer struct {
	raw       *rawServer
	expiresIn int

	mu     sync.Mutex
	issued int
	valid  map[string]bool
	callID json.RawMessage
}

func newTokenServer(expiresIn int) *tokenServer {
	s := &tokenServer{raw: newRawServer(), expiresIn: expiresIn, valid: map[string]bool{}}
	s.raw.toolsCall = func(w http.ResponseWriter, r *http.Request, id json.RawMessage) {
		s.mu.Lock()
		s.callID = id
		clear(s.valid) // every token issued so far is refused from now on
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: e1\nretry: 10\ndata: \n\n")
	}
	return s
}

func (s *tokenServer) tokens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.issued
}

func (s *tokenServer) revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.valid)
}

func (s *tokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/token" {
		s.mu.Lock()
		s.issued++
		tok := fmt.Sprintf("tok-%d", s.issued)
		s.valid[tok] = true
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, tok, s.expiresIn)
		return
	}
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") == "" {
		w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
		return
	}
	s.mu.Lock()
	ok, id := s.valid[bearerOf(r.Header.Get("Authorization"))], s.callID
	s.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"resumed\"}]}}\n\n", id)
		return
	}
	s.raw.ServeHTTP(w, r)
}

func (s *tokenServer) target(t *testing.T, ts *testServer) ports.MCPTarget {
	t.Helper()
	cred, err := server.NewOAuthClientCredentials(fmt.Sprintf("https://%s:%d/token", testHost, ts.port()), "client-1", "client-secret-1234", nil, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return ports.MCPTarget{ServerID: "srv-tokens", URL: ts.url(t), Credential: cred}
}

// TestOneNewTokenPerOperationWhatever401sFollow: a tools/call whose
// first request gets a 401 fetches one new token; when its resumption
// then gets a 401 too, the call fails server_unauthorized without a
// second new token (at most one per operation).
func TestOneNewTokenPerOperationWhatever401sFollow(t *testing.T) {
	srv := newTokenServer(3600)
	ts := startServer(t, srv)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
	s, err := c.OpenSession(context.Background(), srv.target(t, ts), limits.ReviewResponseCap)
	if err != nil {
		t.Fatalf("OpenSession: %v", err)
	}
	defer s.Close()
	if n := srv.tokens(); n != 1 {
		t.Fatalf("%d token requests at open, want 1", n)
	}
	srv.revoke()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, "search", tooltest.Args(`{"query":"x"}`))
	if !errors.Is(err, ports.ErrServerUnauthorized) {
		t.Errorf("CallTool = %+v, %v; want server_unauthorized", res, err)
	}
	if n := srv.tokens() - 1; n != 1 {
		t.Errorf("the call fetched %d new tokens, want exactly 1 (one per operation)", n)
	}
}

// TestExpiresInIsCachedForADayAtMost: a token whose server says it lives
// two days is fetched anew after a day; within the day it is cached.
func TestExpiresInIsCachedForADayAtMost(t *testing.T) {
	a, err := parseTokenResponse(200, []byte(`{"access_token":"tok","token_type":"Bearer","expires_in":172800}`))
	if err != nil || a.expiresIn != 24*time.Hour {
		t.Errorf("expires_in two days: %v, %v; want one day", a.expiresIn, err)
	}
	srv := newTokenServer(2 * 24 * 60 * 60)
	ts := startServer(t, srv)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	open := func() {
		t.Helper()
		s, err := c.OpenSession(context.Background(), srv.target(t, ts), limits.DiscoveryResponseCap)
		if err != nil {
			t.Fatalf("OpenSession: %v", err)
		}
		s.Close()
	}
	open()
	mu.Lock()
	now = now.Add(23 * time.Hour)
	mu.Unlock()
	open()
	if n := srv.tokens(); n != 1 {
		t.Fatalf("%d token requests within the day, want 1 (cached)", n)
	}
	mu.Lock()
	now = now.Add(time.Hour)
	mu.Unlock()
	open()
	if n := srv.tokens(); n != 2 {
		t.Errorf("%d token requests after a day, want 2: a token is cached for a day at most", n)
	}
}

// TestAnAnswerAfterTheDeadlineIsATimeout: the transport itself, below
// the SDK: an answer that arrives once the request's deadline has passed
// is a timeout, not a response.
func TestAnAnswerAfterTheDeadlineIsATimeout(t *testing.T) {
	g := newGuard(Options{Timeout: 50 * time.Millisecond}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test/mcp")}, 1024)
	rt := chain(g, roundTripFunc(func(r *http.Request) (*http.Response, error) {
		<-r.Context().Done()
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("{}"))}, nil
	}))
	req, _ := http.NewRequest(http.MethodPost, "https://mcp.test/mcp", strings.NewReader("{}"))
	resp, err := rt.RoundTrip(req)
	if resp != nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ports.ErrTimeout) {
		t.Errorf("RoundTrip = %v, %v; want a timeout", resp, err)
	}
}

// TestARotatedRefreshTokenNeedsASaver: a refresh that rotates the
// refresh token, on a connection with nothing to save it with, fails
// server_unauthorized, and the new access token is never sent.
func TestARotatedRefreshTokenNeedsASaver(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	cred, _ := e.connect(t, oauthpeer.WebClientID, "web-secret")
	before := len(e.peer.TokenRequests())
	_, err := e.conn.Open(context.Background(), ports.MCPTarget{ServerID: "srv-nosaver", URL: e.mcpURL(t), Credential: cred}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.TokenRequests()) - before; n != 1 {
		t.Fatalf("%d token requests, want the one refresh (that rotated)", n)
	}
	if n := withBearer(e.peer.MCPRequests()); n != 0 {
		t.Errorf("the MCP server had %d requests with a token whose rotated refresh token was not saved", n)
	}
}

// TestTheCodeExchangeNamesTheResource: the authorization code is
// exchanged with RFC 8707's resource, the MCP server's URL, and the PKCE
// verifier (MC15: a token for this resource only).
func TestTheCodeExchangeNamesTheResource(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	e.connect(t, oauthpeer.WebClientID, "web-secret")
	var exchanges int
	for _, r := range e.peer.TokenRequests() {
		if r.Form.Get("grant_type") != "authorization_code" {
			continue
		}
		exchanges++
		if r.Form.Get("resource") != e.peer.MCPURL || r.Form.Get("code_verifier") == "" {
			t.Errorf("code exchange with resource %q, a verifier: %v; want resource %s and the verifier", r.Form.Get("resource"), r.Form.Get("code_verifier") != "", e.peer.MCPURL)
		}
	}
	if exchanges == 0 {
		t.Fatal("the peer saw no code exchange")
	}
}

// TestTokenAnswersAreRefusedWhenMalformed: a refresh token with a control
// character and a negative expires_in make the whole answer malformed
// (MC14, MC17), never a token that is stored or cached.
func TestTokenAnswersAreRefusedWhenMalformed(t *testing.T) {
	for _, body := range []string{
		`{"access_token":"tok","token_type":"Bearer","refresh_token":"rt\nX-Injected: 1"}`,
		`{"access_token":"tok","token_type":"Bearer","refresh_token":"rt with space"}`,
		`{"access_token":"tok","token_type":"Bearer","expires_in":-1}`,
		`{"access_token":"tok","token_type":"Bearer","expires_in":"-60"}`,
	} {
		if a, err := parseTokenResponse(200, []byte(body)); !errors.Is(err, errMalformedToken) {
			t.Errorf("parseTokenResponse(%s) = %+v, %v; want malformed", body, a, err)
		}
	}
	if _, err := parseTokenResponse(200, []byte(`{"access_token":"tok","token_type":"Bearer","refresh_token":"rt-1","expires_in":"60"}`)); err != nil {
		t.Errorf("a well-formed answer: %v", err)
	}
}

// TestTokensAreCachedPerServer: two servers with the same URL and the same
// credential each get their own token (the cache is per server, MC14).
func TestTokensAreCachedPerServer(t *testing.T) {
	srv := newTokenServer(3600)
	ts := startServer(t, srv)
	c, _ := newTestConnector(t, selfHosted(t), loopbackResolver(), 2*time.Second)
	for _, id := range []string{"srv-a", "srv-b", "srv-a"} {
		target := srv.target(t, ts)
		target.ServerID = id
		s, err := c.OpenSession(context.Background(), target, limits.DiscoveryResponseCap)
		if err != nil {
			t.Fatalf("OpenSession(%s): %v", id, err)
		}
		s.Close()
	}
	if n := srv.tokens(); n != 2 {
		t.Errorf("%d token requests for two servers (one opened twice), want 2", n)
	}
}

// TestTheDialRefusesAnotherEndpoint: the dialer itself, below the round
// tripper's origin check: an address other than the configured host and
// port is refused before any lookup or connection (MC1, a second line).
func TestTheDialRefusesAnotherEndpoint(t *testing.T) {
	res := loopbackResolver()
	g := newGuard(Options{Timeout: time.Second, Rules: selfHosted(t), Resolver: res}, ports.MCPTarget{URL: mustURL(t, "https://mcp.test:8443/mcp")}, 1024)
	var dialled []string
	g.connect = func(_ context.Context, _ *net.Dialer, _, address string) (net.Conn, error) {
		dialled = append(dialled, address)
		return nil, errNoEgress
	}
	for _, addr := range []string{"evil.test:8443", "mcp.test:443", "127.0.0.1:8443", "mcp.test.evil.test:8443"} {
		if _, err := g.dial(context.Background(), "tcp", addr); !errors.Is(err, ports.ErrRedirectRefused) {
			t.Errorf("dial(%s) = %v, want refused", addr, err)
		}
	}
	if len(dialled) != 0 || res.n.Load() != 0 {
		t.Errorf("dialled %v after %d lookups, want nothing", dialled, res.n.Load())
	}
	if _, err := g.dial(context.Background(), "tcp", "mcp.test:8443"); err == nil || errors.Is(err, ports.ErrRedirectRefused) || len(dialled) != 1 {
		t.Errorf("dial(the configured endpoint) = %v after dialling %v, want one attempt", err, dialled)
	}
}
