//go:build signedoff

package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/codelotse/codelotse/adapters/mcpclient/localpki"
	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
)

// End-to-end tests of the OAuth clients the instance obtains or proves
// itself: private_key_jwt client assertions signed with
// QUAVON_OAUTH_SIGNING_KEYS, the instance's client ID metadata document
// as its client id, and a server whose resource moves to another
// authorization server. The authorization servers are oauthpeer's real
// provider; it verifies every assertion itself (signature against the key
// it was given or the instance's published JWKS, iss, sub, aud, exp, a
// fresh jti) and fetches the metadata document itself.

// newSigningKey is an ES256 signing key and its QUAVON_OAUTH_SIGNING_KEYS
// entry (id:base64 of the PKCS#8 DER).
func newSigningKey(t *testing.T, id string) (*ecdsa.PrivateKey, string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, id + ":" + base64.StdEncoding.EncodeToString(der)
}

// publicJWKS is the JWK set of k's public key under kid.
func publicJWKS(kid string, k *ecdsa.PrivateKey) jose.JSONWebKeySet {
	return jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &k.PublicKey, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}}}
}

// dialTo is a client trusting pool whose every connection goes to addr
// (the test's servers answer at "localhost" on 127.0.0.1).
func dialTo(pool *x509.CertPool, addr string) *http.Client {
	return &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}}
}

// loopbackOf is the address of a URL on localhost: 127.0.0.1 and its port.
func loopbackOf(t *testing.T, raw string) string {
	t.Helper()
	u := mustParseURL(t, raw)
	return net.JoinHostPort("127.0.0.1", u.Port())
}

// assertionParts decodes a compact JWT's header and claims without
// verifying it.
func assertionParts(t *testing.T, raw string) (header, claims map[string]any) {
	t.Helper()
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Fatalf("client assertion %.40q… is not a compact JWS", raw)
	}
	for i, into := range []*map[string]any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil || json.Unmarshal(b, into) != nil {
			t.Fatalf("client assertion segment %d is not base64url JSON", i)
		}
	}
	return header, claims
}

// checkAssertionClaims fails t unless the JWT is what the instance signs
// for clientID at issuer: ES256 under kid, typ JWT, iss = sub = clientID,
// aud = issuer, a jti, exp = iat + 60; and, when pub is set, its
// signature verifies with pub.
func checkAssertionClaims(t *testing.T, raw, kid, clientID, issuer string, pub *ecdsa.PublicKey) {
	t.Helper()
	h, c := assertionParts(t, raw)
	if h["alg"] != "ES256" || h["kid"] != kid || h["typ"] != "JWT" {
		t.Errorf("assertion header = %v, want alg ES256, kid %s, typ JWT", h, kid)
	}
	iat, _ := c["iat"].(float64)
	exp, _ := c["exp"].(float64)
	jti, _ := c["jti"].(string)
	if c["iss"] != clientID || c["sub"] != clientID || c["aud"] != issuer || jti == "" || exp-iat != 60 {
		t.Errorf("assertion claims = %v, want iss = sub = %s, aud %s, a jti, exp = iat + 60", c, clientID, issuer)
	}
	if pub != nil {
		jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatalf("parse the assertion: %v", err)
		}
		if _, err := jws.Verify(pub); err != nil {
			t.Errorf("the assertion does not verify with the instance's key: %v", err)
		}
	}
}

// privateKeyJWTAuth is the API's auth object of a client-credentials
// client that authenticates with private_key_jwt at the peer.
func privateKeyJWTAuth(p *oauthpeer.Peer, clientID string) map[string]any {
	return map[string]any{"type": "oauth_client_credentials", "tokenUrl": p.Issuer + "/oauth/token", "clientId": clientID,
		"clientAuth": "private_key_jwt", "issuer": p.Issuer, "scopes": []string{"openid"}}
}

// TestE2EOAuthClientCredentialsPrivateKeyJWT: a client-credentials
// server whose client authenticates with private_key_jwt. The token
// request carries a client assertion signed with the instance's key
// (client_id, client_assertion_type, client_assertion; no secret, no
// Basic header), which the authorization server verifies against the
// client's registered key; the MCP server gets the issued token in
// discovery and in a review. The same assertion replayed is refused. A
// server whose client the authorization server knows under another key
// is server_unauthorized and nothing reaches the MCP server. A
// registration without the issuer, or with a token URL off the issuer's
// origin, stores nothing and sends nothing.
func TestE2EOAuthClientCredentialsPrivateKeyJWT(t *testing.T) {
	t.Parallel()
	key, entry := newSigningKey(t, "k1")
	other, _ := newSigningKey(t, "k1") // the same kid, another key
	p := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", KeyClients: map[string]jose.JSONWebKeySet{
		"cc-jwt": publicJWKS("k1", key), "cc-jwt-other": publicJWKS("k1", other)}})
	in, modelLog := scriptedInstance(t, echoScript("wiki"), peerTrust(t, p), "QUAVON_OAUTH_SIGNING_KEYS="+entry)
	in.secret(strings.TrimPrefix(entry, "k1:"))
	_, c := in.tenant("oauth-cc-jwt", "tenant:manage,repo:manage")
	mcpOrigin := "https://" + mustParseURL(t, p.MCPURL).Host

	for _, tc := range []struct {
		name  string
		auth  func() map[string]any
		field string
	}{
		{"without an issuer", func() map[string]any {
			a := privateKeyJWTAuth(p, "cc-jwt")
			delete(a, "issuer")
			return a
		}, "auth.issuer"},
		{"token URL off the issuer's origin", func() map[string]any {
			a := privateKeyJWTAuth(p, "cc-jwt")
			a["issuer"] = mcpOrigin // localhost too, another port
			return a
		}, "auth.tokenUrl"},
		{"with a client secret", func() map[string]any {
			a := privateKeyJWTAuth(p, "cc-jwt")
			a["clientSecret"] = "a-secret-for-jwt-9911"
			return a
		}, "auth.clientSecret"},
	} {
		r := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "hostile", "url": p.MCPURL, "acknowledged": true, "auth": tc.auth()})
		expectField(t, tc.name, r, tc.field)
	}
	if list := c.do("GET", "/v1/mcp/servers", nil); len(list.Body["servers"].([]any)) != 0 {
		t.Errorf("a refused registration stored a server: %s", list.Raw)
	}
	if n := len(p.ASRequests()) + len(p.MCPRequests()); n != 0 {
		t.Fatalf("refused registrations sent %d requests", n)
	}

	created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": p.MCPURL, "acknowledged": true, "auth": privateKeyJWTAuth(p, "cc-jwt")})
	expect(t, "register with private_key_jwt", created, 201, "")
	view, _ := created.Body["auth"].(map[string]any)
	if view["clientAuth"] != "private_key_jwt" || view["clientId"] != "cc-jwt" || view["issuer"] != p.Issuer || view["hint"] != nil {
		t.Errorf("auth = %v, want private_key_jwt for cc-jwt at %s without a secret's hint", view, p.Issuer)
	}
	id := str(created.Body, "id")
	saveEcho(t, c, id)

	toks := p.TokenRequests()
	if len(toks) != 1 {
		t.Fatalf("discovery and save made %d token requests, want 1 (the token is cached)", len(toks))
	}
	f := toks[0].Form
	if f.Get("grant_type") != "client_credentials" || f.Get("resource") != p.MCPURL || f.Get("client_id") != "cc-jwt" ||
		f.Get("client_assertion_type") != oauthpeer.JWTBearer || f.Get("client_assertion") == "" {
		t.Errorf("token request form = %v, want client_credentials for %s by cc-jwt with a jwt-bearer client assertion", f, p.MCPURL)
	}
	if f.Has("client_secret") || toks[0].Header.Get("Authorization") != "" {
		t.Errorf("the token request sends a secret (form %v, Authorization %q)", f, toks[0].Header.Get("Authorization"))
	}
	assertion := f.Get("client_assertion")
	in.secret(assertion)
	checkAssertionClaims(t, assertion, "k1", "cc-jwt", p.Issuer, &key.PublicKey)
	if as := p.Assertions(); len(as) != 1 || as[0].Err != "" || as[0].ClientID != "cc-jwt" || as[0].Raw != assertion {
		t.Fatalf("the authorization server's verdicts = %+v, want the one assertion verified", as)
	}
	var bearer int
	for _, r := range p.MCPRequests() {
		if r.Path != "/mcp" {
			continue
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
			t.Errorf("%s %s without a bearer token", r.Method, r.Path)
		}
		bearer++
	}
	if bearer == 0 {
		t.Fatal("no request reached the MCP server")
	}

	repoID := privateRepoWithMCP(t, c, id)
	_, rv := runReview(t, c, repoID)
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
		t.Errorf("%d token requests after the review, want 1 (the token of the verified assertion serves the review)", n)
	}

	// The assertion replayed (its jti spent) is refused.
	replay := url.Values{"grant_type": {"client_credentials"}, "client_id": {"cc-jwt"}, "client_assertion_type": {oauthpeer.JWTBearer},
		"client_assertion": {assertion}, "scope": {"openid"}}
	resp, err := dialTo(p.Pool, loopbackOf(t, p.Issuer)).PostForm(p.Issuer+"/oauth/token", replay)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if as := p.Assertions(); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "invalid_client") || as[len(as)-1].Err != "jti replayed" {
		t.Errorf("the replayed assertion = %d %s (verdict %q), want 401 invalid_client for a replayed jti", resp.StatusCode, body, as[len(as)-1].Err)
	}

	// A client the authorization server knows under another key: its
	// assertion does not verify, nothing reaches the MCP server.
	refused := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "docs", "url": p.MCPURL, "acknowledged": true, "auth": privateKeyJWTAuth(p, "cc-jwt-other")})
	expect(t, "register the other client", refused, 201, "")
	otherID := str(refused.Body, "id")
	mcpBefore, asBefore := len(p.MCPRequests()), len(p.Assertions())
	expect(t, "discover with an assertion the server refuses", c.do("POST", "/v1/mcp/servers/"+otherID+"/discover", nil), 502, "server_unauthorized")
	as := p.Assertions()[asBefore:]
	if len(as) != 1 || as[0].ClientID != "cc-jwt-other" || !strings.HasPrefix(as[0].Err, "signature") {
		t.Errorf("the refused server's verdicts = %+v, want one assertion of cc-jwt-other refused for its signature", as)
	}
	for _, a := range as {
		in.secret(a.Raw)
	}
	if n := len(p.MCPRequests()) - mcpBefore; n != 0 {
		t.Errorf("the MCP server received %d requests for a server whose client was refused", n)
	}
	if g := c.do("GET", "/v1/mcp/servers/"+otherID, nil); g.Body["lastError"] != "server_unauthorized" {
		t.Errorf("lastError = %v, want server_unauthorized", g.Body["lastError"])
	}
	tokens := issuedTokens(p)
	in.secret(tokens...)
	checkNothingHolds(t, in, []response{created, c.do("GET", "/v1/mcp/servers/"+id, nil), c.do("GET", "/v1/audit?limit=100", nil)},
		append(tokens, assertion, strings.TrimPrefix(entry, "k1:"))...)
}

// httpsFront is a TLS-terminating reverse proxy at https://localhost:<port>
// in front of an instance listening on plain http: the instance's
// QUAVON_PUBLIC_URL must be https to publish its client ID metadata
// document, and an https public URL makes the session cookie Secure and
// the Origin check expect that https origin, so the web flow (and the
// authorization server fetching the document) go through this front, as
// they would through a deployment's proxy. It keeps the Host it was asked
// for. The API is still reached directly (c.do), which no rule ties to the
// public URL.
type httpsFront struct {
	Origin string
	pool   *x509.CertPool
	addr   string
}

func startHTTPSFront(t *testing.T, backend string) *httpsFront {
	t.Helper()
	pki, err := localpki.New("localhost")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: backend}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.Leaf}}
	srv.Config.ErrorLog = nil
	srv.StartTLS()
	t.Cleanup(srv.Close)
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	return &httpsFront{Origin: "https://localhost:" + port, pool: pki.Pool, addr: addr}
}

// client is an http.Client that reaches the front by its public origin.
func (f *httpsFront) client() *http.Client { return dialTo(f.pool, f.addr) }

// webSession is a signed-in web session through the front.
func (f *httpsFront) webSession(t *testing.T, token string) *webSession {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	hc := f.client()
	hc.Jar = jar
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	s := &webSession{t: t, base: f.Origin, c: hc}
	if status, _, body := s.do("POST", "/ui/login", url.Values{"token": {token}}); status != http.StatusSeeOther {
		t.Fatalf("sign in through the front = %d\n%.300s", status, body)
	}
	return s
}

var authorizeLink = regexp.MustCompile(`<a id="oauth-authorize" href="([^"]+)"`)

// connectThroughWeb connects server id in the web session: Connect, the
// login at p, the callback; it fails t unless the server is connected and
// returns the authorization URL the admin was sent to.
func connectThroughWeb(t *testing.T, ws *webSession, p *oauthpeer.Peer, id string) *url.URL {
	t.Helper()
	ws.do("GET", "/ui/servers/"+id, nil)
	status, _, body := ws.do("POST", "/ui/servers/"+id+"/connect", url.Values{})
	m := authorizeLink.FindStringSubmatch(body)
	if status != http.StatusOK || m == nil {
		t.Fatalf("connect = %d\n%.600s", status, body)
	}
	authURL := mustParseURL(t, html.UnescapeString(m[1]))
	if !strings.HasPrefix(authURL.String(), p.Issuer+"/") {
		t.Fatalf("Connect sends the admin to %s, want the authorization server %s", authURL, p.Issuer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cb, err := p.Login(ctx, authURL.String())
	if err != nil {
		t.Fatalf("log in: %v", err)
	}
	status, loc, body := ws.do("GET", strings.TrimPrefix(cb.String(), ws.base), nil)
	if status != http.StatusSeeOther || loc != "/ui/servers/"+id+"?done=connected" {
		t.Fatalf("callback = %d %q\n%.300s", status, loc, body)
	}
	return authURL
}

// TestE2EOAuthCodeFlowByClientMetadataDocument: a code-flow server
// without a client id, at an authorization server that announces client
// ID metadata documents (and offers registration, at an issuer the
// operator lists): the instance, on an https public URL, connects with
// its document's URL as the client id and registers nothing. The
// authorization server fetches the document itself, checks it (its
// client_id is the URL, the redirect URI among its redirect_uris) and,
// when the instance signs, verifies each token request's assertion
// against the document's jwks_uri; without signing keys the client is
// public (PKCE, its id in the body).
func TestE2EOAuthCodeFlowByClientMetadataDocument(t *testing.T) {
	t.Parallel()
	for _, signs := range []bool{true, false} {
		name := map[bool]string{true: "private_key_jwt", false: "public client"}[signs]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			addr := freeAddr(t)
			front := startHTTPSFront(t, addr)
			docURL := front.Origin + "/oauth/client-metadata.json"
			p := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: []string{front.Origin + "/ui/oauth/callback"},
				ClientIDMetadataDocuments: true, DocumentClient: front.client()})
			env := []string{peerTrust(t, p), "QUAVON_HTTP_ADDR=" + addr, "QUAVON_PUBLIC_URL=" + front.Origin, "QUAVON_MCP_OAUTH_DCR_ISSUERS=" + p.Issuer}
			var key *ecdsa.PrivateKey
			var entry string
			if signs {
				key, entry = newSigningKey(t, "k1")
				env = append(env, "QUAVON_OAUTH_SIGNING_KEYS="+entry)
			}
			in, _ := scriptedInstance(t, echoScript("wiki"), env...)
			if signs {
				in.secret(strings.TrimPrefix(entry, "k1:"))
			}
			_, c := in.tenant("oauth-cimd", "tenant:manage,repo:manage")
			created := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": p.MCPURL, "acknowledged": true,
				"auth": map[string]any{"type": "oauth_authorization_code", "scopes": []string{"openid", "offline_access"}}})
			expect(t, "register without a client", created, 201, "")
			id := str(created.Body, "id")

			authURL := connectThroughWeb(t, front.webSession(t, c.token), p, id)
			q := authURL.Query()
			if q.Get("client_id") != docURL || q.Get("redirect_uri") != front.Origin+"/ui/oauth/callback" {
				t.Errorf("authorization request client_id %q, redirect_uri %q; want the document %s and the front's callback", q.Get("client_id"), q.Get("redirect_uri"), docURL)
			}
			method := map[bool]string{true: "private_key_jwt", false: "none"}[signs]
			g := c.do("GET", "/v1/mcp/servers/"+id, nil)
			view, _ := g.Body["auth"].(map[string]any)
			if conn, _ := view["connection"].(map[string]any); view["clientId"] != docURL || view["clientAuth"] != method || view["issuer"] != p.Issuer || conn["state"] != "connected" {
				t.Errorf("auth = %v, want connected as %s (%s) at %s", view, docURL, method, p.Issuer)
			}
			putEcho(t, c, id)

			// Nothing registered: the document is the client.
			var authorizations int
			for _, r := range p.ASRequests() {
				if r.Path == "/register" {
					t.Errorf("the instance registered a client: %s %s", r.Method, r.Path)
				}
				if r.Method == http.MethodGet && r.Path == "/auth" {
					authorizations++
					if got, _ := url.ParseQuery(r.RawQuery); got.Get("client_id") != docURL {
						t.Errorf("the authorization server saw client_id %q, want %s", got.Get("client_id"), docURL)
					}
				}
			}
			if authorizations != 1 {
				t.Errorf("the authorization server saw %d authorization requests, want 1", authorizations)
			}
			if got := p.RegisteredClients(); len(got) != 0 {
				t.Errorf("registered clients %v, want none", got)
			}
			fetches := p.Documents()
			wantFetches := []string{docURL}
			if signs {
				wantFetches = append(wantFetches, front.Origin+"/oauth/jwks.json")
			}
			if len(fetches) != len(wantFetches) {
				t.Fatalf("the authorization server fetched %+v, want %v", fetches, wantFetches)
			}
			for i, f := range fetches {
				if f.URL != wantFetches[i] || f.Status != http.StatusOK || f.Err != "" {
					t.Errorf("fetch %d = %+v, want %s accepted", i, f, wantFetches[i])
				}
			}

			toks := p.TokenRequests()
			if len(toks) != 2 {
				t.Fatalf("%d token requests, want the exchange and one refresh", len(toks))
			}
			var assertions []string
			for i, want := range []string{"authorization_code", "refresh_token"} {
				f := toks[i].Form
				if f.Get("grant_type") != want || f.Get("client_id") != docURL || f.Get("resource") != p.MCPURL ||
					toks[i].Header.Get("Authorization") != "" || f.Has("client_secret") {
					t.Errorf("token request %d: %v (Authorization %q), want %s by %s for the server, no secret", i, f, toks[i].Header.Get("Authorization"), want, docURL)
				}
				if got := f.Get("client_assertion"); signs != (got != "") || signs != (f.Get("client_assertion_type") == oauthpeer.JWTBearer) {
					t.Errorf("token request %d: client assertion %v, want one: %v", i, got != "", signs)
				} else if signs {
					checkAssertionClaims(t, got, "k1", docURL, p.Issuer, &key.PublicKey)
					assertions = append(assertions, got)
				}
			}
			as := p.Assertions()
			if len(as) != len(assertions) {
				t.Errorf("the authorization server checked %d assertions, want %d", len(as), len(assertions))
			}
			for i, a := range as {
				if a.Err != "" || a.ClientID != docURL || (i < len(assertions) && a.Raw != assertions[i]) {
					t.Errorf("verdict %d = %q for %s, want verified for %s", i, a.Err, a.ClientID, docURL)
				}
			}
			var registered bool
			for _, e := range auditEvents(t, c, 100) {
				d, _ := e["details"].(map[string]any)
				registered = registered || e["action"] == "server.register_client" && d["clientId"] == docURL && d["metadataDocument"] == true && d["clientAuth"] == method
			}
			if !registered {
				t.Error("no server.register_client event for the metadata document's client")
			}
			tokens := append(issuedTokens(p), assertions...)
			in.secret(tokens...)
			checkNothingHolds(t, in, []response{g, c.do("GET", "/v1/audit?limit=100", nil)}, tokens...)
		})
	}
}

// TestE2EOAuthMigratedServerNeedsConnecting: two code-flow servers on one
// MCP server connected at authorization server AS1, one by a client
// registered dynamically (AS1 and AS2 are listed), one by the admin's own
// client. The resource then moves to AS2 (its metadata names AS2, it takes
// AS2's tokens only): both are server_unauthorized and AS2 receives
// nothing. Connect refuses the admin's client (issuer_mismatch), still
// with nothing sent to AS2; for the registered one it registers a new
// client at AS2 and connects there, with nothing of AS1's client or
// tokens carried over, and the server works again. The admin who edits
// the authentication to AS2 can connect the other one.
func TestE2EOAuthMigratedServerNeedsConnecting(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	base := "http://" + addr
	const as1Secret = "as1-web-secret-Mg55-qrst"
	const as2Secret = "as2-web-secret-Mg66-uvwx"
	redirects := []string{base + "/ui/oauth/callback"}
	as1 := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: redirects, WebClientSecret: as1Secret})
	as2 := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", RedirectURIs: redirects, WebClientSecret: as2Secret})
	in, _ := scriptedInstance(t, echoScript("wiki"), peersTrust(t, as1, as2), "QUAVON_HTTP_ADDR="+addr, "QUAVON_PUBLIC_URL="+base,
		"QUAVON_MCP_OAUTH_DCR_ISSUERS="+as1.Issuer+","+as2.Issuer)
	in.secret(as1Secret, as2Secret)
	_, c := in.tenant("oauth-migrate", "tenant:manage,repo:manage")
	ws := newWebSession(t, base, c.token)

	registered := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "wiki", "url": as1.MCPURL, "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "scopes": []string{"openid", "offline_access"}}})
	expect(t, "register without a client", registered, 201, "")
	wiki := str(registered.Body, "id")
	given := c.do("POST", "/v1/mcp/servers", map[string]any{"name": "docs", "url": as1.MCPURL, "acknowledged": true,
		"auth": map[string]any{"type": "oauth_authorization_code", "clientId": oauthpeer.WebClientID, "clientSecret": as1Secret,
			"issuer": as1.Issuer, "scopes": []string{"openid", "offline_access"}}})
	expect(t, "register with the admin's client", given, 201, "")
	docs := str(given.Body, "id")

	connectThroughWeb(t, ws, as1, wiki)
	connectThroughWeb(t, ws, as1, docs)
	putEcho(t, c, wiki)
	putEcho(t, c, docs)
	as1Client, _ := c.do("GET", "/v1/mcp/servers/"+wiki, nil).Body["auth"].(map[string]any)
	oldClient, _ := as1Client["clientId"].(string)
	if regs := as1.RegisteredClients(); len(regs) != 1 || regs[0] != oldClient || as1Client["issuer"] != as1.Issuer {
		t.Fatalf("AS1 registered %v; the server's client is %v", regs, as1Client)
	}
	if n := len(as2.ASRequests()); n != 0 {
		t.Fatalf("AS2 received %d requests before the move", n)
	}

	// The resource moves: AS1's tokens are refused, the metadata names AS2.
	as1.MoveTo(as2)
	for _, id := range []string{wiki, docs} {
		expect(t, "discover after the move", c.do("POST", "/v1/mcp/servers/"+id+"/discover", nil), 502, "server_unauthorized")
		if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != "server_unauthorized" {
			t.Errorf("lastError = %v after the move, want server_unauthorized", g.Body["lastError"])
		}
	}
	if n := len(as2.ASRequests()); n != 0 {
		t.Fatalf("AS2 received %d requests before anyone connected there", n)
	}

	// The admin's client is bound to AS1: Connect is refused, nothing
	// goes to AS2 (nor to AS1).
	as1Before := len(as1.ASRequests())
	ws.do("GET", "/ui/servers/"+docs, nil)
	status, _, body := ws.do("POST", "/ui/servers/"+docs+"/connect", url.Values{})
	if status != http.StatusBadGateway || !strings.Contains(body, "another authorization server") || strings.Contains(body, `id="oauth-authorize"`) {
		t.Fatalf("connect the admin's client after the move = %d\n%.600s", status, body)
	}
	view := c.do("GET", "/v1/mcp/servers/"+docs, nil)
	auth, _ := view.Body["auth"].(map[string]any)
	conn, _ := auth["connection"].(map[string]any)
	if auth["issuer"] != as1.Issuer || auth["clientId"] != oauthpeer.WebClientID || conn["refused"] != "issuer_mismatch" || view.Body["lastError"] != "server_unauthorized" {
		t.Errorf("the admin's client after a refused Connect: %s", view.Raw)
	}
	if n, m := len(as2.ASRequests()), len(as1.ASRequests())-as1Before; n != 0 || m != 0 {
		t.Fatalf("the refused Connect sent %d requests to AS2 and %d to AS1", n, m)
	}

	// The registered client is obtained again, at AS2.
	connectThroughWeb(t, ws, as2, wiki)
	if n := len(as1.ASRequests()) - as1Before; n != 0 {
		t.Errorf("connecting at AS2 sent %d requests to AS1", n)
	}
	regs := as2.RegisteredClients()
	now, _ := c.do("GET", "/v1/mcp/servers/"+wiki, nil).Body["auth"].(map[string]any)
	if len(regs) != 1 || now["clientId"] != regs[0] || now["issuer"] != as2.Issuer || regs[0] == oldClient {
		t.Errorf("AS2 registered %v; the server's client is now %v (was %s at AS1)", regs, now, oldClient)
	}
	putEcho(t, c, wiki)
	toks := as2.TokenRequests()
	if len(toks) != 2 {
		t.Fatalf("AS2 received %d token requests, want the exchange and one refresh", len(toks))
	}
	for i, want := range []string{"authorization_code", "refresh_token"} {
		user, _, _ := (&http.Request{Header: toks[i].Header}).BasicAuth()
		if toks[i].Form.Get("grant_type") != want || user != regs[0] || toks[i].Form.Get("resource") != as1.MCPURL {
			t.Errorf("AS2 token request %d: %v by %q, want %s by its new client for the server", i, toks[i].Form, user, want)
		}
	}
	if g := c.do("GET", "/v1/mcp/servers/"+wiki, nil); g.Body["lastError"] != nil {
		t.Errorf("lastError = %v after connecting again", g.Body["lastError"])
	}
	// Nothing of AS1's client or tokens went to AS2.
	var as1Secrets []string
	for _, r := range as1.TokenRequests() {
		as1Secrets = append(as1Secrets, r.Form.Get("refresh_token"), r.Form.Get("code"))
	}
	as1Secrets = append(as1Secrets, oldClient, as1Secret)
	for _, r := range as2.ASRequests() {
		all := r.Path + "?" + r.RawQuery + " " + fmt.Sprint(r.Header) + " " + string(r.Body)
		for _, v := range as1Secrets {
			if v != "" && strings.Contains(all, v) {
				t.Errorf("AS2 received %.16q… of AS1 in %s %s", v, r.Method, r.Path)
			}
		}
	}
	var migrated bool
	for _, e := range auditEvents(t, c, 100) {
		d, _ := e["details"].(map[string]any)
		migrated = migrated || e["action"] == "server.migrate_issuer" && e["target"] == wiki && d["from"] == as1.Issuer && d["to"] == as2.Issuer
	}
	if !migrated {
		t.Error("no server.migrate_issuer event from AS1 to AS2")
	}

	// The admin edits the authentication to AS2's client: Connect goes on.
	edited := c.do("PATCH", "/v1/mcp/servers/"+docs, map[string]any{"auth": map[string]any{"type": "oauth_authorization_code",
		"clientId": oauthpeer.WebClientID, "clientSecret": as2Secret, "issuer": as2.Issuer, "scopes": []string{"openid", "offline_access"}}})
	expect(t, "edit the authentication", edited, 200, "")
	connectThroughWeb(t, ws, as2, docs)
	putEcho(t, c, docs)

	tokens := append(issuedTokens(as1), issuedTokens(as2)...)
	in.secret(tokens...)
	checkNothingHolds(t, in, []response{c.do("GET", "/v1/mcp/servers", nil), c.do("GET", "/v1/audit?limit=100", nil)},
		append(tokens, as1Secret, as2Secret)...)
}
