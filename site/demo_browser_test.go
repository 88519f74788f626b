package site_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/finrepro/finrepro/cmd/finrepro/cli"
	"github.com/finrepro/finrepro/site"
)

// This test lives outside package site because it imports the command
// that writes the demo site, which imports site; it shares the browser
// harness of browser_test.go through export_test.go and adds parallel tabs.

// demoTabs is how many tabs load the demo pages in parallel.
const demoTabs = 4

// demoHooks runs in every frame before the page's own scripts: a dialog
// call or a blocked inline script or load is recorded in window.__pwned
// instead of stopping the page.
const demoHooks = `(() => {
	const hit = what => function () {
		(window.__pwned = window.__pwned || []).push(what + '(' + [...arguments].join(', ') + ')');
	};
	window.alert = hit('alert');
	window.confirm = hit('confirm');
	window.prompt = hit('prompt');
	document.addEventListener('securitypolicyviolation', e =>
		(window.__pwned = window.__pwned || []).push('CSP blocked ' + e.violatedDirective + ' ' + e.blockedURI));
})()`

// demoUndrawn lists the chart containers without a drawn canvas (at least
// 200 painted pixels) or a non-empty svg.
const demoUndrawn = `[...document.querySelectorAll('[data-chart]')].filter(el => {
	const s = el.querySelector('svg');
	if (s && s.querySelector('path, text, rect')) return false;
	const c = el.querySelector('canvas');
	if (!c || !c.width || !c.height) return true;
	const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	let n = 0;
	for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
	return n < 200;
}).map(el => el.id || el.getAttribute('data-chart'))`

// demoClipped lists the texts of the charts that reach past the edge of
// their chart, such as a rotated axis label cut at the left.
const demoClipped = `[...document.querySelectorAll('[data-chart]')].flatMap(el => {
	const c = typeof echarts === 'undefined' ? null : echarts.getInstanceByDom(el);
	if (!c) return [];
	const w = c.getWidth(), h = c.getHeight(), out = [];
	const hidden = e => {
		for (; e; e = e.parent || e.__hostTarget) if (e.invisible || e.ignore || e.getClipPath && e.getClipPath()) return true;
		return false;
	};
	for (const e of c.getZr().storage.getDisplayList(true)) {
		if ((e.type !== 'tspan' && e.type !== 'text') || !e.style || !e.style.text || hidden(e)) continue;
		const r = e.getBoundingRect().clone();
		if (e.transform) r.applyTransform(e.transform);
		if (r.x < -1 || r.y < -1 || r.x + r.width > w + 1 || r.y + r.height > h + 1)
			out.push(el.id + ': "' + e.style.text + '" spans x ' + Math.round(r.x) + '..' + Math.round(r.x + r.width) +
				', y ' + Math.round(r.y) + '..' + Math.round(r.y + r.height) + ' of ' + w + 'x' + h);
	}
	return out;
})`

// demoTooltips shows every chart's tooltip, so that its text is rendered.
const demoTooltips = `(() => {
	for (const el of document.querySelectorAll('[data-chart]')) {
		const c = echarts.getInstanceByDom(el);
		if (!c) continue;
		const n = c.getOption().series.length;
		for (let i = 0; i < n; i++) c.dispatchAction({type: 'showTip', seriesIndex: i, dataIndex: 0});
	}
	return 0;
})()`

// demoCheck inspects a loaded page: the banner, the charts, and any sign
// that hostile text ran or became markup (the checks of TestBrowserSafety,
// with svg allowed inside chart containers).
const demoCheck = `(() => {
	const bad = [];
	for (const p of window.__pwned || []) bad.push('executed: ' + p);
	for (const sel of ['img', 'iframe', 'object', 'embed', 'form', 'frame', 'base', 'meta[http-equiv=refresh]'])
		if (document.querySelector(sel)) bad.push('element ' + sel);
	for (const s of document.querySelectorAll('main svg'))
		if (!s.closest('[data-chart]')) bad.push('svg outside a chart');
	for (const e of document.querySelectorAll('*')) for (const a of e.attributes) {
		if (/^on/i.test(a.name)) bad.push(e.tagName + ' has ' + a.name);
		if (/^\s*(javascript|vbscript|data):/i.test(a.value)) bad.push(e.tagName + ' ' + a.name + ' is a ' + a.value.slice(0, 20) + ' URL');
	}
	for (const s of document.querySelectorAll('script'))
		if (!s.src && s.type !== 'application/json') bad.push('inline script: ' + s.textContent.slice(0, 60));
	const b = document.querySelector('body > .banner');
	const r = b && b.getBoundingClientRect();
	return {
		bad: bad,
		banner: !!b && b.textContent.startsWith('SYNTHETIC DATA') && r.width > 0 && r.height > 0,
		charts: document.querySelectorAll('[data-chart]').length,
		shownAsText: document.body.innerText.includes('<script>alert('),
	};
})()`

// A demoPage is what the check found on one page.
type demoPage struct {
	Bad         []string `json:"bad"`
	Banner      bool     `json:"banner"`
	Charts      int      `json:"charts"`
	ShownAsText bool     `json:"shownAsText"`
}

// A demoTab is one tab that records the console errors, exceptions,
// dialogs and non-file requests of the page it shows.
type demoTab struct {
	ctx context.Context
	mu  sync.Mutex
	bad []string
}

func (tab *demoTab) listen(ev any) {
	if msg := site.EventProblem(tab.ctx, ev, false); msg != "" {
		tab.mu.Lock()
		tab.bad = append(tab.bad, msg)
		tab.mu.Unlock()
	}
}

// problems returns what the tab recorded and forgets it.
func (tab *demoTab) problems() []string {
	tab.mu.Lock()
	defer tab.mu.Unlock()
	p := tab.bad
	tab.bad = nil
	return p
}

// newDemoTabs starts one headless Chromium with n tabs, each with the
// network blocked and the hooks installed.
func newDemoTabs(t *testing.T, exe string, n int) []*demoTab {
	t.Helper()
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// tabs in the background draw as fast as the one in front
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancel)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(bctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var block []*network.BlockPattern
	for _, s := range []string{"http", "https", "ws", "wss", "ftp"} {
		block = append(block, &network.BlockPattern{URLPattern: s + "://*:*/*", Block: true})
	}
	tabs := make([]*demoTab, n)
	for i := range tabs {
		tab := &demoTab{}
		ctx, cancelTab := chromedp.NewContext(bctx, chromedp.WithListener(tab.listen))
		t.Cleanup(cancelTab)
		ctx, cancelTime := context.WithTimeout(ctx, 2*time.Minute)
		t.Cleanup(cancelTime)
		tab.ctx = ctx
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
			t.Fatalf("open tab: %v", err)
		}
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: block}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: demoHooks}); err != nil {
			t.Fatal(err)
		}
		tabs[i] = tab
	}
	return tabs
}

// visit loads a page, waits for its charts, saves a screenshot to shot
// unless it is "", shows the charts' tooltips and checks the page. It
// returns the check and what went wrong.
func (tab *demoTab) visit(root, rel, shot string) (demoPage, []string) {
	var bad []string
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, rel))}).String()
	if err := chromedp.Do(tab.ctx, chromedp.Navigate(u)); err != nil {
		return demoPage{}, append(tab.problems(), "navigate: "+err.Error())
	}
	if left, err := site.WaitEmpty(tab.ctx, demoUndrawn, 20*time.Second, 20*time.Millisecond); err != nil {
		bad = append(bad, fmt.Sprintf("charts not drawn: %v (%v)", left, err))
	}
	if cl, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](demoClipped)); err != nil {
		bad = append(bad, "clipped: "+err.Error())
	} else {
		for _, c := range cl {
			bad = append(bad, "chart text cut off: "+c)
		}
	}
	if shot != "" {
		if err := tab.screenshot(shot); err != nil {
			bad = append(bad, err.Error())
		}
	}
	got, err := chromedp.Run(tab.ctx, chromedp.Evaluate[demoPage](demoCheck))
	if err != nil {
		return got, append(append(bad, tab.problems()...), "check: "+err.Error())
	}
	if got.Charts > 0 {
		if _, err := chromedp.Run(tab.ctx, chromedp.Evaluate[int](demoTooltips)); err != nil {
			bad = append(bad, "tooltips: "+err.Error())
		}
		time.Sleep(50 * time.Millisecond) // let a tooltip render
		again, err := chromedp.Run(tab.ctx, chromedp.Evaluate[demoPage](demoCheck))
		if err != nil {
			bad = append(bad, "check with tooltips: "+err.Error())
		}
		for _, b := range again.Bad {
			bad = append(bad, "with tooltips: "+b)
		}
	}
	return got, append(append(bad, got.Bad...), tab.problems()...)
}

// demoShotHeight caps the height of a screenshot: a full benchmark page of
// the demo is over 20000 px tall and takes seconds to encode.
const demoShotHeight = 4000

// screenshot saves the top of the page, at most demoShotHeight px, as a
// PNG file.
func (tab *demoTab) screenshot(file string) error { return tab.screenshotWidth(file, 1280) }

// screenshotWidth is screenshot of a window width px wide.
func (tab *demoTab) screenshotWidth(file string, width int64) error {
	h, err := chromedp.Run(tab.ctx, chromedp.Evaluate[float64](`document.documentElement.scrollHeight`))
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", file, err)
	}
	beyond, surface := true, true
	r, err := chromedp.Call(tab.ctx, cdppage.CaptureScreenshot, cdppage.CaptureScreenshotParams{
		Format:                cdppage.CaptureScreenshotFormatPng,
		Clip:                  &cdppage.Viewport{Width: float64(width), Height: min(h, demoShotHeight), Scale: 1},
		CaptureBeyondViewport: &beyond,
		FromSurface:           &surface,
	})
	if err != nil {
		return fmt.Errorf("screenshot %s: %w", file, err)
	}
	return os.WriteFile(file, r.Data, 0o644)
}

// TestDemoBrowser writes the real demo site with `finrepro reproduce` and
// loads every page of it from file:// in headless Chromium, in parallel
// tabs, with the network blocked: no console error, exception, dialog, CSP
// violation or request other than file://; every chart container drawn
// and no chart text cut at the chart's edge; the SYNTHETIC DATA banner
// shown on every page; none of the hostile demo
// system's markup (script tags, onerror=, javascript: links) run or
// become markup, also with the charts' tooltips shown. Screenshots of the
// top of the index and of a benchmark page go to the artifacts folder.
func TestDemoBrowser(t *testing.T) {
	exe := site.Chromium(t)
	t.Parallel()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := []string{"reproduce", "--quiet", "--out", out}
	if code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("finrepro %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	root := filepath.Join(out, "site")
	var all []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			rel, _ := filepath.Rel(root, p)
			all = append(all, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(all)
	for _, want := range []string{"index.html", "sensitivity.html", "icbcbench.html", "findeepresearch.html", "findeepforecast.html", "finresearchbench2.html"} {
		if !slices.Contains(all, want) {
			t.Errorf("the demo site has no %s", want)
		}
	}
	if !slices.ContainsFunc(all, func(p string) bool { return strings.HasPrefix(p, "systems/hostile-demo-synthetic-") }) {
		t.Errorf("the demo site has no page for the hostile demo system; pages: %v", all)
	}
	if len(all) < 50 {
		t.Fatalf("only %d pages in the demo site", len(all))
	}
	shots := map[string]string{"index.html": "index.png", "findeepforecast.html": "findeepforecast.png"}
	dir := site.Artifacts(t, "site-demo")

	start := time.Now()
	tabs := newDemoTabs(t, exe, demoTabs)
	work := make(chan string)
	var (
		mu     sync.Mutex
		seen   = map[string]demoPage{}
		faults = map[string][]string{}
		wg     sync.WaitGroup
	)
	for _, tab := range tabs {
		wg.Go(func() {
			for p := range work {
				shot := ""
				if name, ok := shots[p]; ok {
					shot = filepath.Join(dir, name)
				}
				got, bad := tab.visit(root, p, shot)
				mu.Lock()
				seen[p], faults[p] = got, bad
				mu.Unlock()
			}
		})
	}
	for _, p := range all {
		work <- p
	}
	close(work)
	wg.Wait()
	t.Logf("%d pages in %d tabs in %v", len(all), len(tabs), time.Since(start).Round(time.Millisecond))

	charts, asText := 0, 0
	for _, p := range all {
		for _, e := range faults[p] {
			t.Errorf("%s: %s", p, e)
		}
		got := seen[p]
		if !got.Banner {
			t.Errorf("%s: no SYNTHETIC DATA banner in view", p)
		}
		charts += got.Charts
		if got.ShownAsText {
			asText++
		}
	}
	for _, p := range []string{"icbcbench.html", "findeepresearch.html", "findeepforecast.html", "finresearchbench2.html"} {
		if seen[p].Charts == 0 {
			t.Errorf("%s: no chart", p)
		}
	}
	if charts < 10 {
		t.Errorf("%d charts over the demo site, want at least 10", charts)
	}
	// the hostile system's script tags show as text, so the checks above
	// looked at pages that carry them
	if asText == 0 {
		t.Error("no page shows the hostile demo system's <script>alert( as text")
	}
	for i, tab := range tabs {
		for _, e := range tab.problems() {
			t.Errorf("tab %d after the last page: %s", i, e)
		}
	}
}
