package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/codelotse/codelotse/app"
)

// TestTheFormSetsAndRemovesTheCallLimit: the register and edit forms
// take a server's calls-per-minute limit (empty: none), the page shows
// it, and a refused one is said next to its input with the input kept.
func TestTheFormSetsAndRemovesTheCallLimit(t *testing.T) {
	h := newHarness(t, openGates)
	b, _ := h.signIn(app.PermTenantManage)
	form := url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"none"}, "acknowledged": {"on"}}
	b.get("/ui/servers/new")
	for _, bad := range []string{"601", "0", "many"} {
		form.Set("max_calls_per_minute", bad)
		p := b.post("/ui/servers", form)
		field, _, _ := strings.Cut(p.body[strings.Index(p.body, `id="maxCallsPerMinute"`):], "<fieldset")
		if p.status != http.StatusUnprocessableEntity || !strings.Contains(field, `class="field-error"`) ||
			!strings.Contains(field, "Calls per minute must be a whole number from 1 to 600") || !strings.Contains(field, `value="`+bad+`"`) {
			t.Errorf("register with %q = %d, want 422 with the reason next to the input and the input kept", bad, p.status)
		}
		if h.count("mcp_servers") != 0 {
			t.Fatalf("a refused limit stored a server")
		}
	}
	form.Set("max_calls_per_minute", "7")
	p := b.post("/ui/servers", form)
	path, _, _ := strings.Cut(p.header.Get("Location"), "?")
	if p.status != http.StatusSeeOther || path == "" {
		t.Fatalf("register = %d\n%s", p.status, p.body)
	}
	page := b.get(path)
	if !strings.Contains(page.body, `<dd id="calls-per-minute">at most 7, over all reviews</dd>`) || !strings.Contains(page.body, `name="max_calls_per_minute" type="number" min="1" max="600" step="1" value="7"`) {
		t.Errorf("the server page does not show the limit of 7")
	}

	edit := url.Values{"name": {"wiki"}, "url": {"https://wiki.example.com/mcp"}, "auth": {"keep"}, "max_calls_per_minute": {""}}
	if p := b.post(path, edit); p.status != http.StatusSeeOther {
		t.Fatalf("edit without a limit = %d\n%s", p.status, p.body)
	}
	if page := b.get(path); !strings.Contains(page.body, `<dd id="calls-per-minute">no limit</dd>`) {
		t.Errorf("the limit was not removed")
	}
	edit.Set("max_calls_per_minute", "30")
	if p := b.post(path, edit); p.status != http.StatusSeeOther {
		t.Fatalf("edit with a limit = %d", p.status)
	}
	if page := b.get(path); !strings.Contains(page.body, `at most 30, over all reviews`) {
		t.Errorf("the limit of 30 is not shown")
	}
}
