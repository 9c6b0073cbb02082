//go:build signedoff

package main

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/codelotse/codelotse/adapters/mcpclient/oauthpeer"
)

// documentRequests records the URLs of the documents the tab requests
// (every hop of a redirect chain included) while the test runs.
type documentRequests struct {
	mu   sync.Mutex
	urls []string
}

func recordDocuments(t *testing.T, ctx context.Context) *documentRequests {
	t.Helper()
	d := &documentRequests{}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok && e.Type == network.ResourceTypeDocument {
			d.mu.Lock()
			d.urls = append(d.urls, e.Request.URL)
			d.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// matching lists the recorded URLs that start with prefix.
func (d *documentRequests) matching(prefix string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, u := range d.urls {
		if strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// webSession is a web-interface session held by a Go client (a second
// browser): it signs in with a token and keeps its cookie.
type webSession struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newWebSession(t *testing.T, base, token string) *webSession {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	s := &webSession{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if status, _, body := s.do("POST", "/ui/login", url.Values{"token": {token}}); status != http.StatusSeeOther {
		t.Fatalf("sign in = %d\n%.300s", status, body)
	}
	return s
}

// do sends a request (a form POST with the CSRF token of the last page
// and the Origin a browser sends) and returns status, Location and body.
func (s *webSession) do(method, path string, form url.Values) (int, string, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		if s.csrf != "" {
			form.Set("csrf", s.csrf)
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, s.base+path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.base)
	}
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if m := csrfField.FindSubmatch(raw); m != nil {
		s.csrf = string(m[1])
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(raw)
}

func mustParseURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// connectionOf returns a ServerView's auth.connection.
func connectionOf(t *testing.T, c *client, id string) map[string]any {
	t.Helper()
	g := c.do("GET", "/v1/mcp/servers/"+id, nil)
	expect(t, "GET server", g, 200, "")
	a, _ := g.Body["auth"].(map[string]any)
	conn, _ := a["connection"].(map[string]any)
	if conn == nil {
		t.Fatalf("ServerView without auth.connection: %s", g.Raw)
	}
	return conn
}

// TestBrowserOAuthConnect connects a code-flow server in Chromium against
// a real authorization server: register it through the form, Connect, log
// in at the authorization server's page, come back through the continue
// page (the session cookie is SameSite=Strict) and see it connected;
// discover with the refreshed token; two reviews in a row, each after a
// revocation, prove the rotated refresh token was stored. Then a replayed
// callback and a callback carrying another session's state are refused
// with nothing changed.
func TestBrowserOAuthConnect(t *testing.T) {
	addr := freeAddr(t)
	base := "http://" + addr
	const webSecret = "oauth-web-secret-Jh62-wxyz"
	p := oauthpeer.Start(t, oauthpeer.Options{ASHost: "localhost", MCPHost: "localhost", WebClientSecret: webSecret,
		RedirectURIs: []string{base + "/ui/oauth/callback"}})
	in, modelLog := scriptedInstance(t, echoScript("wiki"), peerTrust(t, p), "QUAVON_HTTP_ADDR="+addr, "QUAVON_PUBLIC_URL="+base)
	if in.base != base {
		t.Fatalf("the instance listens at %s, want %s", in.base, base)
	}
	in.secret(webSecret)
	tenantID, c := in.tenant("oauth-browser", "tenant:manage,repo:manage")
	// The peer's certificate is its own CA's: this browser alone accepts
	// any certificate (chromedp cannot hand Chromium a CA).
	ctx := newBrowserWith(t, chromedp.Flag("ignore-certificate-errors", true))
	docs := recordDocuments(t, ctx)
	signInBrowser(t, ctx, in.base, c.token)

	act(t, ctx, "register",
		chromedp.Navigate(base+"/ui/servers/new"),
		chromedp.WaitVisible(css("#name")),
		chromedp.SendKeys(css("#name"), "wiki"),
		chromedp.SendKeys(css("#url"), p.MCPURL),
		chromedp.Click(css(`input[name="auth"][value="oauth_authorization_code"]`)),
		chromedp.SendKeys(css("#client_id"), oauthpeer.WebClientID),
		chromedp.SendKeys(css("#client_secret"), webSecret),
		chromedp.SendKeys(css("#issuer"), p.Issuer),
		chromedp.SendKeys(css("#scopes"), "openid offline_access"),
		chromedp.Click(css(`input[name="acknowledged"]`)),
		chromedp.Submit(css("#name")),
		chromedp.WaitVisible(css(`p.info`)))
	loc := must(t, ctx, "location", chromedp.Location())
	serverPath := regexp.MustCompile(`/ui/servers/[0-9a-f-]{36}`).FindString(loc)
	if serverPath == "" {
		t.Fatalf("after registering, the browser is at %s", loc)
	}
	id := strings.TrimPrefix(serverPath, "/ui/servers/")
	if got := textOf(t, ctx, "#oauth-connection"); got != "needs connection" {
		t.Errorf("#oauth-connection = %q before connecting, want needs connection", got)
	}
	checkPage(t, ctx, "an OAuth server that needs connection")
	if got := textOf(t, ctx, "dl.facts"); strings.Contains(got, webSecret) {
		t.Errorf("the server page shows the client secret: %q", got)
	}
	if st := connectionOf(t, c, id); st["state"] != "needs_connection" || st["by"] != nil || st["at"] != nil {
		t.Errorf("connection before connecting = %v", st)
	}

	// Connect: the authorization server's login page, then back.
	act(t, ctx, "connect",
		chromedp.Click(css("#oauth-connect")),
		chromedp.WaitVisible(css("#username")))
	if loc := must(t, ctx, "location", chromedp.Location()); !strings.HasPrefix(loc, p.Issuer+"/") {
		t.Fatalf("Connect led to %s, want the authorization server %s", loc, p.Issuer)
	}
	act(t, ctx, "log in at the authorization server",
		chromedp.SendKeys(css("#username"), p.Username),
		chromedp.SendKeys(css("#password"), oauthpeer.Password),
		chromedp.Submit(css("#username")),
		chromedp.WaitVisible(css(`#oauth-connection[data-state="connected"]`)))
	loc = must(t, ctx, "location", chromedp.Location())
	if !strings.HasSuffix(loc, serverPath+"?done=connected") {
		t.Errorf("after the connection the browser is at %s", loc)
	}
	connected := textOf(t, ctx, "#oauth-connection")
	if !regexp.MustCompile(`^connected by token:\S+ at .*20[0-9]{2}`).MatchString(connected) {
		t.Errorf("#oauth-connection = %q, want connected by token:… at a date", connected)
	}
	checkPage(t, ctx, "a connected OAuth server")
	screenshot(t, ctx, "oauth-connected")
	// The authorization server's redirect arrives without the cookie
	// (SameSite=Strict): the continue page, then the same URL with
	// resumed=1 from this site.
	var callback string
	if got := docs.matching(base + "/ui/oauth/callback?"); len(got) != 2 || strings.Contains(got[0], "resumed=1") || got[1] != got[0]+"&resumed=1" && !strings.Contains(got[1], "resumed=1") {
		t.Fatalf("callback requests %v, want the authorization server's and its continuation with resumed=1", got)
	} else {
		callback = got[0]
	}
	if got := docs.matching(p.Issuer + "/auth?"); len(got) != 1 {
		t.Errorf("requests of the authorization endpoint: %v, want 1", got)
	} else if q := mustParseURL(t, got[0]).Query(); q.Get("client_id") != oauthpeer.WebClientID || q.Get("resource") != p.MCPURL ||
		q.Get("code_challenge_method") != "S256" || q.Get("redirect_uri") != base+"/ui/oauth/callback" || q.Get("scope") != "openid offline_access" {
		t.Errorf("authorization request %v", q)
	}
	conn := connectionOf(t, c, id)
	if conn["state"] != "connected" || !strings.HasPrefix(fmt.Sprint(conn["by"]), "token:") || conn["at"] == nil {
		t.Errorf("connection = %v, want connected by token:… at a time", conn)
	}
	toks := p.TokenRequests()
	if len(toks) != 1 {
		t.Fatalf("%d token requests after connecting, want 1 (the code exchange)", len(toks))
	}
	f := toks[0].Form
	if f.Get("grant_type") != "authorization_code" || f.Get("code_verifier") == "" || f.Get("resource") != p.MCPURL ||
		f.Get("redirect_uri") != base+"/ui/oauth/callback" {
		t.Errorf("code exchange form = %v", f)
	}

	// Discover on the page: the refresh token buys the access token.
	act(t, ctx, "discover",
		chromedp.Click(css(`form[action$="/discover"] button`)),
		chromedp.WaitVisible(css("#h-discovery")))
	if tools := textOf(t, ctx, "form.tools"); !strings.Contains(tools, "echo") {
		t.Errorf("the discovery lists %q, want echo", tools)
	}
	toks = p.TokenRequests()
	if len(toks) != 2 || toks[1].Form.Get("grant_type") != "refresh_token" || toks[1].Form.Get("resource") != p.MCPURL {
		t.Fatalf("token requests after discovery: %d, want the exchange and one refresh for the server", len(toks))
	}

	// Two reviews in a row, each after the access tokens were revoked:
	// each 401 makes the connector refresh with the refresh token it
	// reads from the store with the server, and zitadel rotates it (the
	// spent one is refused from then on), so the second review works only
	// if the first one's rotated refresh token was stored.
	putEcho(t, c, id)
	repoID := privateRepoWithMCP(t, c, id)
	for i := 0; i < 2; i++ {
		p.RevokeAccessTokens()
		_, rv := runReview(t, c, repoID)
		expectDone(t, rv)
	}
	if got := callStatuses(t, c, id); fmt.Sprint(got) != "[ok ok]" {
		t.Errorf("call records %v, want [ok ok]: the rotated refresh token was not stored", got)
	}
	var refreshes []string
	for _, r := range p.TokenRequests() {
		if r.Form.Get("grant_type") == "refresh_token" {
			refreshes = append(refreshes, r.Form.Get("refresh_token"))
		}
	}
	if len(refreshes) != 3 {
		t.Errorf("%d refreshes, want 3 (discovery and the 401 of each review)", len(refreshes))
	}
	spent := map[string]bool{}
	for _, rt := range refreshes {
		if spent[rt] {
			t.Errorf("a refresh token was sent twice (the rotation was not saved)")
		}
		spent[rt] = true
	}
	if g := c.do("GET", "/v1/mcp/servers/"+id, nil); g.Body["lastError"] != nil {
		t.Errorf("lastError = %v", g.Body["lastError"])
	}
	var echoed int
	for _, m := range byStep(readModelLog(t, modelLog), "finder") {
		for _, msg := range m.toolMessages() {
			if strings.Contains(msg, echoText) {
				echoed++
			}
		}
	}
	if echoed != 2 {
		t.Errorf("the echo answer reached the model %d times, want 2", echoed)
	}

	// Hostile: the same callback again (same state and code).
	before := len(p.TokenRequests())
	act(t, ctx, "replay the callback",
		chromedp.Navigate(callback),
		chromedp.WaitVisible(css("main h1")))
	replay := textOf(t, ctx, "main")
	if !strings.Contains(replay, "Not connected") || !strings.Contains(replay, "unknown or already used") {
		t.Errorf("the replayed callback shows %q, want Not connected: unknown or already used", replay)
	}
	if st := connectionOf(t, c, id); fmt.Sprint(st) != fmt.Sprint(conn) {
		t.Errorf("the replay changed the connection: %v, was %v", st, conn)
	}

	// Hostile: another session (another token of the tenant in another
	// browser) starts a connection and logs in at the authorization
	// server; its callback, opened in this browser, is refused, and the
	// state is spent.
	otherToken := in.token(tenantID, "tenant:manage").token
	ws := newWebSession(t, base, otherToken)
	ws.do("GET", serverPath, nil)
	status, _, body := ws.do("POST", serverPath+"/connect", url.Values{})
	m := regexp.MustCompile(`<a id="oauth-authorize" href="([^"]+)"`).FindStringSubmatch(body)
	if status != http.StatusOK || m == nil || !strings.HasPrefix(html.UnescapeString(m[1]), p.Issuer+"/") {
		t.Fatalf("the other session's connect = %d\n%.300s", status, body)
	}
	authURL := html.UnescapeString(m[1])
	lctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	foreign, err := p.Login(lctx, authURL)
	if err != nil {
		t.Fatalf("log in for the other session: %v", err)
	}
	if !strings.HasPrefix(foreign.String(), base+"/ui/oauth/callback?") || foreign.Query().Get("code") == "" {
		t.Fatalf("the authorization server sent the other session to %s", foreign)
	}
	act(t, ctx, "open the other session's callback",
		chromedp.Navigate(foreign.String()),
		chromedp.WaitVisible(css("main h1")))
	if got := textOf(t, ctx, "main"); !strings.Contains(got, "Not connected") || !strings.Contains(got, "another session") {
		t.Errorf("another session's callback shows %q, want Not connected: another session", got)
	}
	if status, _, body := ws.do("GET", strings.TrimPrefix(foreign.String(), base), nil); status != http.StatusUnprocessableEntity || !strings.Contains(body, "already used") {
		t.Errorf("the other session's own callback after the refusal = %d, want 422 (the state is spent)\n%.300s", status, body)
	}
	if st := connectionOf(t, c, id); fmt.Sprint(st) != fmt.Sprint(conn) {
		t.Errorf("a refused callback changed the connection: %v, was %v", st, conn)
	}
	if n := len(p.TokenRequests()); n != before {
		t.Errorf("refused callbacks made %d token requests", n-before)
	}

	// No secret, token or state anywhere.
	tokens := append(issuedTokens(p), mustParseURL(t, callback).Query().Get("state"), foreign.Query().Get("state"))
	in.secret(tokens...)
	answers := []response{c.do("GET", "/v1/mcp/servers", nil), c.do("GET", "/v1/mcp/servers/"+id, nil), c.do("GET", "/v1/audit?limit=100", nil)}
	checkNothingHolds(t, in, answers, append(tokens, webSecret)...)
	var audited bool
	for _, e := range auditEvents(t, c, 100) {
		audited = audited || e["action"] == "server.connect"
	}
	if !audited {
		t.Error("no server.connect audit event")
	}
}
