package web_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/codelotse/codelotse/ports"
	"github.com/codelotse/codelotse/ports/portfake"
)

const (
	asIssuer     = "https://as.example.com"
	clientSecret = "cs-SUPERSECRET-client-9876"
	refreshToken = "rt-SUPERSECRET-refresh-5555"
)

func mustServerURL(s string) server.URL {
	u, err := server.ParseURL(s)
	if err != nil {
		panic(err)
	}
	return u
}

// newFakeOAuth is the authorization server of these tests.
func newFakeOAuth() *portfake.OAuthClient {
	return &portfake.OAuthClient{
		Metadata: ports.OAuthMetadata{
			Issuer: asIssuer, AuthorizationEndpoint: mustServerURL("https://as.example.com/authorize"),
			TokenEndpoint: mustServerURL("https://as.example.com/token"), IssParameterSupported: true,
			CodeChallengeMethods: []string{"S256"},
		},
		Tokens: ports.OAuthTokens{AccessToken: "at", RefreshToken: refreshToken},
	}
}

// registerCodeFlow registers an oauth_authorization_code server through
// the form and returns its page path.
func (b *browser) registerCodeFlow(name string) string {
	b.h.t.Helper()
	b.get("/ui/servers/new")
	p := b.post("/ui/servers", url.Values{"name": {name}, "url": {"https://" + name + ".example.com/mcp"}, "auth": {"oauth_authorization_code"},
		"client_id": {"pub-client"}, "client_secret": {clientSecret}, "issuer": {asIssuer}, "scopes": {"mcp:read  offline_access"}, "acknowledged": {"on"}})
	loc := p.header.Get("Location")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, "/ui/servers/") {
		b.h.t.Fatalf("register %s = %d %q\n%s", name, p.status, loc, p.body)
	}
	path, _, _ := strings.Cut(loc, "?")
	return path
}

var authorizeLink = regexp.MustCompile(`<a id="oauth-authorize" href="([^"]+)"`)

// connect presses Connect and returns the authorization URL's query. The
// answer is a page of this site that goes on to the authorization server
// (meta refresh and link), not a redirect: the form-action 'self' of the
// page's policy also covers the form's redirects, and a browser refuses a
// 303 to another origin (TestBrowserOAuthConnect in cmd/codelotse).
func (b *browser) connect(path string) url.Values {
	b.h.t.Helper()
	b.get(path)
	p := b.post(path+"/connect", nil)
	m := authorizeLink.FindStringSubmatch(p.body)
	if p.status != http.StatusOK || m == nil || !strings.Contains(p.body, `http-equiv="refresh"`) || p.header.Get("Location") != "" {
		b.h.t.Fatalf("connect = %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "form-action 'self';") || p.header.Get("Cache-Control") != "no-store" {
		b.h.t.Errorf("connect answer: CSP %q, Cache-Control %q", csp, p.header.Get("Cache-Control"))
	}
	loc := html.UnescapeString(m[1])
	if !strings.HasPrefix(loc, "https://as.example.com/authorize?") || !strings.Contains(p.body, "0;url="+m[1]+`"`) {
		b.h.t.Fatalf("connect leads to %q\n%s", loc, p.body)
	}
	return mustURL(loc).Query()
}

func callbackPath(state string, extra url.Values) string {
	q := url.Values{"state": {state}, "code": {"the-code"}, "iss": {asIssuer}}
	for k, v := range extra {
		q[k] = v
	}
	return "/ui/oauth/callback?" + q.Encode()
}

func TestOAuthConnectFlow(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	path := b.registerCodeFlow("wiki")
	p := b.get(path)
	for _, want := range []string{`id="oauth-connection"`, `needs connection`, `id="oauth-connect"`, `<code>pub-client</code>`, `<code>mcp:read</code>`, `<code>offline_access</code>`, `client_secret …9876`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("server page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "SUPERSECRET") {
		t.Errorf("server page shows the secret")
	}

	q := b.connect(path)
	if q.Get("client_id") != "pub-client" || q.Get("redirect_uri") != h.base+"/ui/oauth/callback" || q.Get("code_challenge_method") != "S256" ||
		q.Get("resource") != "https://wiki.example.com/mcp" || q.Get("scope") != "mcp:read offline_access" {
		t.Errorf("authorization query %v", q)
	}
	if n := h.count("oauth_connect_states"); n != 1 {
		t.Errorf("%d pending states, want 1", n)
	}
	p = b.get(callbackPath(q.Get("state"), nil))
	if p.status != http.StatusSeeOther || p.header.Get("Location") != path+"?done=connected" {
		t.Fatalf("callback = %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	p = b.get(path + "?done=connected")
	if !strings.Contains(p.body, "connected by <code>token:") || !strings.Contains(p.body, `data-state="connected"`) || strings.Contains(p.body, "SUPERSECRET") {
		t.Errorf("connected page:\n%s", p.body)
	}
	if n := h.count("oauth_connect_states"); n != 0 {
		t.Errorf("%d pending states after the callback, want 0", n)
	}
	// The same callback again: the state was used.
	p = b.get(callbackPath(q.Get("state"), nil))
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "Not connected") {
		t.Errorf("replayed callback = %d\n%s", p.status, p.body)
	}
}

func TestOAuthCallbackRefusals(t *testing.T) {
	tests := []struct {
		name  string
		other bool // the callback arrives in another session
		extra url.Values
		setup func(h *harness)
	}{
		{name: "another session", other: true},
		{name: "issuer mismatch", extra: url.Values{"iss": {"https://evil.example"}}},
		{name: "issuer missing", extra: url.Values{"iss": {""}}},
		{name: "authorization server error", extra: url.Values{"error": {"access_denied"}, "code": {""}}},
		{name: "exchange rejected", setup: func(h *harness) { h.oauth.ExchangeErr = ports.ErrOAuthRejected }},
		{name: "expired", setup: func(h *harness) { h.clock.advance(11 * time.Minute) }},
		{name: "unknown state", extra: url.Values{"state": {"forged"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, openGates)
			b, _ := h.signIn(app.PermTenantManage)
			path := b.registerCodeFlow("wiki")
			q := b.connect(path)
			if tt.setup != nil {
				tt.setup(h)
			}
			cb := b
			if tt.other {
				cb, _ = h.signIn(app.PermTenantManage)
			}
			p := cb.get(callbackPath(q.Get("state"), tt.extra))
			if p.status == http.StatusSeeOther || !strings.Contains(p.body, "Not connected") {
				t.Fatalf("callback = %d %q\n%s", p.status, p.header.Get("Location"), p.body)
			}
			if strings.Contains(p.body, "SUPERSECRET") || strings.Contains(p.body, q.Get("state")) {
				t.Errorf("refusal page leaks:\n%s", p.body)
			}
			p = b.get(path)
			if !strings.Contains(p.body, `data-state="needs_connection"`) {
				t.Errorf("a refused callback connected the server")
			}
		})
	}
}

func TestOAuthConnectNeedsCSRFAndOrigin(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	path := b.registerCodeFlow("wiki")
	b.get(path)
	if p := b.post(path+"/connect", url.Values{"csrf": {"wrong"}}); p.status != http.StatusForbidden {
		t.Errorf("connect with a wrong CSRF token = %d", p.status)
	}
	b.origin = "https://evil.example"
	if p := b.post(path+"/connect", nil); p.status != http.StatusForbidden {
		t.Errorf("connect from another origin = %d", p.status)
	}
	b.origin = h.base
	ro, _ := h.signIn(app.PermRepoManage)
	ro.get("/ui/repositories")
	if p := ro.post(path+"/connect", nil); p.status != http.StatusForbidden {
		t.Errorf("connect without tenant:manage = %d", p.status)
	}
	if n := h.count("oauth_connect_states"); n != 0 || len(h.oauth.Discovered) != 0 {
		t.Errorf("refused connects stored %d states, discovered %d", n, len(h.oauth.Discovered))
	}
}

// TestOAuthCallbackWithoutCookie: a browser arriving from the
// authorization server does not send the SameSite=Strict cookie; the
// callback continues from this site, and without a session at all it
// asks for a sign-in.
func TestOAuthCallbackWithoutCookie(t *testing.T) {
	h := newHarness(t, openGates)
	anon := h.browser()
	p := anon.get(callbackPath("s", nil))
	if p.status != http.StatusOK || !strings.Contains(p.body, `http-equiv="refresh"`) || !strings.Contains(p.body, `id="oauth-continue"`) ||
		!strings.Contains(p.body, "resumed=1") || p.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("callback without cookie = %d\n%s", p.status, p.body)
	}
	p = anon.get(callbackPath("s", url.Values{"resumed": {"1"}}))
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/ui/login") {
		t.Errorf("resumed callback without cookie = %d %q", p.status, p.header.Get("Location"))
	}
}

func TestOAuthConnectRefusedOnPage(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	b.get("/ui/servers/new")
	p := b.post("/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"oauth_authorization_code"}, "acknowledged": {"on"}})
	path, _, _ := strings.Cut(p.header.Get("Location"), "?")
	b.get(path)
	p = b.post(path+"/connect", nil)
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "dynamic client registration") {
		t.Errorf("connect without client id and DCR = %d\n%s", p.status, p.body)
	}
}

func TestRegisterClientCredentialsForm(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	b.get("/ui/servers/new")
	p := b.post("/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"oauth_client_credentials"},
		"token_url": {"http://as.example.com/token"}, "client_id": {"c1"}, "client_secret": {clientSecret}, "scopes": {"a b"}, "acknowledged": {"on"}})
	if p.status != http.StatusUnprocessableEntity || strings.Contains(p.body, "SUPERSECRET") || !strings.Contains(p.body, `value="c1"`) {
		t.Fatalf("refused form = %d\n%s", p.status, p.body)
	}
	p = b.post("/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"oauth_client_credentials"},
		"token_url": {"https://as.example.com/token"}, "client_id": {"c1"}, "client_secret": {clientSecret}, "scopes": {"a b"}, "acknowledged": {"on"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("register = %d\n%s", p.status, p.body)
	}
	p = b.get(p.header.Get("Location"))
	for _, want := range []string{"oauth_client_credentials", "<code>c1</code>", "https://as.example.com/token", "client_secret …9876"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("server page lacks %q", want)
		}
	}
	if strings.Contains(p.body, "SUPERSECRET") || strings.Contains(p.body, `id="oauth-connect"`) {
		t.Errorf("server page:\n%s", p.body)
	}
}

// TestOAuthIssuerOnPage: the register form asks for the issuer with a
// client secret; the server page shows the bound issuer, and a Connect
// refused because the MCP server names another authorization server says
// so on the page, with nothing sent and nothing stored.
func TestOAuthIssuerOnPage(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	b.get("/ui/servers/new")
	p := b.post("/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"oauth_authorization_code"},
		"client_id": {"pub-client"}, "client_secret": {clientSecret}, "acknowledged": {"on"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "is required with a client secret") || strings.Contains(p.body, "SUPERSECRET") {
		t.Fatalf("secret without issuer = %d\n%s", p.status, p.body)
	}
	// Find the OAuth issuer fills the field from the server's metadata,
	// for the admin to confirm; the secret is not kept in the form.
	b.get("/ui/servers/new")
	p = b.post("/ui/servers/issuer", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"oauth_authorization_code"},
		"client_id": {"pub-client"}, "client_secret": {clientSecret}})
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="issuer-found"`) || !strings.Contains(p.body, `name="issuer" type="url" value="`+asIssuer+`"`) ||
		strings.Contains(p.body, "SUPERSECRET") || h.count("mcp_servers") != 0 {
		t.Fatalf("find issuer = %d\n%s", p.status, p.body)
	}
	if n := len(h.oauth.Issuers); n != 1 || h.oauth.Issuers[0] != "" {
		t.Errorf("discovery bound to %q", h.oauth.Issuers)
	}
	path := b.registerCodeFlow("wiki")
	p = b.get(path)
	if !strings.Contains(p.body, `<dd id="oauth-issuer"><code>`+asIssuer+`</code>`) || strings.Contains(p.body, `id="oauth-refused"`) {
		t.Fatalf("server page lacks the issuer:\n%s", p.body)
	}
	h.oauth.Metadata.Issuer = "https://evil.example.com"
	b.get(path)
	p = b.post(path+"/connect", nil)
	if p.status == http.StatusOK || !strings.Contains(p.body, "another authorization server") || authorizeLink.MatchString(p.body) {
		t.Fatalf("connect with another issuer = %d\n%s", p.status, p.body)
	}
	if n := h.count("oauth_connect_states"); n != 0 {
		t.Errorf("%d pending states after a refused connect", n)
	}
	p = b.get(path)
	if !strings.Contains(p.body, `id="oauth-refused" data-reason="issuer_mismatch"`) || !strings.Contains(p.body, `data-status="needs_connection"`) {
		t.Errorf("server page after the refusal:\n%s", p.body)
	}
}
