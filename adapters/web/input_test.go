package web_test

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
)

// TestRefusesNULBytesAndInvalidUTF8 sends a NUL byte (and invalid UTF-8)
// in query parameters and form fields of the pages: each is a 422 page
// naming the field, never a 500, and nothing is stored.
func TestRefusesNULBytesAndInvalidUTF8(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage, app.PermRepoManage)
	b.get("/ui/repositories")

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
		if n := h.count(table); n != 0 {
			t.Errorf("%d rows in %s after the refusals, want 0", n, table)
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
