package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/codelotse/codelotse/internal/npmtest"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// The accessibility checks of the web interface's Chromium tests, run on
// every page and state the tests reach (checkPage): axe-core, pinned in
// testdata/axe (package.json and package-lock.json, `npm ci` on first use
// like the interop SDKs) reports no violation of any impact, with every
// disclosure (<details>) open; at 390 px no page scrolls sideways; every
// focusable element shows a focus ring of at least 2 px with a contrast
// of at least 3:1 against what surrounds it (WCAG 2.2, 1.4.11 and 2.4.13).

const (
	axeDir     = "testdata/axe"
	axeRepoDir = "cmd/codelotse/testdata/axe"
	// narrowWidth is a phone's CSS width.
	narrowWidth = 390
	wideWidth   = 1280
)

var (
	axeOnce   sync.Once
	axeScript string
	axeErr    error
)

// axeSource installs the pinned axe-core when needed and returns its
// script.
func axeSource(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(axeDir)
	if err != nil {
		t.Fatal(err)
	}
	ensureAxe(t, dir)
	axeOnce.Do(func() {
		var b []byte
		b, axeErr = os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
		axeScript = string(b)
	})
	if axeErr != nil {
		t.Fatalf("read axe-core: %v", axeErr)
	}
	return axeScript
}

// ensureAxe runs `npm ci` in dir unless node_modules holds axe-core at
// the version package.json pins.
func ensureAxe(t *testing.T, dir string) {
	t.Helper()
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	want := pkg.Dependencies["axe-core"]
	if err != nil || want == "" || strings.ContainsAny(want, "^~<>=* |") {
		t.Fatalf("%s/package.json must pin axe-core to an exact version (%v)", axeRepoDir, err)
	}
	npmtest.Install(t, dir, axeRepoDir, func() string {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "package.json"))
		var got struct {
			Version string `json:"version"`
		}
		if err == nil && json.Unmarshal(b, &got) == nil && got.Version == want {
			return ""
		}
		return "node_modules lacks axe-core " + want
	})
}

// axeViolation is one rule axe-core found broken, with where.
type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// checkPage runs every check on the page as it is: axe-core at the
// browser's width with every disclosure open (and closed again after),
// the focus rings, then the page at 390 px (no sideways scrolling, axe
// again) and back at 1280 px.
func checkPage(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	runAxe(t, ctx, state)
	checkFocusRings(t, ctx, state)
	act(t, ctx, "narrow window", chromedp.EmulateViewport(narrowWidth, 844))
	wide := must(t, ctx, "widths", chromedp.Evaluate[[]float64](
		`[document.documentElement.scrollWidth, document.documentElement.clientWidth]`))
	if wide[0] > wide[1] {
		culprits := must(t, ctx, "what sticks out", chromedp.Evaluate[[]string](`(() => {
			const w = document.documentElement.clientWidth, out = [];
			for (const el of document.body.querySelectorAll("*")) {
				const r = el.getBoundingClientRect();
				if (r.right > w + 1 && ![...el.children].some(c => c.getBoundingClientRect().right > w + 1)) {
					out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + String(el.className).replace(/ /g, ".") : "") + " " + Math.round(r.right));
				}
			}
			return out.slice(0, 10);
		})()`))
		t.Errorf("%s: at %d px the page is %v px wide and scrolls sideways; sticking out: %v", state, narrowWidth, wide[0], culprits)
	}
	runAxe(t, ctx, state+" at 390 px")
	act(t, ctx, "wide window", chromedp.EmulateViewport(wideWidth, 1000))
}

// runAxe runs axe-core on the page with every <details> open.
func runAxe(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	src := axeSource(t)
	// axe-core needs the page's scripts (its timers): a test that turned
	// them off (browser_words_test.go) has them on again from here.
	scriptsOff(t, ctx, false)
	if ok := must(t, ctx, "axe loaded", chromedp.Evaluate[bool](`typeof window.axe === "object"`)); !ok {
		act(t, ctx, "load axe-core", chromedp.Evaluate[chromedp.Void](src+";undefined"))
	}
	raw := must(t, ctx, "run axe-core", chromedp.Evaluate[string](`(async () => {
		const closed = [...document.querySelectorAll("details:not([open])")];
		closed.forEach(d => d.open = true);
		try {
			const r = await axe.run(document, {resultTypes: ["violations"]});
			return JSON.stringify(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
				nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " " + (n.failureSummary || "").split("\n").slice(1, 2).join(""))})));
		} finally {
			closed.forEach(d => d.open = false);
		}
	})()`, chromedp.EvalAwaitPromise))
	var found []axeViolation
	if err := json.Unmarshal([]byte(raw), &found); err != nil {
		t.Fatalf("%s: axe-core's answer %q: %v", state, raw, err)
	}
	for _, v := range found {
		t.Errorf("%s: axe-core %s (%s): %s at %s", state, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "; "))
	}
}

// checkFocusRings focuses every focusable element of the page and checks
// its outline: at least 2 px, solid, and a contrast of at least 3:1
// against the background the ring is drawn on (the nearest opaque
// background of the element's parents).
func checkFocusRings(t *testing.T, ctx context.Context, state string) {
	t.Helper()
	// A headless page has no window focus, so :focus would never match.
	act(t, ctx, "emulate focus", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	}))
	bad := must(t, ctx, "focus rings", chromedp.Evaluate[[]string](`(() => {
		const rgb = s => (s.match(/[\d.]+/g) || []).map(Number);
		const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
			.reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
		const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
		const behind = el => {
			for (let p = el.parentElement; p; p = p.parentElement) {
				const c = rgb(getComputedStyle(p).backgroundColor);
				if (c.length === 3 || (c.length === 4 && c[3] === 1)) return c.slice(0, 3);
			}
			return [255, 255, 255];
		};
		const out = [];
		const sel = "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]";
		const before = document.activeElement;
		for (const el of document.querySelectorAll(sel)) {
			if (!el.checkVisibility()) continue;
			el.focus({preventScroll: true});
			if (document.activeElement !== el) continue;
			const cs = getComputedStyle(el);
			const width = parseFloat(cs.outlineWidth);
			const r = ratio(rgb(cs.outlineColor).slice(0, 3), behind(el));
			if (cs.outlineStyle === "none" || width < 2 || r < 3) {
				out.push(el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + " " + (el.textContent || el.name || "").trim().slice(0, 30) +
					": outline " + cs.outlineStyle + " " + cs.outlineWidth + " " + cs.outlineColor + ", contrast " + r.toFixed(2));
			}
		}
		if (document.activeElement && document.activeElement.blur) document.activeElement.blur();
		if (before && before !== document.body && before.focus) before.focus({preventScroll: true});
		return out.slice(0, 10);
	})()`))
	for _, b := range bad {
		t.Errorf("%s: focus ring: %s", state, b)
	}
}

// scriptsOff turns the page's scripts off (or on again); DevTools'
// evaluations, the checks' own, run either way.
func scriptsOff(t *testing.T, ctx context.Context, off bool) {
	t.Helper()
	act(t, ctx, "scripts off "+strconv.FormatBool(off), chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: off})
		return err
	}))
}
