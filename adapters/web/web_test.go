package web_test

import (
	"crypto/sha256"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/app"
	"github.com/rs/zerolog"
)

func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	for _, path := range []string{"/ui/login", "/ui/servers", "/ui/servers/new", "/ui/repositories", "/ui/static/style.css", "/ui/nowhere"} {
		p := b.get(path)
		csp := p.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
			t.Errorf("GET %s: Content-Security-Policy = %q, want scripts from this origin only", path, csp)
		}
		if got := p.header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("GET %s: X-Frame-Options = %q, want DENY", path, got)
		}
		if got := p.header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("GET %s: Referrer-Policy = %q, want no-referrer", path, got)
		}
	}
	if p := b.get("/ui/servers"); strings.Contains(p.body, "<script>") || strings.Contains(p.body, " style=") || strings.Contains(p.body, " onclick=") {
		t.Errorf("a page holds inline script or style:\n%s", p.body)
	}
}

func TestSessionCookie(t *testing.T) {
	tests := []struct {
		name   string
		public string
		secure bool
	}{
		{"http public URL", "http://127.0.0.1:8080", false},
		{"https public URL", "https://review.example.com", true},
	}
	h := newHarness(t, openGates)
	tok := h.token(app.PermTenantManage)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ui, err := web.New(web.PublicURL(tt.public), h.deps(), zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			req := newFormRequest("/ui/login", url.Values{"token": {tok}})
			req.Header.Set("Origin", tt.public)
			rec := serve(ui, req)
			cookies := rec.Result().Cookies()
			if rec.Code != http.StatusSeeOther || len(cookies) != 1 {
				t.Fatalf("sign in = %d with %d cookies, want 303 and one cookie", rec.Code, len(cookies))
			}
			c := cookies[0]
			if c.Name != "codelotse_session" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure != tt.secure || c.MaxAge != 8*3600 {
				t.Errorf("cookie = %+v, want codelotse_session HttpOnly SameSite=Strict Secure=%v Max-Age 8 h", c, tt.secure)
			}
			// Only the hash of the cookie is stored.
			sum := sha256.Sum256([]byte(c.Value))
			var n int
			if err := h.su.Bun().NewRaw("SELECT count(*) FROM web_sessions WHERE id_hash = ?", sum[:]).Scan(t.Context(), &n); err != nil || n != 1 {
				t.Errorf("sessions stored under the cookie's SHA-256: %d (%v), want 1", n, err)
			}
			var plain int
			if err := h.su.Bun().NewRaw("SELECT count(*) FROM web_sessions WHERE position(convert_to(?, 'UTF8') in id_hash) > 0", c.Value).Scan(t.Context(), &plain); err != nil || plain != 0 {
				t.Errorf("a session row holds the cookie value itself")
			}
		})
	}
}

func TestRefusesStateChangesWithoutTheSessionsCSRFToken(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	other, _ := h.signIn(app.PermTenantManage)
	other.get("/ui/servers")
	form := url.Values{"name": {"acme/api"}, "visibility": {"private"}}
	for name, token := range map[string]string{"missing": "", "wrong": strings.Repeat("0", 64), "another session's": other.csrf} {
		f := url.Values{"csrf": {token}}
		for k, v := range form {
			f[k] = v
		}
		b.get("/ui/repositories")
		if p := b.post("/ui/repositories", f); p.status != http.StatusForbidden || !strings.Contains(p.body, "CSRF") {
			t.Errorf("POST with a %s CSRF token = %d, want 403 naming the CSRF check", name, p.status)
		}
	}
	b.get("/ui/servers/new")
	if p := b.post("/ui/servers", url.Values{"csrf": {""}, "name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"none"}, "acknowledged": {"on"}}); p.status != http.StatusForbidden {
		t.Errorf("register without CSRF = %d, want 403", p.status)
	}
	if n := h.count("repositories") + h.count("mcp_servers"); n != 0 {
		t.Errorf("%d rows created by refused requests, want 0", n)
	}
	b.get("/ui/repositories")
	if p := b.post("/ui/repositories", form); p.status != http.StatusSeeOther || h.count("repositories") != 1 {
		t.Errorf("POST with the session's token = %d, %d repositories; want 303 and 1", p.status, h.count("repositories"))
	}
}

func TestRefusesStateChangesFromAnotherOrigin(t *testing.T) {
	h := newHarness(t, openGates)
	b, tok := h.signIn(app.PermTenantManage, app.PermRepoManage)
	for _, origin := range []string{"", "https://evil.example", "null", strings.Replace(h.base, "127.0.0.1", "localhost", 1)} {
		b.get("/ui/repositories")
		b.origin = origin
		if p := b.post("/ui/repositories", url.Values{"name": {"acme/api"}, "visibility": {"private"}}); p.status != http.StatusForbidden || !strings.Contains(p.body, "Origin") {
			t.Errorf("POST with Origin %q = %d, want 403 naming the Origin check", origin, p.status)
		}
		anon := h.browser()
		anon.origin = origin
		if p := anon.post("/ui/login", url.Values{"token": {tok}}); p.status != http.StatusForbidden {
			t.Errorf("sign in with Origin %q = %d, want 403", origin, p.status)
		}
	}
	if n := h.count("repositories"); n != 0 {
		t.Errorf("%d repositories created from another origin", n)
	}
	if n := h.count("web_sessions"); n != 1 {
		t.Errorf("%d sessions, want only the one opened from the public origin", n)
	}
}

func TestSessionsEnd(t *testing.T) {
	h := newHarness(t, openGates)
	ended := func(b *browser) bool {
		p := b.get("/ui/servers")
		return p.status == http.StatusSeeOther && strings.HasPrefix(p.header.Get("Location"), "/ui/login")
	}
	t.Run("after 30 minutes idle", func(t *testing.T) {
		b, _ := h.signIn(app.PermTenantManage)
		h.clock.advance(29 * time.Minute)
		if ended(b) {
			t.Fatal("the session ended after 29 minutes")
		}
		h.clock.advance(29 * time.Minute) // in use 29 minutes ago: still alive
		if ended(b) {
			t.Fatal("a session in use ended")
		}
		h.clock.advance(30 * time.Minute)
		if !ended(b) {
			t.Error("the session survived 30 minutes idle")
		}
	})
	t.Run("after 8 hours in use", func(t *testing.T) {
		b, _ := h.signIn(app.PermTenantManage)
		for i := 0; i < 8*3; i++ {
			h.clock.advance(20 * time.Minute)
			if i < 8*3-1 && ended(b) {
				t.Fatalf("the session ended after %d minutes in use", (i+1)*20)
			}
		}
		if !ended(b) {
			t.Error("the session survived 8 hours")
		}
	})
	t.Run("when its token is deleted", func(t *testing.T) {
		b, tok := h.signIn(app.PermTenantManage)
		sum := sha256.Sum256([]byte(tok))
		if _, err := h.su.Bun().NewRaw("DELETE FROM api_tokens WHERE token_hash = ?", sum[:]).Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		if !ended(b) {
			t.Error("the session survived its token")
		}
	})
	t.Run("on sign out", func(t *testing.T) {
		b, _ := h.signIn(app.PermTenantManage)
		jar := b.c.Jar
		b.get("/ui/servers")
		saved := jar.Cookies(mustURL(h.base + "/ui/"))
		if p := b.post("/ui/logout", nil); p.status != http.StatusSeeOther {
			t.Fatalf("sign out = %d", p.status)
		}
		replay := h.browser()
		replay.c.Jar.SetCookies(mustURL(h.base+"/ui/"), saved)
		if !ended(replay) {
			t.Error("the cookie still opens a session after signing out")
		}
	})
	t.Run("when the browser signs in again", func(t *testing.T) {
		b, _ := h.signIn(app.PermTenantManage)
		before := b.c.Jar.Cookies(mustURL(h.base + "/ui/"))
		if p := b.post("/ui/login", url.Values{"token": {h.token(app.PermRepoManage)}}); p.status != http.StatusSeeOther {
			t.Fatalf("second sign in = %d", p.status)
		}
		replay := h.browser()
		replay.c.Jar.SetCookies(mustURL(h.base+"/ui/"), before)
		if !ended(replay) {
			t.Error("the first session survived a second sign-in in the same browser")
		}
	})
	t.Run("a forged cookie", func(t *testing.T) {
		b := h.browser()
		b.c.Jar.SetCookies(mustURL(h.base+"/ui/"), []*http.Cookie{{Name: "codelotse_session", Value: "cls_" + strings.Repeat("A", 43)}})
		if !ended(b) {
			t.Error("a forged cookie opened a page")
		}
	})
	t.Run("a wrong token", func(t *testing.T) {
		b := h.browser()
		p := b.post("/ui/login", url.Values{"token": {"clt_" + strings.Repeat("x", 43)}})
		if p.status != http.StatusUnauthorized || !strings.Contains(p.body, "unauthenticated") || strings.Contains(p.body, strings.Repeat("x", 43)) {
			t.Errorf("sign in with an unknown token = %d, want 401 with the code and without echoing the token", p.status)
		}
	})
}

func TestPagesFollowThePermissions(t *testing.T) {
	h := newHarness(t, openGates)
	repo, _ := h.signIn(app.PermRepoManage)
	for _, path := range []string{"/ui/servers", "/ui/servers/new", "/ui/defaults", "/ui/audit", "/ui/settings"} {
		if p := repo.get(path); p.status != http.StatusForbidden {
			t.Errorf("repo:manage GET %s = %d, want 403", path, p.status)
		}
	}
	p := repo.get("/ui/repositories")
	if p.status != http.StatusOK || strings.Contains(p.body, `href="/ui/servers"`) || strings.Contains(p.body, `href="/ui/audit"`) || !strings.Contains(p.body, `href="/ui/reviews"`) {
		t.Errorf("repo:manage navigation shows more than Repositories and Reviews:\n%s", p.body)
	}
	if p := repo.post("/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"none"}, "acknowledged": {"on"}}); p.status != http.StatusForbidden {
		t.Errorf("repo:manage POST /ui/servers = %d, want 403", p.status)
	}
	if p := repo.post("/ui/repositories", url.Values{"name": {"acme/api"}, "visibility": {"private"}}); p.status != http.StatusForbidden {
		t.Errorf("repo:manage creates a repository: %d, want 403", p.status)
	}
	if n := h.count("mcp_servers") + h.count("repositories"); n != 0 {
		t.Errorf("%d rows created without the permission", n)
	}
	tenant, _ := h.signIn(app.PermTenantManage)
	if p := tenant.get("/ui/reviews"); p.status != http.StatusForbidden {
		t.Errorf("tenant:manage GET /ui/reviews = %d, want 403 (reviews need repo:manage)", p.status)
	}
	if p := tenant.get("/ui/"); p.header.Get("Location") != "/ui/servers" {
		t.Errorf("tenant:manage start page = %q, want /ui/servers", p.header.Get("Location"))
	}
	if p := repo.get("/ui/"); p.header.Get("Location") != "/ui/repositories" {
		t.Errorf("repo:manage start page = %q, want /ui/repositories", p.header.Get("Location"))
	}
}

func TestAPublicURLOnPortZeroBecomesTheBoundAddress(t *testing.T) {
	h := newHarness(t, openGates)
	tok := h.token(app.PermTenantManage)
	tests := []struct {
		public, bound, origin string
		want                  int
	}{
		{"http://127.0.0.1:0", "127.0.0.1:5555", "http://127.0.0.1:5555", http.StatusSeeOther},
		{"http://127.0.0.1:0", "127.0.0.1:5555", "http://127.0.0.1:0", http.StatusForbidden},
		{"https://review.example.com", "127.0.0.1:5555", "https://review.example.com", http.StatusSeeOther},
		{"https://review.example.com", "127.0.0.1:5555", "http://127.0.0.1:5555", http.StatusForbidden},
	}
	for _, tt := range tests {
		ui, err := web.New(web.PublicURL(tt.public), h.deps(), zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		ui.Listening(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555})
		req := newFormRequest("/ui/login", url.Values{"token": {tok}})
		req.Header.Set("Origin", tt.origin)
		if rec := serve(ui, req); rec.Code != tt.want {
			t.Errorf("public URL %s bound to %s: sign in from %s = %d, want %d", tt.public, tt.bound, tt.origin, rec.Code, tt.want)
		}
	}
}
