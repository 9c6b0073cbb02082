package web_test

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/app/accounts"
	"github.com/codelotse/codelotse/app/repositories"
)

// TestRefusesNULBytesAndInvalidUTF8 sends a NUL byte (and invalid UTF-8)
// in query parameters and form fields of the pages: each is a 422 page
// naming the field, never a 500, and nothing is stored.
func TestRefusesNULBytesAndInvalidUTF8(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	b.get("/ui/repositories")
	// The sign-in's token was audited (token.create); nothing else may be.
	before := map[string]int{}
	for _, table := range []string{"repositories", "mcp_servers", "audit_events", "tenant_mcp_defaults"} {
		before[table] = h.count(table)
	}

	gets := []struct{ path, field string }{
		{"/ui/repositories?after=%00", `"after"`},
		{"/ui/repositories?after=acme%00x", `"after"`},
		{"/ui/repositories?after=%ff", `"after"`},
		{"/ui/audit?page=1%00", `"page"`},
		{"/ui/reviews?id=%00", `"id"`},
		{"/ui/servers?x%00=1", `"x\x00"`},
	}
	for _, tt := range gets {
		if p := b.get(tt.path); p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, template.HTMLEscapeString(tt.field)) {
			t.Errorf("GET %s = %d, want 422 naming %s\n%s", tt.path, p.status, tt.field, p.body)
		}
	}

	posts := []struct {
		path  string
		form  url.Values
		field string
	}{
		{"/ui/repositories", url.Values{"name": {"acme/\x00api"}, "visibility": {"private"}}, `"name"`},
		{"/ui/repositories", url.Values{"name": {"acme/api"}, "visibility": {"private\x00"}}, `"visibility"`},
		{"/ui/repositories", url.Values{"name": {"acme/\xffapi"}, "visibility": {"private"}}, `"name"`},
		{"/ui/settings", url.Values{"retentionDays": {"30\x00"}, "ttlHours": {"24"}}, `"retentionDays"`},
		{"/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp\x00"}, "auth": {"none"}, "acknowledged": {"on"}}, `"url"`},
		{"/ui/servers", url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"bearer"}, "token": {"tok\x00XYZZY"}, "acknowledged": {"on"}}, `"token"`},
		{"/ui/defaults", url.Values{"mode": {"on\x00"}, "maxCalls": {"5"}}, `"mode"`},
	}
	for _, tt := range posts {
		p := b.post(tt.path, tt.form)
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, template.HTMLEscapeString(tt.field)) {
			t.Errorf("POST %s %v = %d, want 422 naming %s\n%s", tt.path, tt.form, p.status, tt.field, p.body)
		}
		if strings.Contains(p.body, "XYZZY") {
			t.Errorf("POST %s: the refusal repeats the value", tt.path)
		}
	}
	for _, table := range []string{"repositories", "mcp_servers", "audit_events", "tenant_mcp_defaults"} {
		if n := h.count(table); n != before[table] {
			t.Errorf("%d rows in %s after the refusals, want %d", n, table, before[table])
		}
	}
	if p := b.get("/ui/settings"); !strings.Contains(p.body, `value="90"`) {
		t.Error("a refused settings form changed the retention")
	}

	// Signing in with a NUL byte in the token is a refusal, not an error.
	if p := h.browser().post("/ui/login", url.Values{"token": {"clt_\x00x"}}); p.status >= 500 {
		t.Errorf("sign in with a NUL byte = %d", p.status)
	}
}

// TestStaticFilesAreNotListed: the static directory serves its files and
// never a listing of itself.
func TestStaticFilesAreNotListed(t *testing.T) {
	h := newHarness(t, openGates)
	b := h.browser()
	for _, path := range []string{"/ui/static/", "/ui/static", "/ui/static/./", "/ui/static//", "/ui/static/%2e/", "/ui/static/style.css/", "/ui/static/index.html", "/ui/static/nothing.css"} {
		p := b.get(path)
		if p.status == http.StatusOK || strings.Contains(p.body, `href="count.js"`) || strings.Contains(p.body, "<pre>") {
			t.Errorf("GET %s = %d, want no listing\n%s", path, p.status, p.body)
		}
	}
	for _, path := range []string{"/ui/static/style.css", "/ui/static/count.js"} {
		if p := b.get(path); p.status != http.StatusOK || p.body == "" {
			t.Errorf("GET %s = %d, want the file", path, p.status)
		}
	}
}

// TestRepoManageSeesTheServersTheAPIShowsIt: the policy page of a
// repo:manage session offers the servers as the API's
// GET /v1/repositories/{id}/policy/servers answers the same principal
// (the one use case behind both): every server's id, name and enabled
// state, and nothing else of a server (no URL, credential hint or link to
// the server's page, which is tenant:manage's).
func TestRepoManageSeesTheServersTheAPIShowsIt(t *testing.T) {
	h := newHarness(t, openGates)
	admin, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	wiki := admin.register("wiki")
	admin.register("tickets")
	admin.get(wiki)
	if p := admin.post(wiki+"/enabled", url.Values{"enabled": {"false"}}); p.status != http.StatusSeeOther {
		t.Fatalf("disable = %d", p.status)
	}
	admin.get("/ui/repositories")
	p := admin.post("/ui/repositories", url.Values{"name": {"acme/api"}, "visibility": {"private"}})
	repoPath, _, _ := strings.Cut(p.header.Get("Location"), "?")
	if p.status != http.StatusSeeOther || !strings.HasPrefix(repoPath, "/ui/repositories/") {
		t.Fatalf("create repository = %d %q", p.status, repoPath)
	}
	repoID := strings.TrimPrefix(repoPath, "/ui/repositories/")

	maintainer, _ := h.signIn(app.PermRepoManage)
	page := maintainer.get(repoPath)
	if page.status != http.StatusOK {
		t.Fatalf("GET %s = %d", repoPath, page.status)
	}
	var secret string
	for _, c := range maintainer.c.Jar.Cookies(mustURL(h.base + "/ui/")) {
		if c.Name == "codelotse_session" {
			secret = c.Value
		}
	}
	session, err := h.deps().ResumeSession.Handle(t.Context(), accounts.ResumeSession{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	want, err := h.deps().PolicyServers.Handle(t.Context(), session.Principal, repositories.ListPolicyServers{RepositoryID: repoID})
	if err != nil || len(want) != 2 {
		t.Fatalf("the API's use case answers %v, %v; want both servers", want, err)
	}
	for _, s := range want {
		label := `value="` + s.ID + `"> ` + s.Name
		if !s.Enabled {
			label += " (disabled)"
		}
		if !strings.Contains(page.body, label) {
			t.Errorf("the policy page lacks %q", label)
		}
	}
	if !strings.Contains(page.body, "> wiki (disabled)</label>") || !strings.Contains(page.body, "> tickets</label>") {
		t.Error("the policy page does not show wiki disabled and tickets enabled")
	}
	for _, hidden := range []string{"example.com", `href="/ui/servers/`, "Bearer"} {
		if strings.Contains(page.body, hidden) {
			t.Errorf("the policy page of a repo:manage session shows %q", hidden)
		}
	}
	if p := maintainer.get(wiki); p.status != http.StatusForbidden {
		t.Errorf("repo:manage GET %s = %d, want 403", wiki, p.status)
	}
}
