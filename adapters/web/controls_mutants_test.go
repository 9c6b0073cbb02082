package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/app"
	"github.com/rs/zerolog"
)

// Each of these tests of the web controls fails when its control is
// removed.

// TestOriginCheckComparesExactly: an origin that merely starts with the
// public URL's (a longer host name, another path) is another origin.
func TestOriginCheckComparesExactly(t *testing.T) {
	h := newHarness(t, openGates)
	tok := h.token(app.PermTenantManage)
	const public = "https://review.example.com"
	ui, err := web.New(web.PublicURL(public), h.deps(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	for _, origin := range []string{"https://review.example.com.evil.test", "https://review.example.com:8443", "https://review.example.co", "http://review.example.com"} {
		req := newFormRequest("/ui/login", url.Values{"token": {tok}})
		req.Header.Set("Origin", origin)
		if rec := serve(ui, req); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "Origin") {
			t.Errorf("sign in with Origin %q where the site is %s = %d, want 403 naming the Origin check", origin, public, rec.Code)
		}
	}
	if n := h.count("web_sessions"); n != 0 {
		t.Errorf("%d sessions opened from another origin", n)
	}
	req := newFormRequest("/ui/login", url.Values{"token": {tok}})
	req.Header.Set("Origin", public)
	if rec := serve(ui, req); rec.Code != http.StatusSeeOther {
		t.Errorf("sign in from the site's own origin = %d, want 303", rec.Code)
	}
}

// TestEveryResponseCarriesTheWholePolicy: the Content-Security-Policy is
// the whole policy, default-src 'none' included, and every response
// (pages, static files, errors, refusals) says nosniff.
func TestEveryResponseCarriesTheWholePolicy(t *testing.T) {
	const want = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	check := func(what string, p page) {
		t.Helper()
		if got := p.header.Get("Content-Security-Policy"); got != want {
			t.Errorf("%s: Content-Security-Policy = %q, want %q", what, got, want)
		}
		if got := p.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options = %q, want nosniff", what, got)
		}
		if got := p.header.Get("Cross-Origin-Opener-Policy"); got != "same-origin" {
			t.Errorf("%s: Cross-Origin-Opener-Policy = %q, want same-origin", what, got)
		}
	}
	for _, path := range []string{"/ui/login", "/ui/servers", "/ui/settings", "/ui/repositories", "/ui/static/style.css", "/ui/nowhere"} {
		check("GET "+path, b.get(path))
	}
	evil := h.browser()
	evil.origin = "https://evil.example"
	check("a refused POST", evil.post("/ui/login", url.Values{"token": {"x"}}))
}

// TestSettingsFormNeedsTenantManage: a repo:manage session posting the
// tenant settings form is refused and nothing changes.
func TestSettingsFormNeedsTenantManage(t *testing.T) {
	h := newHarness(t, openGates)
	repo, _ := h.signIn(app.PermRepoManage)
	repo.get("/ui/repositories")
	if repo.csrf == "" {
		t.Fatal("no CSRF token on the repositories page")
	}
	if p := repo.post("/ui/settings", url.Values{"retentionDays": {"7"}, "ttlHours": {"24"}}); p.status != http.StatusForbidden {
		t.Errorf("repo:manage POST /ui/settings = %d, want 403", p.status)
	}
	var days int
	if err := h.su.Bun().NewRaw("SELECT retention_days FROM tenants WHERE id = ?", h.tenant).Scan(t.Context(), &days); err != nil {
		t.Fatal(err)
	}
	if days != 90 {
		t.Errorf("retention days = %d after a refused form, want the default 90", days)
	}
}

// TestPolicyFormNeedsRepoManage: a tenant:manage-only session posting a
// repository's policy form is refused and no policy is stored.
func TestPolicyFormNeedsRepoManage(t *testing.T) {
	h := newHarness(t, openGates)
	tenant, _ := h.signIn(app.PermTenantManage)
	server := tenant.register("wiki")
	serverID := strings.TrimPrefix(server, "/ui/servers/")
	tenant.get("/ui/repositories")
	p := tenant.post("/ui/repositories", url.Values{"name": {"acme/api"}, "visibility": {"private"}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("create repository = %d", p.status)
	}
	repoPath := p.header.Get("Location")
	tenant.get(repoPath)
	if p := tenant.post(repoPath+"/policy", url.Values{"mode": {"on"}, "servers": {serverID}, "maxCalls": {"5"}}); p.status != http.StatusForbidden {
		t.Errorf("tenant:manage-only POST %s/policy = %d, want 403", repoPath, p.status)
	}
	if n := h.count("repository_policies"); n != 0 {
		t.Errorf("%d policies stored by a session without repo:manage", n)
	}
}
