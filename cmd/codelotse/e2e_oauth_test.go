//go:build signedoff

package main

import (
	"context"
	"crypto/tls"
	"encoding/pem"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
)

// End-to-end tests of the OAuth kinds through the real binary against a
// real authorization server (zitadel/oidc behind adapters/mcpclient/
// oauthpeer) and the MCP server it protects. Both answer at "localhost"
// (the name the instances list as a private host; the binary resolves
// with the system's resolver), on loopback TLS with a certificate of the
// peer's own, which the binary trusts through SSL_CERT_FILE.

// echoText is what the scripted model asks the echo tool to repeat.
const echoText = "oauth-e2e-echo-Qv7"

// startOAuthPeer starts the authorization server and the MCP server on
// localhost names; redirects are the code-flow clients' redirect URIs.
func startOAuthPeer(t *testing.T, redirects ...string) *oauthpeer.Peer {
	t.Helper()
	return oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: redirects})
}

// peerTrust writes a CA file that trusts the e2e CA and the peer's
// certificate (the peer keeps its CA's PEM to itself: its leaf, taken from
// a handshake, is trusted as an anchor of its own) and returns the
// SSL_CERT_FILE entry for an instance.
func peerTrust(t *testing.T, p *oauthpeer.Peer) string {
	t.Helper()
	u, err := url.Parse(p.Issuer)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: p.Pool, ServerName: u.Hostname()})
	if err != nil {
		t.Fatalf("handshake with the peer: %v", err)
	}
	leaf := conn.ConnectionState().PeerCertificates[0]
	_ = conn.Close()
	pemData := append(append([]byte{}, e2ePKI().CAPEM...), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})...)
	file := filepath.Join(t.TempDir(), "ca-oauth.pem")
	if err := os.WriteFile(file, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	return "SSL_CERT_FILE=" + file
}

// echoScript is a script (the same turns for every review) whose finder
// calls the echo tool of the server named server once.
func echoScript(server string) map[string]any {
	return map[string]any{
		"perReview": true,
		"finder": []any{
			toolTurn(call("mcp_"+server+"_echo", map[string]any{"text": echoText})),
			contentTurn(map[string]any{"findings": []any{}}),
		},
		"summary": []any{contentTurn("Nothing to report.")},
	}
}

// clientCredentialsAuth is the API's auth object of the peer's service
// client.
func clientCredentialsAuth(tokenURL string) map[string]any {
	return map[string]any{"type": "oauth_client_credentials", "tokenUrl": tokenURL, "clientId": oauthpeer.ServiceClientID,
		"clientSecret": oauthpeer.ServiceClientSecret, "scopes": []string{"openid", "mcp.read"}}
}

// saveEcho discovers the server and allowlists its echo tool.
func saveEcho(t *testing.T, c *client, id string) {
	t.Helper()
	if d := discover(t, c, id)["echo"]; d["supported"] != true {
		t.Fatalf("echo is not a supported tool: %v", d)
	}
	putEcho(t, c, id)
}

// putEcho allowlists the echo tool of a discovered server.
func putEcho(t *testing.T, c *client, id string) {
	t.Helper()
	s := c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "echo", "description": "Repeat a text.", "confirmWrite": true}}})
	if s.Status != http.StatusOK {
		t.Fatalf("save the allowlist: %d %s", s.Status, s.Raw)
	}
}

// issuedTokens are the bearer tokens the MCP server received and the
// refresh tokens and codes the binary sent to the token endpoint: every
// token the authorization server issued that the binary used.
func issuedTokens(p *oauthpeer.Peer) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	for _, r := range p.MCPRequests() {
		add(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}
	for _, r := range p.TokenRequests() {
		add(r.Form.Get("refresh_token"))
		add(r.Form.Get("code"))
	}
	return out
}

// checkNothingHolds fails t if any of values is in a table, the instance's
// logs or one of the answers.
func checkNothingHolds(t *testing.T, in *instance, answers []response, values ...string) {
	t.Helper()
	db := dumpDatabase(t, in)
	logs := in.logs.String()
	// The greps see the data: the dump holds the servers' rows, the logs
	// the requests.
	if !strings.Contains(db, "mcp_servers") || !strings.Contains(logs, "/v1/mcp/servers") {
		t.Fatal("the dump or the logs lack the servers: the greps would prove nothing")
	}
	for _, v := range values {
		if v == "" {
			continue
		}
		short := v
		if len(short) > 12 {
			short = short[:12] + "…"
		}
		if strings.Contains(db, v) {
			t.Errorf("a table holds %q", short)
		}
		if strings.Contains(logs, v) {
			t.Errorf("the logs hold %q", short)
		}
		for _, a := range answers {
			if strings.Contains(string(a.Raw), v) {
				t.Errorf("an API answer holds %q: %.200s", short, a.Raw)
			}
		}
	}
}

// TestE2EOAuthClientCredentials: a server with client credentials at a
// real authorization server: the view shows the hint only, discovery
// fetches a token for the server's URL, a review calls the tool with it,
// and neither the secret nor any token reaches a table, a log line, an
// answer or the audit. Hostile registrations store nothing.
func TestE2EOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	p := startOAuthPeer(t)
	in, modelLog := scriptedInstance(t, echoScript("wiki"), peerTrust(t, p))
	in.secret(oauthpeer.ServiceClientSecret)
	_, c := in.tenant("oauth-cc", "tenant:manage,repo:manage")
	tokenURL := p.Issuer + "/oauth/token"
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(p.Issuer, "https://"))

	for _, tc := range []struct {
		name   string
		auth   map[string]any
		status int
		code   string
		field  string
	}{
		{"http token URL", clientCredentialsAuth("http://localhost:" + port + "/oauth/token"), 422, "validation_failed", "auth.tokenUrl"},
		{"token URL on an unlisted loopback address", clientCredentialsAuth("https://127.0.0.1:" + port + "/oauth/token"), 422, "endpoint_not_public", ""},
		{"token URL on unlisted IPv6 loopback", clientCredentialsAuth("https://[::1]:" + port + "/oauth/token"), 422, "endpoint_not_public", ""},
		{"unknown auth field", func() map[string]any {
			a := clientCredentialsAuth(tokenURL)
			a["accessToken"] = "smuggled"
			return a
		}(), 400, "bad_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "hostile", "url": p.MCPURL, "acknowledged": true, "auth": tc.auth})
			if tc.field != "" {
				expectField(t, tc.name, r, tc.field)
			} else {
				expect(t, tc.name, r, tc.status, tc.code)
			}
			expectNoEcho(t, tc.name, r, oauthpeer.ServiceClientSecret)
			if list := c.do("GET", "/v1/mcp/servers", nil); len(list.Body["servers"].([]any)) != 0 {
				t.Errorf("a refused registration stored a server: %s", list.Raw)
			}
		})
	}
	if n := len(p.ASRequests()); n != 0 {
		t.Fatalf("refused registrations reached the authorization server %d times", n)
	}

	created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": p.MCPURL, "acknowledged": true, "auth": clientCredentialsAuth(tokenURL)})
	expect(t, "register with client credentials", created, 201, "")
	if got, want := fmt.Sprint(created.Body["auth"]), fmt.Sprint(map[string]any{"type": "oauth_client_credentials", "clientId": oauthpeer.ServiceClientID,
		"scopes": []any{"openid", "mcp.read"}, "hint": "client_secret …", "clientAuth": "client_secret_basic"}); got != want {
		t.Errorf("auth = %s, want %s", got, want)
	}
	id := str(created.Body, "id")
	saveEcho(t, c, id)

	toks := p.TokenRequests()
	if len(toks) != 1 {
		t.Fatalf("discovery and save made %d token requests, want 1 (the token is cached)", len(toks))
	}
	f := toks[0].Form
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != p.MCPURL || f.Get("scope") != "openid mcp.read" {
		t.Errorf("token request form = %v, want client_credentials for resource %s with scope openid mcp.read", f, p.MCPURL)
	}
	if user, pass, ok := (&http.Request{Header: toks[0].Header}).BasicAuth(); !(ok && user == oauthpeer.ServiceClientID && pass == oauthpeer.ServiceClientSecret) && f.Get("client_secret") != oauthpeer.ServiceClientSecret {
		t.Errorf("the token request does not authenticate the client")
	}
	for _, r := range p.MCPRequests() {
		if r.Path == "/mcp" && !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			t.Errorf("%s %s without a bearer token", r.Method, r.Path)
		}
	}

	repoID := privateRepoWithMCP(t, c, id)
	reviewID, rv := runReview(t, c, repoID)
	expectDone(t, rv)
	if got := callStatuses(t, c, id); fmt.Sprint(got) != "[ok]" {
		t.Errorf("call records %v, want [ok]", got)
	}
	var echoed bool
	for _, m := range byStep(readModelLog(t, modelLog), "finder") {
		for _, msg := range m.toolMessages() {
			echoed = echoed || strings.Contains(msg, echoText)
		}
	}
	if !echoed {
		t.Error("the echo tool's answer did not reach the model")
	}
	if n := len(p.TokenRequests()); n != 1 {
		t.Errorf("%d token requests after the review, want 1 (the cached token serves the review)", n)
	}

	tokens := issuedTokens(p)
	if len(tokens) == 0 {
		t.Fatal("no access token reached the MCP server")
	}
	in.secret(tokens...)
	answers := []response{created, c.do("GET", "/v1/mcp/servers", nil), c.do("GET", "/v1/mcp/servers/"+id, nil),
		c.do("GET", "/v1/mcp/servers/"+id+"/calls", nil), c.do("GET", "/v1/reviews/"+reviewID, nil), c.do("GET", "/v1/audit?limit=100", nil)}
	checkNothingHolds(t, in, answers, append(tokens, oauthpeer.ServiceClientSecret)...)
	for _, e := range auditEvents(t, c, 100) {
		if strings.Contains(fmt.Sprint(e["details"]), oauthpeer.ServiceClientSecret) {
			t.Errorf("audit event %v holds the client secret", e["action"])
		}
	}
}

// TestE2EOAuthReviewUnauthorized: the access token is revoked after the
// allowlist was saved: the review's call fetches exactly one new token and
// succeeds. Then the MCP server refuses every token: one new token again,
// then the server is unauthorized (skipped, as in
// TestE2EReviewUnauthorized when everything is refused), lastError server_unauthorized.
func TestE2EOAuthReviewUnauthorized(t *testing.T) {
	t.Parallel()
	p := startOAuthPeer(t)
	in, modelLog := scriptedInstance(t, echoScript("wiki"), peerTrust(t, p))
	in.secret(oauthpeer.ServiceClientSecret)
	_, c := in.tenant("oauth-401", "tenant:manage,repo:manage")
	created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": p.MCPURL, "acknowledged": true, "auth": clientCredentialsAuth(p.Issuer + "/oauth/token")})
	expect(t, "register", created, 201, "")
	id := str(created.Body, "id")
	saveEcho(t, c, id)
	repoID := privateRepoWithMCP(t, c, id)

	// Revoked: one 401, one new token, the call goes through.
	p.RevokeAccessTokens()
	before := len(p.TokenRequests())
	_, rv := runReview(t, c, repoID)
	expectDone(t, rv)
	if n := len(p.TokenRequests()) - before; n != 1 {
		t.Errorf("the review after a revocation made %d token requests, want exactly 1", n)
	}
	if got := callStatuses(t, c, id); fmt.Sprint(got) != "[ok]" {
		t.Errorf("call records %v, want [ok]", got)
	}
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != nil {
		t.Errorf("lastError = %v after a recovered 401", g.Body["lastError"])
	}

	// Refused for good: one new token, then server_unauthorized.
	p.RefuseTokens(true)
	before = len(p.TokenRequests())
	mcpBefore := len(p.MCPRequests())
	_, rv = runReview(t, c, repoID)
	expectDone(t, rv)
	if n := len(p.TokenRequests()) - before; n != 1 {
		t.Errorf("the refused review made %d token requests, want exactly 1", n)
	}
	// The review's first request to the server is refused, so the
	// server is skipped before the model sees its tool (the "everything
	// refused" case of TestE2EReviewUnauthorized): no call record.
	if got := callStatuses(t, c, id); fmt.Sprint(got) != "[ok]" {
		t.Errorf("call records %v, want the first review's ok alone", got)
	}
	finders := byStep(readModelLog(t, modelLog), "finder")
	if last := finders[len(finders)-1]; len(last.mcpTools()) != 0 {
		t.Errorf("the refused server's tools were offered to the model: %v", last.mcpTools())
	}
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "server_unauthorized" {
		t.Errorf("lastError = %v, want server_unauthorized", g.Body["lastError"])
	}
	var refused int
	for _, r := range p.MCPRequests()[mcpBefore:] {
		if r.Path == "/mcp" {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("the MCP server received %d requests in the refused review, want 2 (the request and its one retry)", refused)
	}
	in.secret(issuedTokens(p)...)
	checkNothingHolds(t, in, []response{c.do("GET", "/v1/mcp/servers/"+id, nil), c.do("GET", "/v1/audit?limit=100", nil)},
		append(issuedTokens(p), oauthpeer.ServiceClientSecret)...)
}

// freeAddr reserves a loopback port and releases it, for an instance
// whose public URL must be known before it starts (the peer registers the
// redirect URI first).
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// TestE2EOAuthCodeFlowPublicClient connects a code-flow server with the
// authorization server's public client (PKCE, no secret) through the web
// interface over HTTP (a Go client holding the session, the peer's Login
// for the authorization server's form), then discovers and reviews with
// the refreshed token. The public client authenticates with its id in the
// body only; no token reaches a table or the logs.
func TestE2EOAuthCodeFlowPublicClient(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	p := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: []string{base + "/ui/oauth/callback"}})
	in, _ := scriptedInstance(t, echoScript("wiki"), peerTrust(t, p), "QUAVON_HTTP_ADDR="+addr, "QUAVON_PUBLIC_URL="+base)
	_, c := in.tenant("oauth-public", "tenant:manage,repo:manage")
	created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": p.MCPURL, "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": oauthpeer.PublicClientID, "scopes": []string{"openid", "offline_access"}}})
	expect(t, "register with the code flow", created, 201, "")
	if got, want := fmt.Sprint(created.Body["auth"]), fmt.Sprint(map[string]any{"type": "oauth_authorization_code", "clientId": oauthpeer.PublicClientID,
		"scopes": []any{"openid", "offline_access"}, "connection": map[string]any{"state": "needs_connection", "by": nil, "at": nil}, "clientAuth": "none"}); got != want {
		t.Errorf("auth = %s, want %s", got, want)
	}
	id := str(created.Body, "id")
	// Not connected: discovery is refused without a request anywhere.
	expect(t, "discover before connecting", c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil), 502, "server_unauthorized")
	if n := len(p.ASRequests()) + len(p.MCPRequests()); n != 0 {
		t.Errorf("an unconnected server sent %d requests", n)
	}

	ws := newWebSession(t, base, c.token)
	ws.do("GET", "/ui/servers/"+id, nil)
	status, _, body := ws.do("POST", "/ui/servers/"+id+"/connect", url.Values{})
	m := regexp.MustCompile(`<a id="oauth-authorize" href="([^"]+)"`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("connect = %d\n%.300s", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cb, err := p.Login(ctx, html.UnescapeString(m[1]))
	if err != nil {
		t.Fatalf("log in: %v", err)
	}
	status, loc, body := ws.do("GET", strings.TrimPrefix(cb.String(), base), nil)
	if status != http.StatusSeeOther || loc != "/ui/servers/"+id+"?done=connected" {
		t.Fatalf("callback = %d %q\n%.300s", status, loc, body)
	}
	if conn := connectionOf(t, c, id); conn["state"] != "connected" || conn["by"] == nil || conn["at"] == nil {
		t.Errorf("connection = %v", conn)
	}

	// Saving lists the live tools (the refused discovery above throttles
	// another one for 10 s): the first request with the refreshed token.
	putEcho(t, c, id)
	repoID := privateRepoWithMCP(t, c, id)
	_, rv := runReview(t, c, repoID)
	expectDone(t, rv)
	if got := callStatuses(t, c, id); fmt.Sprint(got) != "[ok]" {
		t.Errorf("call records %v, want [ok]", got)
	}
	toks := p.TokenRequests()
	if len(toks) != 2 {
		t.Fatalf("%d token requests, want the exchange and one refresh", len(toks))
	}
	for i, want := range []string{"authorization_code", "refresh_token"} {
		f := toks[i].Form
		if f.Get("grant_type") != want || f.Get("client_id") != oauthpeer.PublicClientID || f.Get("resource") != p.MCPURL ||
			toks[i].Header.Get("Authorization") != "" || f.Has("client_secret") {
			t.Errorf("token request %d: %v (Authorization %q), want %s by the public client for the server", i, f, toks[i].Header.Get("Authorization"), want)
		}
	}
	tokens := append(issuedTokens(p), cb.Query().Get("state"))
	in.secret(tokens...)
	checkNothingHolds(t, in, []response{c.do("GET", "/v1/mcp/servers/"+id, nil), c.do("GET", "/v1/audit?limit=100", nil)}, tokens...)
}

// peersTrust is peerTrust for several peers: one CA file with every
// peer's certificates.
func peersTrust(t *testing.T, peers ...*oauthpeer.Peer) string {
	t.Helper()
	pemData := append([]byte{}, e2ePKI().CAPEM...)
	for _, p := range peers {
		for _, raw := range []string{p.Issuer, p.MCPURL} {
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := tls.Dial("tcp", u.Host, &tls.Config{RootCAs: p.Pool, ServerName: u.Hostname()})
			if err != nil {
				t.Fatalf("handshake with the peer: %v", err)
			}
			pemData = append(pemData, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: conn.ConnectionState().PeerCertificates[0].Raw})...)
			_ = conn.Close()
		}
	}
	file := filepath.Join(t.TempDir(), "ca-oauth-peers.pem")
	if err := os.WriteFile(file, pemData, 0o600); err != nil {
		t.Fatal(err)
	}
	return "SSL_CERT_FILE=" + file
}

// TestE2EOAuthIssuerBinding: through the binary, a confidential code-flow
// client is bound to the issuer the admin named. A hostile MCP server
// (its own peer) names its own authorization server: Connect is refused
// with server_unauthorized, the server's view says why
// (auth.connection.refused issuer_mismatch, lastError server_unauthorized),
// and neither the hostile authorization server nor the admin's receives
// a request, so the client secret goes nowhere. A secret without an
// issuer is refused at registration.
func TestE2EOAuthIssuerBinding(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	admins := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: []string{base + "/ui/oauth/callback"}})
	hostile := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: []string{base + "/ui/oauth/callback"}})
	in, _ := scriptedInstance(t, echoScript("wiki"), peersTrust(t, admins, hostile), "QUAVON_HTTP_ADDR="+addr, "QUAVON_PUBLIC_URL="+base)
	_, c := in.tenant("oauth-issuer", "tenant:manage,repo:manage")
	const secret = "web-secret-canary-issuer-7788"
	in.secret(secret)

	noIssuer := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": hostile.MCPURL, "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": oauthpeer.WebClientID, "clientSecret": secret}})
	expect(t, "a secret without issuer", noIssuer, 422, "validation_failed")
	created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": hostile.MCPURL, "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": oauthpeer.WebClientID, "clientSecret": secret, "issuer": admins.Issuer}})
	expect(t, "register bound to the admin's issuer", created, 201, "")
	id := str(created.Body, "id")

	ws := newWebSession(t, base, c.token)
	ws.do("GET", "/ui/servers/"+id, nil)
	status, _, body := ws.do("POST", "/ui/servers/"+id+"/connect", url.Values{})
	if status != http.StatusBadGateway || !strings.Contains(body, "another authorization server") || strings.Contains(body, `id="oauth-authorize"`) {
		t.Fatalf("connect = %d\n%.600s", status, body)
	}
	if n := len(hostile.ASRequests()) + len(admins.ASRequests()); n != 0 {
		t.Errorf("the authorization servers received %d requests", n)
	}
	view := c.do("GET", "/v1/mcp/servers/"+id, nil)
	expect(t, "GET server", view, 200, "")
	auth, _ := view.Body["auth"].(map[string]any)
	conn, _ := auth["connection"].(map[string]any)
	if auth["issuer"] != admins.Issuer || conn["refused"] != "issuer_mismatch" || conn["state"] != "needs_connection" || view.Body["lastError"] != "server_unauthorized" {
		t.Errorf("view = %s", view.Raw)
	}
	if _, _, page := ws.do("GET", "/ui/servers/"+id, nil); !strings.Contains(page, `id="oauth-refused" data-reason="issuer_mismatch"`) {
		t.Errorf("the server page does not say why")
	}
	checkNothingHolds(t, in, []response{view, c.do("GET", "/v1/audit?limit=100", nil)}, secret)
}
