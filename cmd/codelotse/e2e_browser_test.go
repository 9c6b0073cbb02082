//go:build signedoff

package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserWalkthrough is the user guide's walk-through in Chromium on
// the real binary: sign in, register a loopback TLS MCP server, discover,
// select and save its tool, turn a repository's policy on, run a review
// (submitted through the API, answered by the scripted model) and read its
// external-context line; then the notice on an instance that disables MCP
// context.
func TestBrowserWalkthrough(t *testing.T) {
	ctx := newBrowser(t)
	in, _ := scriptedInstance(t, map[string]any{
		"finder": []any{
			toolTurn(call("mcp_wiki_search", map[string]any{"query": "cache eviction"})),
			contentTurn(map[string]any{"findings": []any{scriptedFinding}}),
		},
		"verifier": []any{contentTurn(map[string]any{"verdicts": []any{map[string]any{"index": 0, "keep": true, "reason": "in the diff"}}})},
		"summary":  []any{contentTurn("One verified finding about the cache.")},
	})
	tenantID, c := in.tenant("browser", "tenant:manage,repo:manage")
	const bearer = "browser-walk-bearer-Zx81"
	in.secret(bearer)
	p := startMCP(t, era2026, func(p *mcpPeer) {
		p.addTool("search", "Searches the design wiki.", searchSchema(), readOnly(), "Wiki: the cache evicts nothing.")
		p.addTool("delete_page", "Deletes a page.", searchSchema(), nil, "deleted")
	})

	signInBrowser(t, ctx, in.base, c.token)
	loc := must(t, ctx, "location", chromedp.Location())
	if !strings.HasSuffix(loc, "/ui/servers") {
		t.Fatalf("a tenant admin starts at %s, want /ui/servers", loc)
	}
	checkPage(t, ctx, "the empty server list")

	// Register the server.
	act(t, ctx, "register",
		chromedp.Click(css(`a[href="/ui/servers/new"]`)),
		chromedp.WaitVisible(css("#name")),
		chromedp.SendKeys(css("#name"), "wiki"),
		chromedp.SendKeys(css("#url"), p.url()),
		chromedp.Click(css(`input[name="auth"][value="bearer"]`)),
		chromedp.SendKeys(css("#token"), bearer),
		chromedp.Click(css(`input[name="acknowledged"]`)),
		chromedp.Submit(css("#name")),
		chromedp.WaitVisible(css(`p.info`)))
	loc = must(t, ctx, "location", chromedp.Location())
	serverPath := regexp.MustCompile(`/ui/servers/[0-9a-f-]{36}`).FindString(loc)
	if serverPath == "" {
		t.Fatalf("after registering, the browser is at %s", loc)
	}
	if got := textOf(t, ctx, "dl.facts"); !strings.Contains(got, "bearer") || !strings.Contains(got, "…Zx81") || strings.Contains(got, bearer) {
		t.Errorf("the server page shows %q, want the bearer hint only", got)
	}

	// Discover, select, describe and save.
	act(t, ctx, "discover",
		chromedp.Click(css(`form[action$="/discover"] button`)),
		chromedp.WaitVisible(css("#h-discovery")))
	tools := textOf(t, ctx, "form.tools")
	if !strings.Contains(tools, "search") || !strings.Contains(tools, "delete_page") || !strings.Contains(tools, "may change data") {
		t.Errorf("the discovery lists %q, want both tools and delete_page as write-capable", tools)
	}
	checkPage(t, ctx, "the discovery")
	screenshot(t, ctx, "discovery")
	const description = "Search the team's design wiki for a term."
	act(t, ctx, "select search",
		chromedp.Click(css(`input[name="select"][value="search"]`)),
		chromedp.Clear(css(`textarea[name="desc:search"]`)),
		chromedp.SendKeys(css(`textarea[name="desc:search"]`), description))
	// The count is the page's script at work: the server rendered the
	// prefilled text's count.
	if count, want := textOf(t, ctx, `textarea[name="desc:search"] + p.help span`), strconv.Itoa(len([]rune(description))); count != want {
		t.Errorf("the live count shows %q after typing %s characters", count, want)
	}
	act(t, ctx, "save",
		chromedp.Click(css(`form.tools button[type="submit"]`)),
		chromedp.WaitVisible(css(`p.info`)))
	pinned := textOf(t, ctx, "#allowlist")
	if !strings.Contains(pinned, "search") || !strings.Contains(pinned, description) || strings.Contains(pinned, "delete_page") {
		t.Errorf("pinned tools = %q, want search with the admin description only", pinned)
	}

	// A repository with the policy on.
	act(t, ctx, "create a repository",
		chromedp.Navigate(in.base+"/ui/repositories"),
		chromedp.WaitVisible(css("#name")),
		chromedp.SendKeys(css("#name"), "acme/cache"),
		chromedp.Submit(css("#name")),
		chromedp.WaitVisible(css("#h-policy")))
	loc = must(t, ctx, "location", chromedp.Location())
	repoID := regexp.MustCompile(`[0-9a-f-]{36}$`).FindString(loc)
	act(t, ctx, "turn the policy on",
		chromedp.Click(css(`input[name="mode"][value="on"]`)),
		chromedp.Click(css(`input[name="servers"]`)),
		chromedp.SetValue(css("#maxCalls"), "3"),
		chromedp.Click(css(`form[action$="/policy"] button[type="submit"]`)),
		chromedp.WaitVisible(css(`p.info`)))
	if got := textOf(t, ctx, ".effective"); !strings.Contains(got, "mode on") || !strings.Contains(got, "wiki") || !strings.Contains(got, "at most 3 calls") || !strings.Contains(got, "MCP context is active") {
		t.Errorf("the effective policy reads %q, want on, wiki, 3 calls, active", got)
	}
	checkPage(t, ctx, "the saved policy")
	screenshot(t, ctx, "policy")

	// A review through the API; the browser reads its result.
	reviewID, r := runReview(t, c, repoID)
	expectDone(t, r)
	act(t, ctx, "open the review",
		chromedp.Navigate(in.base+"/ui/repositories/"+repoID),
		chromedp.Click(css(`a[href="/ui/reviews/`+reviewID+`"]`)),
		chromedp.WaitVisible(css("#external-context")))
	external := textOf(t, ctx, "#external-context")
	if !regexp.MustCompile(`^External context: 1 calls \([1-9][0-9]* bytes, 0 blocked\)$`).MatchString(external) {
		t.Errorf("the review shows %q, want External context: 1 calls (N bytes, 0 blocked)", external)
	}
	if got := textOf(t, ctx, "#h-findings + article"); !strings.Contains(got, "Unbounded cache") {
		t.Errorf("findings = %q", got)
	}
	if got := textOf(t, ctx, "#review-calls tbody"); !strings.Contains(got, "mcp_wiki_search") && !strings.Contains(got, "search") {
		t.Errorf("the review's call rows = %q, want the search call", got)
	}
	checkPage(t, ctx, "the review")
	screenshot(t, ctx, "review")

	// The server page lists the call.
	act(t, ctx, "open the server", chromedp.Navigate(in.base+serverPath), chromedp.WaitVisible(css("#h-calls")))
	if got := textOf(t, ctx, "#server-calls tbody"); !strings.Contains(got, "search") || !strings.Contains(got, "ok") {
		t.Errorf("recent calls = %q, want the ok search call", got)
	}
	checkPage(t, ctx, "the server with a call")
	screenshot(t, ctx, "server")

	// Another instance on the same database that disables MCP context:
	// the notice, and the forms disabled with the reason.
	closed := startInstanceOn(t, in.dsn, "QUAVON_MCP_CONTEXT=disabled")
	token := in.token(tenantID, "tenant:manage,repo:manage").token
	checkNotice(t, newBrowser(t), closed.base, token, "MCP context is disabled on this instance")
}
