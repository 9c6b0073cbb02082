package web_test

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/domain/netpolicy"
	"github.com/rs/zerolog"
)

var newTokenValue = regexp.MustCompile(`<code id="new-token-value">(clt_[A-Za-z0-9_-]+)</code>`)

// TestTokensPage: a tenant admin lists the tokens (never a secret),
// creates one with a label and an expiry (shown once, not cached), and
// revokes it: a session opened with it ends at once. A repo:manage
// session gets no tokens page.
func TestTokensPage(t *testing.T) {
	h := newHarness(t, openGates)
	admin, adminTok := h.signIn(app.PermTenantManage)
	p := admin.get("/ui/tokens")
	if p.status != http.StatusOK || !strings.Contains(p.body, "this session") || strings.Contains(p.body, adminTok) {
		t.Fatalf("tokens page = %d\n%s", p.status, p.body)
	}
	p = admin.post("/ui/tokens", url.Values{"label": {"ci <nightly>"}, "permissions": {"repo:manage"}, "expiresIn": {"90d"}})
	m := newTokenValue.FindStringSubmatch(p.body)
	if p.status != http.StatusCreated || m == nil || p.header.Get("Cache-Control") != "no-store" || !strings.Contains(p.body, "ci &lt;nightly&gt;") {
		t.Fatalf("create = %d %q\n%s", p.status, p.header.Get("Cache-Control"), p.body)
	}
	created := m[1]
	// Shown once: the list never shows it again.
	if p = admin.get("/ui/tokens"); strings.Contains(p.body, created) || !strings.Contains(p.body, "2027-02-28") {
		t.Errorf("the list shows the token or lacks its expiry:\n%s", p.body)
	}
	// Refused forms keep the fields, show the reason, store nothing.
	before := h.count("api_tokens")
	for _, f := range []url.Values{
		{"label": {"x"}, "permissions": {"repo:manage"}, "expiresIn": {"soon"}},
		{"label": {"x"}, "permissions": {"admin"}},
		{"label": {"a\x00b"}, "permissions": {"repo:manage"}},
	} {
		if p = admin.post("/ui/tokens", f); p.status != http.StatusUnprocessableEntity {
			t.Errorf("create %v = %d", f, p.status)
		}
	}
	if n := h.count("api_tokens"); n != before {
		t.Errorf("refused creates stored %d tokens", n-before)
	}

	// A second browser signs in with the new token; revoking the token
	// ends that session at once.
	other := h.browser()
	if p = other.post("/ui/login", url.Values{"token": {created}}); p.status != http.StatusSeeOther {
		t.Fatalf("sign in with the new token = %d", p.status)
	}
	if p = other.get("/ui/repositories"); p.status != http.StatusOK {
		t.Fatalf("the new token's session = %d", p.status)
	}
	var id string
	if err := h.su.Bun().NewRaw("SELECT id::text FROM api_tokens WHERE label = 'ci <nightly>'").Scan(t.Context(), &id); err != nil {
		t.Fatal(err)
	}
	admin.get("/ui/tokens")
	if p = admin.post("/ui/tokens/"+id+"/revoke", nil); p.status != http.StatusSeeOther || p.header.Get("Location") != "/ui/tokens?done=revoked" {
		t.Fatalf("revoke = %d %q\n%s", p.status, p.header.Get("Location"), p.body)
	}
	if p = other.get("/ui/repositories"); p.status == http.StatusOK {
		t.Errorf("the revoked token's session still works")
	}
	var actions []string
	if err := h.su.Bun().NewRaw("SELECT action FROM audit_events WHERE target = ? ORDER BY at, action", id).Scan(t.Context(), &actions); err != nil {
		t.Fatal(err)
	}
	if strings.Join(actions, ",") != "token.create,token.revoke" {
		t.Errorf("audit = %v", actions)
	}
	// Another tenant's or an unknown id: not found, nothing revoked.
	if p = admin.post("/ui/tokens/"+id+"/revoke", nil); p.status != http.StatusNotFound {
		t.Errorf("revoke again = %d", p.status)
	}

	// A repo:manage session has no tokens page.
	repo, _ := h.signIn(app.PermRepoManage)
	if p = repo.get("/ui/tokens"); p.status != http.StatusForbidden {
		t.Errorf("repo:manage tokens page = %d", p.status)
	}
	if p = repo.post("/ui/tokens", url.Values{"permissions": {"tenant:manage"}}); p.status != http.StatusForbidden {
		t.Errorf("repo:manage create = %d", p.status)
	}
}

// TestSignInRateLimited: failed sign-ins from one address past the limit
// answer 429 with Retry-After, even for a correct token, until the
// window ends.
func TestSignInRateLimited(t *testing.T) {
	h := newHarness(t, openGates)
	good := h.token(app.PermTenantManage)
	b := h.browser()
	for i := range accounts.MaxAuthFailuresPerClient {
		if p := b.post("/ui/login", url.Values{"token": {"clt_wrong-" + string(rune('a'+i%26))}}); p.status != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d = %d", i+1, p.status)
		}
	}
	p := b.post("/ui/login", url.Values{"token": {"clt_wrong-again"}})
	if p.status != http.StatusTooManyRequests || p.header.Get("Retry-After") == "" || strings.Contains(p.body, "clt_wrong") {
		t.Fatalf("past the limit = %d, Retry-After %q", p.status, p.header.Get("Retry-After"))
	}
	// A correct token is never refused because of failures: the limited
	// client signs in with it.
	if p := b.post("/ui/login", url.Values{"token": {good}}); p.status != http.StatusSeeOther {
		t.Fatalf("the correct token from the limited client = %d, want 303", p.status)
	}
	// Another client address signs in with the correct token meanwhile.
	req := newFormRequest("/ui/login", url.Values{"token": {good}})
	req.RemoteAddr, req.Header["Origin"] = "192.0.2.9:40000", []string{h.base}
	if rec := serve(h.ui, req); rec.Code != http.StatusSeeOther {
		t.Errorf("the correct token from another client = %d\n%s", rec.Code, rec.Body)
	}
	// Another client's failures are its own: not limited by the first's.
	req = newFormRequest("/ui/login", url.Values{"token": {"clt_other"}})
	req.RemoteAddr, req.Header["Origin"] = "192.0.2.9:40000", []string{h.base}
	if rec := serve(h.ui, req); rec.Code != http.StatusUnauthorized {
		t.Errorf("another client's wrong token = %d, want 401", rec.Code)
	}
	h.clock.advance(accounts.AuthFailureWindow + time.Second)
	if p = b.post("/ui/login", url.Values{"token": {good}}); p.status != http.StatusSeeOther {
		t.Errorf("after the window = %d", p.status)
	}
}

// TestSignInClientBehindTrustedProxies: the sign-in's limit counts the
// client QUAVON_TRUSTED_PROXIES makes of a request (the API's function):
// a trusted proxy's X-Forwarded-For names it, a forged one from a peer
// outside the list is ignored.
func TestSignInClientBehindTrustedProxies(t *testing.T) {
	h := newHarness(t, openGates)
	good := h.token(app.PermTenantManage)
	d := h.deps()
	var err error
	if d.Proxies, err = netpolicy.ParseTrustedProxies("10.0.0.0/8"); err != nil {
		t.Fatal(err)
	}
	ui, err := web.New(web.PublicURL(h.base), d, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	signIn := func(peer, xff, token string) int {
		req := newFormRequest("/ui/login", url.Values{"token": {token}})
		req.RemoteAddr, req.Header["Origin"] = peer, []string{h.base}
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		return serve(ui, req).Code
	}
	for i := range accounts.MaxAuthFailuresPerClient {
		if code := signIn("10.0.0.1:40000", "198.51.100.7", fmt.Sprintf("clt_%08d", i)); code != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d = %d", i+1, code)
		}
	}
	if code := signIn("10.0.0.2:40000", "198.51.100.7", "clt_probe"); code != http.StatusTooManyRequests {
		t.Errorf("the forwarded client through another proxy = %d, want 429", code)
	}
	if code := signIn("10.0.0.1:40000", "198.51.100.8", "clt_probe"); code != http.StatusUnauthorized {
		t.Errorf("another client behind the proxy = %d, want 401", code)
	}
	if code := signIn("10.0.0.1:40000", "198.51.100.7", good); code != http.StatusSeeOther {
		t.Errorf("the limited client's correct token = %d, want 303", code)
	}
	// A peer outside the list: its failures are its own, whatever it claims.
	for i := range accounts.MaxAuthFailuresPerClient {
		_ = signIn("192.0.2.66:40000", fmt.Sprintf("203.0.113.%d", i), fmt.Sprintf("clt_%08d", i+100))
	}
	if code := signIn("192.0.2.66:40000", "203.0.113.200", "clt_probe"); code != http.StatusTooManyRequests {
		t.Errorf("the untrusted peer claiming a new client = %d, want 429", code)
	}
	if code := signIn("10.0.0.1:40000", "203.0.113.1", "clt_probe"); code != http.StatusUnauthorized {
		t.Errorf("an address the untrusted peer named = %d, want 401 (not limited)", code)
	}
}
