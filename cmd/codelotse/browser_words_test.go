//go:build signedoff

package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserFormsSpeakTheAdminsLanguage: the register form shows only
// the fields of the chosen authentication, without a script; a refusal
// says what to do in words (no code, pattern or JSON in the main
// message; the code in small print), its summary is announced and
// focused when the page opens, links to each field, and the field is
// marked invalid and described by its error. A refused edit at the
// bottom of a long server page opens at the form.
func TestBrowserFormsSpeakTheAdminsLanguage(t *testing.T) {
	ctx := newBrowser(t)
	in, _ := scriptedInstance(t, map[string]any{})
	_, c := in.tenant("words", "tenant:manage,repo:manage")
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the design wiki.", searchSchema(), readOnly(), "hit")
	})
	signInBrowser(t, ctx, in.base, c.token)
	scriptsOff(t, ctx, true)

	// Only the chosen authentication's fields are shown (scripts are off
	// in this browser: CSS alone does it).
	shown := func() map[string]bool {
		return must(t, ctx, "visible fields", chromedp.Evaluate[map[string]bool](
			`Object.fromEntries(["token", "header_name", "header_value", "token_url", "client_id", "issuer", "client_secret", "scopes"].map(id => [id, document.getElementById(id).checkVisibility()]))`))
	}
	act(t, ctx, "open the register form", chromedp.Navigate(in.base+"/ui/servers/new"), chromedp.WaitVisible(css("#name")))
	for _, kind := range []struct {
		value string
		want  []string
	}{
		{"none", nil},
		{"bearer", []string{"token"}},
		{"header", []string{"header_name", "header_value"}},
		{"oauth_client_credentials", []string{"token_url", "client_id", "client_secret", "scopes"}},
		{"oauth_authorization_code", []string{"client_id", "issuer", "client_secret", "scopes"}},
	} {
		act(t, ctx, "choose "+kind.value, chromedp.Click(css(`input[name="auth"][value="`+kind.value+`"]`)))
		got := shown()
		for id, visible := range got {
			want := strings.Contains(" "+strings.Join(kind.want, " ")+" ", " "+id+" ")
			if visible != want {
				t.Errorf("with %s chosen, #%s visible = %v, want %v", kind.value, id, visible, want)
			}
		}
	}

	// A header name the contract refuses with a pattern.
	act(t, ctx, "register with a bad header name",
		chromedp.SendKeys(css("#name"), "wiki"),
		chromedp.SendKeys(css("#url"), p.url()),
		chromedp.Click(css(`input[name="auth"][value="header"]`)),
		chromedp.SendKeys(css("#header_name"), "Authorization"),
		chromedp.SendKeys(css("#header_value"), "k-123"),
		chromedp.Click(css(`#acknowledged`)),
		chromedp.Click(css(`form[action="/ui/servers"] button[type="submit"]:not([formaction])`)),
		chromedp.WaitVisible(css("#error-summary")))
	checkSummary(t, ctx, "the register form", "header_name",
		"The header name must start with x- and use only lowercase letters, digits and dashes")
	if got := shown(); !got["header_name"] || got["token"] {
		t.Errorf("after the refusal the header fields are not the ones shown: %v", got)
	}
	checkPage(t, ctx, "a refused register form")

	// A refused edit on the server page opens at the form.
	id := registerServer(t, c, "wiki", p.url(), "")
	expect(t, "save a tool", c.do("PUT", "/v1/mcp/servers/"+id+"/tools", map[string]any{"tools": []any{
		map[string]any{"name": "search", "description": "Search the wiki."},
	}}), http.StatusOK, "")
	registerServer(t, c, "tickets", p.url(), "")
	act(t, ctx, "rename to a taken name",
		chromedp.Navigate(in.base+"/ui/servers/"+id),
		chromedp.WaitVisible(css("#h-edit")),
		chromedp.SetValue(css(`form[action="/ui/servers/`+id+`"] #name`), "tickets"),
		chromedp.Click(css(`form[action="/ui/servers/`+id+`"] button[type="submit"]`)),
		chromedp.WaitVisible(css("#error-summary")))
	checkSummary(t, ctx, "the edit form", "name", "Another server already has this name")
	top := must(t, ctx, "where the page opened", chromedp.Evaluate[float64](`document.getElementById("error-summary").getBoundingClientRect().top`))
	height := must(t, ctx, "the window's height", chromedp.Evaluate[float64](`window.innerHeight`))
	if scrolled := must(t, ctx, "scroll", chromedp.Evaluate[float64](`window.scrollY`)); scrolled == 0 || top < 0 || top > height {
		t.Errorf("the refused edit opened at scroll %v with the summary at %v of %v: want the page at the form", scrolled, top, height)
	}
	checkPage(t, ctx, "a refused edit")
	screenshot(t, ctx, "refused-edit")
}

// checkSummary checks a refusal's summary: focused, announced, in words
// (no code, pattern or JSON in the main message), the code in small
// print, a link to the input with the reason, the input marked invalid
// and described by its error.
func checkSummary(t *testing.T, ctx context.Context, where, input, words string) {
	t.Helper()
	if got := must(t, ctx, "focus", chromedp.Evaluate[string](`document.activeElement.id`)); got != "error-summary" {
		t.Errorf("%s: the focus is on %q, want the error summary", where, got)
	}
	if got := must(t, ctx, "role", chromedp.Evaluate[string](`document.getElementById("error-summary").getAttribute("role")`)); got != "alert" {
		t.Errorf("%s: the summary's role = %q, want alert (announced)", where, got)
	}
	main := textOf(t, ctx, "#error-summary .refusal-words")
	if strings.ContainsAny(main, "^${}_\"") {
		t.Errorf("%s: the main message %q carries a code, a pattern or JSON", where, main)
	}
	if code := textOf(t, ctx, "#error-summary .support code"); code == "" {
		t.Errorf("%s: no code in small print", where)
	}
	link := textOf(t, ctx, `#error-summary a[href="#`+input+`"]`)
	if !strings.Contains(link, words) {
		t.Errorf("%s: the summary's link to #%s reads %q, want %q", where, input, link, words)
	}
	aria := must(t, ctx, "the input's ARIA", chromedp.Evaluate[[]string](`(() => {
		const el = document.querySelector("#error-summary a[href='#`+input+`']") && document.getElementById("`+input+`");
		const err = (el.getAttribute("aria-describedby") || "").split(" ").map(id => document.getElementById(id)).filter(e => e && e.classList.contains("field-error"));
		return [el.getAttribute("aria-invalid") || "", err.length ? err[0].textContent : ""];
	})()`))
	if aria[0] != "true" || !strings.Contains(aria[1], words) {
		t.Errorf("%s: #%s has aria-invalid %q and describes its error as %q, want true and %q", where, input, aria[0], aria[1], words)
	}
}
