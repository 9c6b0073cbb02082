package web_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/adapters/web"
	"github.com/codelotse/codelotse/app"
	"github.com/codelotse/codelotse/domain/server"
	"github.com/rs/zerolog"
)

// TestPagesUnderTheAllowlist: a server stored before the operator's
// allowlist left its URL out shows, in the list and on its page, the
// status outside_allowlist in words and why nothing uses it; its
// discovery is refused; registering a URL outside the list is refused in
// words on the URL field.
func TestPagesUnderTheAllowlist(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	docs := b.register("docs") // https://docs.example.com/mcp
	b.register("wiki")         // https://wiki.example.com/mcp

	// The same database under an allowlist of the wiki only.
	allowed, err := server.ParseAllowedURLs("https://wiki.example.com/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var ui http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ui.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	narrowed := *h
	narrowed.base, narrowed.allowed = srv.URL, allowed
	ui, err = web.New(web.PublicURL(srv.URL), narrowed.deps(), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := narrowed.signIn(app.PermTenantManage)

	list := nb.get("/ui/servers")
	if list.status != http.StatusOK || !strings.Contains(list.body, `data-status="outside_allowlist">outside the operator&#39;s allowlist</span>`) ||
		!strings.Contains(list.body, `data-status="never_discovered"`) {
		t.Errorf("server list = %d, want docs outside the allowlist and wiki never discovered:\n%s", list.status, list.body)
	}
	if p := nb.get("/ui/servers?status=outside_allowlist"); !strings.Contains(p.body, ">docs<") || strings.Contains(p.body, ">wiki<") {
		t.Errorf("the status filter does not keep docs only:\n%s", p.body)
	}
	p := nb.get(docs)
	if p.status != http.StatusOK || !strings.Contains(p.body, `id="outside-allowlist"`) || !strings.Contains(p.body, "QUAVON_MCP_ALLOWED_URLS") {
		t.Errorf("server page = %d, want the reason it is not used:\n%s", p.status, p.body)
	}
	if p := b.get(docs); strings.Contains(p.body, `id="outside-allowlist"`) || !strings.Contains(p.body, `data-status="never_discovered"`) {
		t.Errorf("without the allowlist the page still says outside:\n%s", p.body)
	}

	p = nb.post(docs+"/discover", nil)
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "This URL is outside the operator&#39;s allowlist") {
		t.Errorf("discovery of docs = %d, want the refusal in words:\n%s", p.status, p.body)
	}

	nb.get("/ui/servers/new")
	p = nb.post("/ui/servers", url.Values{"name": {"docs_two"}, "url": {"https://docs.example.com/mcp/v2"}, "auth": {"none"}, "acknowledged": {"on"}})
	if p.status != http.StatusUnprocessableEntity || !strings.Contains(p.body, "This URL is outside the operator&#39;s allowlist of MCP server URLs") {
		t.Errorf("register outside = %d, want the refusal in words on the URL:\n%s", p.status, p.body)
	}
	if n := h.count("mcp_servers"); n != 2 {
		t.Errorf("%d servers stored, want the 2 registered before", n)
	}
}
