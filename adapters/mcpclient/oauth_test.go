package mcpclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/domain/tool/tooltest"
	"github.com/codelotse/codelotse/ports"
)

// logBuf captures a logger's lines (debug level) for the tests that grep
// them for secrets.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// noSecrets fails the test if any secret appears in the log or an error.
func noSecrets(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%s contains a secret (%.12s…)", where, s)
		}
	}
}

// peerResolver maps the peer's names to loopback.
func peerResolver() *resolver {
	return &resolver{fn: func(_ int64, host string) ([]netip.Addr, error) {
		if host == "mcp.test" || host == "as.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
}

type peerEnv struct {
	peer  *oauthpeer.Peer
	conn  *Connector
	oc    *OAuthClient
	logs  *logBuf
	dials *dialLog
}

// startPeer starts the authorization server and the MCP server and a
// connector and OAuth client that trust them, with both names listed.
func startPeer(t *testing.T, o oauthpeer.Options) *peerEnv {
	t.Helper()
	p := oauthpeer.Start(t, o)
	logs := &logBuf{}
	opts := Options{
		Rules: listedRules(t, "mcp.test,as.test"), Resolver: peerResolver(), Timeout: 5 * time.Second,
		RootCAs: p.Pool, Logger: zerolog.New(logs).Level(zerolog.DebugLevel),
	}
	dl := &dialLog{}
	connect := func(ctx context.Context, d *net.Dialer, network, address string) (net.Conn, error) {
		dl.add(address)
		if netip.MustParseAddrPort(address).Addr() == netip.MustParseAddr("127.0.0.1") {
			return d.DialContext(ctx, network, address)
		}
		return nil, errNoEgress
	}
	c := NewConnector(opts)
	c.connect = connect
	oc := NewOAuthClient(opts)
	oc.connect = connect
	return &peerEnv{peer: p, conn: c, oc: oc, logs: logs, dials: dl}
}

func (e *peerEnv) mcpURL(t *testing.T) server.URL { return mustURL(t, e.peer.MCPURL) }

func (e *peerEnv) tokenURL(t *testing.T) server.URL {
	return mustURL(t, e.peer.Issuer+"/oauth/token")
}

func clientCredentials(t *testing.T, tokenURL, secret string, scopes ...string) server.Credential {
	t.Helper()
	c, err := server.NewOAuthClientCredentials(tokenURL, oauthpeer.ServiceClientID, secret, scopes, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bearerOf is the token of an Authorization: Bearer header, or "".
func bearerOf(h string) string {
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return ""
	}
	return tok
}

func TestClientCredentialsTokenGoesOnlyToTheMCPServer(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	cred := clientCredentials(t, e.peer.Issuer+"/oauth/token", oauthpeer.ServiceClientSecret, "openid", "mcp.read")
	target := ports.MCPTarget{ServerID: "srv-1", URL: e.mcpURL(t), Credential: cred}
	ctx := context.Background()

	for range 2 { // the second session uses the cached token
		s, err := e.conn.OpenSession(ctx, target, 1<<20)
		if err != nil {
			t.Fatalf("Open: %v\n%s", err, e.logs)
		}
		if _, err := s.ListAll(ctx); err != nil {
			t.Fatalf("ListAll: %v", err)
		}
		res, err := s.CallTool(ctx, "echo", tooltest.Args(`{"text":"hi"}`))
		if err != nil || len(res.Texts) != 1 || res.Texts[0] != "hi" {
			t.Fatalf("CallTool = %+v, %v", res, err)
		}
		s.Close()
	}

	toks := e.peer.TokenRequests()
	if len(toks) != 1 {
		t.Fatalf("token requests = %d, want 1 (the second session uses the cache)", len(toks))
	}
	f := toks[0].Form
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != e.peer.MCPURL || f.Get("scope") != "openid mcp.read" {
		t.Errorf("token request form = %v, want client_credentials, resource = the MCP URL, scopes", f)
	}
	if f.Has("client_secret") || f.Has("client_id") {
		t.Errorf("client authentication in the body: %v", f)
	}
	user, pass, ok := basicAuth(toks[0].Header.Get("Authorization"))
	if !ok || user != oauthpeer.ServiceClientID || pass != oauthpeer.ServiceClientSecret {
		t.Errorf("token request not client_secret_basic")
	}

	// The access token reaches the MCP server on every request, and no
	// other origin ever sees it.
	var token string
	for _, r := range e.peer.MCPRequests() {
		tok := bearerOf(r.Header.Get("Authorization"))
		if tok == "" {
			t.Fatalf("MCP request %s %s without the access token", r.Method, r.Path)
		}
		if token != "" && tok != token {
			t.Errorf("a second access token without a refresh")
		}
		token = tok
	}
	for _, r := range e.peer.ASRequests() {
		if strings.Contains(strings.Join(r.Header.Values("Authorization"), " "), token) {
			t.Errorf("the authorization server received the access token")
		}
	}
	noSecrets(t, "the log", e.logs.String(), token, oauthpeer.ServiceClientSecret)
}

// withBearer counts the requests that carried an access token.
func withBearer(reqs []oauthpeer.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "" {
			n++
		}
	}
	return n
}

func basicAuth(h string) (string, string, bool) {
	enc, ok := strings.CutPrefix(h, "Basic ")
	if !ok {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", "", false
	}
	u, p, ok := strings.Cut(string(b), ":")
	if !ok {
		return "", "", false
	}
	u, _ = url.QueryUnescape(u)
	p, _ = url.QueryUnescape(p)
	return u, p, true
}

func TestA401RefreshesTheTokenOnceAndRetries(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	metrics := &fakeOpMetrics{}
	e.conn.opts.Metrics = metrics
	cred := clientCredentials(t, e.peer.Issuer+"/oauth/token", oauthpeer.ServiceClientSecret)
	target := ports.MCPTarget{ServerID: "srv-1", URL: e.mcpURL(t), Credential: cred}
	ctx := context.Background()

	s, err := e.conn.OpenSession(ctx, target, 1<<20)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if n := len(e.peer.TokenRequests()); n != 1 {
		t.Fatalf("token requests after open = %d", n)
	}
	// The authorization server revokes the token: the next operation
	// gets a 401, fetches one new token, and succeeds.
	e.peer.RevokeAccessTokens()
	if _, err := s.ListAll(ctx); err != nil {
		t.Fatalf("ListAll after revocation: %v\n%s", err, e.logs)
	}
	if n := len(e.peer.TokenRequests()); n != 2 {
		t.Fatalf("token requests after one 401 = %d, want 2", n)
	}
	// A server that refuses every token: one refresh, then
	// server_unauthorized (not a loop).
	e.peer.RefuseTokens(true)
	_, err = s.ListAll(ctx)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.TokenRequests()); n != 3 {
		t.Fatalf("token requests after two 401s = %d, want 3 (exactly one refresh)", n)
	}
	// Metrics carry fixed codes only.
	if n := metrics.count(opRecord{"tools/list", "server_unauthorized"}); n != 1 {
		t.Errorf("tools/list server_unauthorized observed %d times, want 1", n)
	}
	var labels []string
	for _, o := range metrics.ops {
		labels = append(labels, o.method, o.errorType)
	}
	var tokens []string
	for _, r := range e.peer.MCPRequests() {
		tokens = append(tokens, bearerOf(r.Header.Get("Authorization")))
	}
	noSecrets(t, "the metric labels", strings.Join(labels, " "), append(tokens, oauthpeer.ServiceClientSecret)...)
	noSecrets(t, "the log", e.logs.String(), append(tokens, oauthpeer.ServiceClientSecret)...)

	// The same at open: the handshake refreshes once.
	_, err = e.conn.OpenSession(ctx, target, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.TokenRequests()); n != 4 {
		t.Fatalf("token requests after a refused handshake = %d, want 4", n)
	}
}

func TestWrongClientSecretIsUnauthorizedAtOpen(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	const wrong = "not-the-secret-4711"
	cred := clientCredentials(t, e.peer.Issuer+"/oauth/token", wrong)
	_, err := e.conn.Open(context.Background(), ports.MCPTarget{ServerID: "s", URL: e.mcpURL(t), Credential: cred}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.MCPRequests()); n != 0 {
		t.Errorf("the MCP server received %d requests", n)
	}
	if !strings.Contains(e.logs.String(), "invalid_client") {
		t.Errorf("the debug log lacks the cause:\n%s", e.logs)
	}
	noSecrets(t, "the log", e.logs.String(), wrong)
}

func TestUnconnectedCodeFlowSendsNothing(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	cred, err := server.NewOAuthAuthorizationCode(oauthpeer.WebClientID, "web-secret", e.peer.Issuer, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.conn.Open(context.Background(), ports.MCPTarget{ServerID: "s", URL: e.mcpURL(t), Credential: cred}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := len(e.peer.ASRequests()) + len(e.peer.MCPRequests()); n != 0 {
		t.Errorf("%d requests sent for an unconnected credential", n)
	}
	if d := e.dials.all(); len(d) != 0 {
		t.Errorf("dialled %v", d)
	}
}

// pkce returns a verifier and its S256 challenge.
func pkce() (string, string) {
	b := make([]byte, 32)
	rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return v, base64.RawURLEncoding.EncodeToString(sum[:])
}

// connect runs the code flow as the web interface will: discovery, the
// login, the exchange; it returns the connected credential.
func (e *peerEnv) connect(t *testing.T, clientID, secret string) (server.Credential, ports.OAuthMetadata) {
	t.Helper()
	ctx := context.Background()
	md, err := e.oc.Discover(ctx, e.mcpURL(t), e.peer.Issuer)
	if err != nil {
		t.Fatalf("Discover: %v\n%s", err, e.logs)
	}
	verifier, challenge := pkce()
	redirect := "https://app.test/callback"
	q := url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirect},
		"scope": {"openid offline_access"}, "state": {"st-1"}, "code_challenge": {challenge},
		"code_challenge_method": {"S256"}, "resource": {e.peer.MCPURL},
	}
	back, err := e.peer.Login(ctx, md.AuthorizationEndpoint.String()+"?"+q.Encode())
	if err != nil {
		t.Fatalf("Login: %v", err)
	}
	code := back.Query().Get("code")
	if code == "" || back.Query().Get("state") != "st-1" {
		t.Fatalf("redirect back = %v", back)
	}
	toks, err := e.oc.ExchangeCode(ctx, ports.OAuthCodeExchange{
		TokenURL: md.TokenEndpoint, ClientID: clientID, ClientSecret: secret, Code: code,
		Verifier: verifier, RedirectURI: redirect, Resource: e.mcpURL(t),
	})
	if err != nil {
		t.Fatalf("ExchangeCode: %v\n%s", err, e.logs)
	}
	if toks.AccessToken == "" || toks.RefreshToken == "" {
		t.Fatalf("tokens without access or refresh token")
	}
	// A replayed code is refused.
	_, err = e.oc.ExchangeCode(ctx, ports.OAuthCodeExchange{
		TokenURL: md.TokenEndpoint, ClientID: clientID, ClientSecret: secret, Code: code,
		Verifier: verifier, RedirectURI: redirect, Resource: e.mcpURL(t),
	})
	wantCode(t, err, ports.ErrOAuthRejected)

	cred, err := server.NewOAuthAuthorizationCode(clientID, secret, md.Issuer, []string{"openid", "offline_access"}, "")
	if err != nil {
		t.Fatal(err)
	}
	cred, err = cred.WithConnection(md.Issuer, md.TokenEndpoint, toks.RefreshToken, "admin", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return cred, md
}

func TestCodeFlowRefreshRotatesAndSavesBeforeUse(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	cred, md := e.connect(t, oauthpeer.WebClientID, "web-secret")
	if md.Issuer != e.peer.Issuer || md.Resource != e.peer.MCPURL || md.RegistrationEndpoint.IsZero() {
		t.Errorf("metadata = %+v", md)
	}
	old, _ := cred.OAuth()
	ctx := context.Background()

	var saved []server.Credential
	var mcpAtSave int
	save := func(_ context.Context, c server.Credential) error {
		saved = append(saved, c)
		mcpAtSave = withBearer(e.peer.MCPRequests())
		return nil
	}
	tokensBefore := len(e.peer.TokenRequests())
	target := ports.MCPTarget{ServerID: "srv-code", URL: e.mcpURL(t), Credential: cred, SaveCredential: save}
	s, err := e.conn.OpenSession(ctx, target, 1<<20)
	if err != nil {
		t.Fatalf("Open: %v\n%s", err, e.logs)
	}
	if _, err := s.ListAll(ctx); err != nil {
		t.Fatalf("ListAll: %v", err)
	}
	s.Close()
	if len(saved) != 1 {
		t.Fatalf("saved %d credentials, want 1", len(saved))
	}
	if mcpAtSave != 0 {
		t.Errorf("the MCP server had %d requests before the rotated token was saved", mcpAtSave)
	}
	rotated, _ := saved[0].OAuth()
	if rotated.RefreshToken == old.RefreshToken || rotated.TokenURL != old.TokenURL || rotated.ClientID != old.ClientID {
		t.Errorf("saved credential is not the rotated one")
	}
	toks := e.peer.TokenRequests()[tokensBefore:]
	if len(toks) != 1 {
		t.Fatalf("token requests = %d", len(toks))
	}
	f := toks[0].Form
	if f.Get("grant_type") != "refresh_token" || f.Get("refresh_token") != old.RefreshToken || f.Get("resource") != e.peer.MCPURL {
		t.Errorf("refresh form lacks grant, token or resource: grant %q resource %q", f.Get("grant_type"), f.Get("resource"))
	}

	// The stored (rotated) credential and the stale one both hit the
	// cache: no request spends the rotated refresh token needlessly.
	for _, c := range []server.Credential{saved[0], cred} {
		target.Credential = c
		s, err := e.conn.OpenSession(ctx, target, 1<<20)
		if err != nil {
			t.Fatalf("Open again: %v", err)
		}
		s.Close()
	}
	if n := len(e.peer.TokenRequests()) - tokensBefore; n != 1 {
		t.Errorf("token requests after reopening = %d, want 1", n)
	}

	// A saver that fails fails the connection before the MCP server sees
	// anything: the spent refresh token must not be the one kept.
	e2 := startPeer(t, oauthpeer.Options{})
	cred2, _ := e2.connect(t, oauthpeer.WebClientID, "web-secret")
	_, err = e2.conn.Open(ctx, ports.MCPTarget{ServerID: "srv-2", URL: e2.mcpURL(t), Credential: cred2,
		SaveCredential: func(context.Context, server.Credential) error { return errors.New("db down") }}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
	if n := withBearer(e2.peer.MCPRequests()); n != 0 {
		t.Errorf("the MCP server had %d requests with a token", n)
	}
	_, err = e2.conn.Open(ctx, ports.MCPTarget{ServerID: "srv-3", URL: e2.mcpURL(t), Credential: cred2}, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized) // the refresh token was spent above

	o2, _ := cred2.OAuth()
	noSecrets(t, "the log", e.logs.String()+e2.logs.String(), old.RefreshToken, rotated.RefreshToken, o2.RefreshToken, "web-secret")
}

func TestPublicClientExchangeSendsClientIDInTheBody(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	before := len(e.peer.TokenRequests())
	e.connect(t, oauthpeer.PublicClientID, "")
	r := e.peer.TokenRequests()[before]
	if r.Form.Get("client_id") != oauthpeer.PublicClientID || r.Header.Get("Authorization") != "" {
		t.Errorf("public client: client_id %q, Authorization set %v", r.Form.Get("client_id"), r.Header.Get("Authorization") != "")
	}
	if r.Form.Get("grant_type") != "authorization_code" || r.Form.Get("code_verifier") == "" || r.Form.Get("resource") != e.peer.MCPURL {
		t.Errorf("exchange form lacks grant, verifier or resource")
	}
}

func TestRegistersAClientDynamically(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	ctx := context.Background()
	md, err := e.oc.Discover(ctx, e.mcpURL(t), e.peer.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := e.oc.Register(ctx, md, "https://app.test/callback", []string{"openid"}, server.ClientSecretBasic)
	id, secret := reg.ClientID, reg.ClientSecret
	if err != nil || id == "" || secret == "" || reg.ClientAuth != server.ClientSecretBasic {
		t.Fatalf("Register = %q, secret set %v, %s, %v", id, secret != "", reg.ClientAuth, err)
	}
	// The registered client completes the code flow.
	e.connect(t, id, secret)
	// A redirect URI the server refuses is ErrOAuthRejected.
	_, err = e.oc.Register(ctx, md, "https://evil.test/cb", nil, server.ClientSecretBasic)
	wantCode(t, err, ports.ErrOAuthRejected)
	noSecrets(t, "the log", e.logs.String(), secret)
}

func TestConcurrentSessionsShareOneTokenRequest(t *testing.T) {
	e := startPeer(t, oauthpeer.Options{})
	cred := clientCredentials(t, e.peer.Issuer+"/oauth/token", oauthpeer.ServiceClientSecret)
	target := ports.MCPTarget{ServerID: "srv-1", URL: e.mcpURL(t), Credential: cred}
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			s, err := e.conn.OpenSession(context.Background(), target, 1<<20)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.peer.TokenRequests()); n != 1 {
		t.Errorf("token requests = %d, want 1", n)
	}
	// Past its expiry (less the margin) the token is fetched anew; the
	// example server's tokens live 5 minutes.
	e.conn.now = func() time.Time { return time.Now().Add(5*time.Minute - tokenExpiryMargin + time.Second) }
	s, err := e.conn.OpenSession(context.Background(), target, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n := len(e.peer.TokenRequests()); n != 2 {
		t.Errorf("token requests after expiry = %d, want 2", n)
	}
	// Another secret never uses the cached token of the former one.
	target.Credential = clientCredentials(t, e.peer.Issuer+"/oauth/token", "another-secret")
	_, err = e.conn.OpenSession(context.Background(), target, 1<<20)
	wantCode(t, err, ports.ErrServerUnauthorized)
}
