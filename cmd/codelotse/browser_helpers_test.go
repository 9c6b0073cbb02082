package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Browser tests drive the web interface in a real Chromium (Debian's
// chromium package; .ci/run installs it) through chromedp. They never
// skip: without Chromium they fail with the package to install.

// chromiumPath is CHROMIUM when set, else Debian's /usr/bin/chromium.
func chromiumPath(t *testing.T) string {
	t.Helper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the browser tests need Chromium at %s (apt-get install chromium, or set CHROMIUM): %v", path, err)
	}
	return path
}

// newBrowser starts a headless Chromium with a fresh profile; the context
// ends with the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return newBrowserWith(t)
}

// newBrowserWith is newBrowser with extra flags.
func newBrowserWith(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1000),
	}
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	// The first call starts the browser, which lives as long as ctx: it
	// gets no timeout; every later call does (see act).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// actTimeout bounds one group of browser actions.
const actTimeout = time.Minute

// act runs browser actions and fails the test on an error, with the
// page's text to show where it stood.
func act(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, actTimeout)
	defer cancel()
	if err := chromedp.Do(actx, steps...); err != nil {
		body, _ := get(ctx, chromedp.Text(chromedp.CSS("body")))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, body)
	}
}

// get runs one browser action that answers a value.
func get[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	actx, cancel := context.WithTimeout(ctx, actTimeout)
	defer cancel()
	return chromedp.Run(actx, a)
}

// must runs an action that answers a value and fails the test on an error.
func must[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := get(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// css is a CSS selector.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// signInBrowser opens the instance's start page, which leads to the sign
// in form, and signs in with token.
func signInBrowser(t *testing.T, ctx context.Context, base, token string) {
	t.Helper()
	act(t, ctx, "open the start page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(css("#token")))
	loc := must(t, ctx, "location", chromedp.Location())
	if !strings.HasSuffix(loc, "/ui/login") {
		t.Fatalf("/ led to %s, want the sign-in page", loc)
	}
	act(t, ctx, "sign in",
		chromedp.SendKeys(css("#token"), token),
		chromedp.Submit(css("#token")),
		chromedp.WaitVisible(css("header nav")))
}

// textOf returns the text of the first element matching sel.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return must(t, ctx, "read "+sel, chromedp.Text(css(sel)))
}

// screenshot writes the page as docs/ui/<name>.png (1280 px wide) and
// docs/ui/<name>-390.png (a phone's 390 px) when CODELOTSE_UI_SCREENSHOTS
// names a directory (make screenshots).
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CODELOTSE_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	for _, w := range []struct {
		width  int64
		suffix string
	}{{1280, ""}, {390, "-390"}} {
		act(t, ctx, "width for "+name, chromedp.EmulateViewport(w.width, 1000))
		png := must(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
		if err := os.WriteFile(filepath.Join(dir, name+w.suffix+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	act(t, ctx, "width back", chromedp.EmulateViewport(1280, 1000))
}

// checkNotice signs in and checks that the pages show the notice with
// heading and that the register form is disabled with its reason.
func checkNotice(t *testing.T, ctx context.Context, base, token, heading string) {
	t.Helper()
	signInBrowser(t, ctx, base, token)
	for _, path := range []string{"/ui/servers", "/ui/repositories", "/ui/defaults"} {
		act(t, ctx, "open "+path, chromedp.Navigate(base+path), chromedp.WaitVisible(css(".notice")))
		if got := textOf(t, ctx, ".notice h2"); got != heading {
			t.Errorf("%s: notice %q, want %q", path, got, heading)
		}
		checkPage(t, ctx, path+" with the notice")
	}
	act(t, ctx, "open the register form", chromedp.Navigate(base+"/ui/servers/new"), chromedp.WaitVisible(css("#name")))
	disabled := must(t, ctx, "read the fieldset", chromedp.Evaluate[bool](`document.querySelector("form[action='/ui/servers'] fieldset").disabled`))
	if !disabled {
		t.Error("the register form is enabled while MCP context is closed")
	}
	if got := textOf(t, ctx, ".gated"); !strings.Contains(got, heading) {
		t.Errorf("the disabled form says %q, want the reason %q", got, heading)
	}
	screenshot(t, ctx, "notice")
}
