package site

import (
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
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// browserEnv, set to 1, makes the browser tests fail instead of skip when
// Chromium is missing (CI sets it).
const browserEnv = "FINREPRO_BROWSER_TESTS"

// chromium returns the Chromium binary, or skips the test when there is
// none and browserEnv is not set.
func chromium(t *testing.T) string {
	t.Helper()
	required := os.Getenv(browserEnv) == "1"
	if testing.Short() && !required {
		t.Skip("browser test skipped in short mode")
	}
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if required {
		t.Fatalf("%s=1 but no Chromium at /usr/bin/chromium (apt-get install chromium)", browserEnv)
	}
	t.Skipf("no Chromium at /usr/bin/chromium; set %s=1 to make this a failure", browserEnv)
	return ""
}

// A browser is one headless Chromium tab with every console error,
// exception, dialog and non-file request of the pages it loads recorded.
type browser struct {
	ctx context.Context
	mu  sync.Mutex
	bad []string // problems seen, prefixed with the page
	cur string   // the page being loaded
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium(t)
	b := &browser{}
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(b.listen))
	t.Cleanup(cancelTab)
	ctx, cancelTime := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTime)
	b.ctx = ctx
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var block []*network.BlockPattern
	for _, s := range []string{"http", "https", "ws", "wss", "ftp"} {
		block = append(block, &network.BlockPattern{URLPattern: s + "://*:*/*", Block: true})
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
	return b
}

// listen runs in the tab's message loop: it only records.
func (b *browser) listen(ev any) {
	if msg := eventProblem(b.ctx, ev, true); msg != "" {
		b.mu.Lock()
		b.bad = append(b.bad, b.cur+": "+msg)
		b.mu.Unlock()
	}
}

// eventProblem describes a browser event that is a problem for a page of
// the site: a console error, an exception, an error log entry, a request
// that is not to a local file (data: URLs too unless allowData) or a
// dialog, which it dismisses. It returns "" for any other event. It runs
// in a tab's message loop, so it must not block.
func eventProblem(ctx context.Context, ev any, allowData bool) string {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			return "console." + string(ev.Type) + ": " + strings.Join(args, " ")
		}
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		msg := fmt.Sprintf("exception: %s at %s:%d", d.Text, d.URL, d.LineNumber)
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		return msg
	case *cdplog.EventEntryAdded:
		if ev.Entry.Level == cdplog.EntryLevelError {
			return "log: " + ev.Entry.Text + " " + ev.Entry.URL
		}
	case *network.EventRequestWillBeSent:
		u := ev.Request.URL
		if !strings.HasPrefix(u, "file://") && !(allowData && strings.HasPrefix(u, "data:")) && u != "about:blank" {
			return "request to " + u
		}
	case *cdppage.EventJavascriptDialogOpening:
		go chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		return "dialog: " + ev.Message
	}
	return ""
}

// load opens a page of the site and waits until every chart has drawn.
func (b *browser) load(t *testing.T, root, rel string) {
	t.Helper()
	b.mu.Lock()
	b.cur = rel
	b.mu.Unlock()
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, rel))}).String()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	// every chart container has a canvas with drawn pixels
	const undrawn = `[...document.querySelectorAll('[data-chart]')].filter(el => {
		const c = el.querySelector('canvas');
		if (!c || !c.width || !c.height) return true;
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		let n = 0;
		for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
		return n < 200;
	}).map(el => el.id)`
	if left, err := waitEmpty(b.ctx, undrawn, 30*time.Second, 50*time.Millisecond); err != nil {
		t.Errorf("%s: charts not drawn: %v (%v)", rel, left, err)
	}
}

// waitEmpty evaluates expr, a list of what is not ready yet, until it is
// empty, and returns what is still listed when timeout passes. It goes
// through Evaluate, which runs in the page's current document, and not
// Poll, which can keep the context of the document before a navigation
// and fail with "Cannot find context with specified id".
func waitEmpty(ctx context.Context, expr string, timeout, every time.Duration) ([]string, error) {
	deadline := time.Now().Add(timeout)
	for {
		left, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](expr))
		if err == nil && len(left) == 0 {
			return nil, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("still listed after %v", timeout)
			}
			return left, err
		}
		time.Sleep(every)
	}
}

func (b *browser) eval(t *testing.T, expr string) []string {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](expr))
	if err != nil {
		t.Fatalf("%s: %v", b.cur, err)
	}
	return v
}

// problems returns what the browser recorded and forgets it.
func (b *browser) problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.bad
	b.bad = nil
	return p
}

// pages lists the HTML pages of a site, sorted.
func pages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// artifacts returns the folder for screenshots: $FINREPRO_ARTIFACTS/sub,
// or .artifacts/sub at the repository root.
func artifacts(t *testing.T, sub string) string {
	t.Helper()
	dir := os.Getenv("FINREPRO_ARTIFACTS")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".artifacts")
				break
			}
			if filepath.Dir(d) == d {
				dir = filepath.Join(wd, ".artifacts")
				break
			}
		}
	}
	dir = filepath.Join(dir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(artifacts(t, "site"), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowser loads every page of the fixture site from file:// with the
// network blocked: no console error, exception, dialog or request other
// than file://, every chart drawn, tables sortable from the keyboard, no
// horizontal scrolling on a phone; screenshots go to the artifacts folder.
func TestBrowser(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	root := filepath.Join(t.TempDir(), "site")
	if _, err := Write(root, fixture(false)); err != nil {
		t.Fatal(err)
	}
	all := pages(t, root)
	if len(all) < 10 {
		t.Fatalf("only %d pages: %v", len(all), all)
	}
	charts := 0
	for _, p := range all {
		b.load(t, root, p)
		n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-chart]').length`))
		if err != nil {
			t.Fatal(err)
		}
		charts += n
		switch p {
		case "index.html", "icbcbench.html":
			b.screenshot(t, strings.TrimSuffix(p, ".html")+".png")
		}
	}
	if want := 7; charts != want {
		t.Errorf("%d charts drawn over the site, want %d", charts, want)
	}
	for _, p := range b.problems() {
		t.Error(p)
	}

	t.Run("keyboard sort", func(t *testing.T) {
		b.load(t, root, "icbcbench.html")
		btn := `#t0 thead th:nth-child(2) button`
		if err := chromedp.Do(b.ctx, chromedp.Focus(chromedp.CSS(btn)), chromedp.KeyEvent("\r")); err != nil {
			t.Fatal(err)
		}
		got := b.eval(t, `[document.querySelector('#t0 thead th:nth-child(2)').getAttribute('aria-sort'),
			...[...document.querySelectorAll('#t0 tbody tr')].map(r => r.cells[1].getAttribute('data-v'))]`)
		if got[0] != "ascending" || !slices.IsSortedFunc(got[1:], func(a, b string) int {
			var x, y float64
			fmt.Sscan(a, &x)
			fmt.Sscan(b, &y)
			return int(x*100) - int(y*100)
		}) {
			t.Errorf("after Enter on the header: aria-sort and column = %v, want ascending", got)
		}
		if err := chromedp.Do(b.ctx, chromedp.KeyEvent(" ")); err != nil {
			t.Fatal(err)
		}
		if got := b.eval(t, `[document.querySelector('#t0 thead th:nth-child(2)').getAttribute('aria-sort')]`); got[0] != "descending" {
			t.Errorf("after Space: aria-sort %v, want descending", got)
		}
	})

	t.Run("phone", func(t *testing.T) {
		if err := chromedp.Do(b.ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2))); err != nil {
			t.Fatal(err)
		}
		defer chromedp.Do(b.ctx, chromedp.EmulateReset())
		for _, p := range []string{"index.html", "icbcbench.html", "tasks/icbcbench/en-001.html"} {
			b.load(t, root, p)
			w := b.eval(t, `[String(document.documentElement.scrollWidth), String(window.innerWidth)]`)
			if w[0] != w[1] {
				t.Errorf("%s on a 390 px phone: page %s px wide, viewport %s px", p, w[0], w[1])
			}
			if p == "index.html" {
				b.screenshot(t, "index-phone.png")
			}
		}
	})
	for _, p := range b.problems() {
		t.Error(p)
	}
}

// TestBrowserSafety feeds script tags, event handlers, javascript: links,
// </script> and raw HTML through every text of the input and asserts in
// the browser that none of it runs or becomes markup, also with every
// chart's tooltip shown.
func TestBrowserSafety(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	root := filepath.Join(t.TempDir(), "site")
	if _, err := Write(root, fixture(true)); err != nil {
		t.Fatal(err)
	}
	const check = `(() => {
		const bad = [];
		if (window.__pwned !== undefined) bad.push('__pwned = ' + window.__pwned);
		for (const sel of ['img', 'iframe', 'object', 'embed', 'main svg', 'form'])
			if (document.querySelector(sel)) bad.push('element ' + sel);
		for (const e of document.querySelectorAll('*')) for (const a of e.attributes) {
			if (/^on/i.test(a.name)) bad.push(e.tagName + ' has ' + a.name);
			if (/^\s*javascript:/i.test(a.value)) bad.push(e.tagName + ' ' + a.name + ' is a javascript: URL');
		}
		for (const s of document.querySelectorAll('script'))
			if (!s.src && s.type !== 'application/json') bad.push('inline script: ' + s.textContent.slice(0, 60));
		return bad;
	})()`
	const tooltips = `(() => {
		for (const el of document.querySelectorAll('[data-chart]')) {
			const c = echarts.getInstanceByDom(el);
			const n = c.getOption().series.length;
			for (let i = 0; i < n; i++) c.dispatchAction({type: 'showTip', seriesIndex: i, dataIndex: 0});
		}
		return [];
	})()`
	seen := 0
	for _, p := range pages(t, root) {
		b.load(t, root, p)
		for _, bad := range b.eval(t, check) {
			t.Errorf("%s: %s", p, bad)
		}
		if n, _ := chromedp.Run(b.ctx, chromedp.Evaluate[int](`document.querySelectorAll('[data-chart]').length`)); n > 0 {
			b.eval(t, tooltips)
			time.Sleep(50 * time.Millisecond) // let a tooltip render
			for _, bad := range b.eval(t, check) {
				t.Errorf("%s with tooltips: %s", p, bad)
			}
		}
		// folded verdicts are drawn from their JSON when opened
		if n, _ := chromedp.Run(b.ctx, chromedp.Evaluate[int](`(() => { const d = document.querySelectorAll('details'); d.forEach(e => e.open = true); return d.length; })()`)); n > 0 {
			time.Sleep(50 * time.Millisecond) // let the toggle events run
			for _, bad := range b.eval(t, check) {
				t.Errorf("%s with every fold open: %s", p, bad)
			}
		}
		if p == "tasks/icbcbench/en-001.html" {
			b.screenshot(t, "safety-task.png")
		}
		// the payload is shown as text
		if txt, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body.innerText`)); strings.Contains(txt, payloads[0]) {
			seen++
		}
	}
	if seen < 5 {
		t.Errorf("the hostile text shows as text on %d pages, want it on most", seen)
	}
	for _, p := range b.problems() {
		t.Error(p)
	}
}
