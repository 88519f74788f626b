package site_test

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/finrepro/finrepro/cmd/finrepro/cli"
	"github.com/finrepro/finrepro/site"
)

// reviewPages are the pages TestReviewBrowser looks at as a reviewer
// would, at both window sizes; the first system and task pages are added.
var reviewPages = []string{"index.html", "icbcbench.html", "findeepresearch.html", "findeepforecast.html", "finresearchbench2.html", "sensitivity.html"}

// reviewSizes are the window sizes of the review: a desktop and a phone.
var reviewSizes = [][2]int64{{1400, 1000}, {400, 900}}

// TestReviewBrowser checks the full-scale demo's site (see reviewSite) in
// headless Chromium as a reviewer uses it: each main page, a system page
// and a task page of each benchmark at 1400x1000 and 400x900, with
// screenshots in the artifacts folder (site-review/) and no sideways
// scrolling of the page; a table filtered and sorted, its view kept in
// the URL fragment and restored after a reload; every link of a benchmark
// page resolving to a file and element that exist; the
// published-vs-computed summary shown; an abbreviated heatmap axis label
// named in full on hover; a task page's judge exchange opened from its
// verdict's link; and the checks of TestDemoBrowser (nothing of the
// hostile demo system runs) on every page looked at, also with every fold
// open. The browser part must take under 90 s.
func TestReviewBrowser(t *testing.T) {
	exe := site.Chromium(t)
	t.Parallel()
	root := reviewSite(t)
	start := time.Now()
	pages := append([]string(nil), reviewPages...)
	for _, glob := range []string{"systems/hostile-demo-synthetic-*.html", "tasks/icbcbench/*.html", "tasks/findeepresearch/*.html", "tasks/findeepforecast/*.html", "tasks/finresearchbench2/*.html"} {
		m, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(glob)))
		if err != nil || len(m) == 0 {
			t.Fatalf("no page %s (%v)", glob, err)
		}
		rel, _ := filepath.Rel(root, m[0])
		pages = append(pages, filepath.ToSlash(rel))
	}
	dir := site.Artifacts(t, "site-review")
	tab := newDemoTabs(t, exe, 1)[0]

	t.Run("pages", func(t *testing.T) {
		for _, size := range reviewSizes {
			if err := chromedp.Do(tab.ctx, chromedp.EmulateViewport(size[0], size[1])); err != nil {
				t.Fatal(err)
			}
			for _, p := range pages {
				name := strings.NewReplacer("/", "_", ".html", "").Replace(p)
				shot := filepath.Join(dir, fmt.Sprintf("%s-%d.png", name, size[0]))
				_, bad := tab.visitAt(root, p, shot, size[0])
				for _, b := range bad {
					t.Errorf("%s at %dx%d: %s", p, size[0], size[1], b)
				}
				// every fold open (folded verdicts and outputs are drawn
				// from their JSON): still nothing runs or becomes markup;
				// once per page, at the first size
				if size == reviewSizes[0] {
					if n, _ := chromedp.Run(tab.ctx, chromedp.Evaluate[int](`(() => { const d = document.querySelectorAll('main details'); d.forEach(e => e.open = true); return d.length; })()`)); n > 0 {
						time.Sleep(50 * time.Millisecond)
						again, err := chromedp.Run(tab.ctx, chromedp.Evaluate[demoPage](demoCheck))
						if err != nil {
							t.Fatal(err)
						}
						for _, b := range again.Bad {
							t.Errorf("%s with every fold open: %s", p, b)
						}
					}
				}
				w, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`))
				if err != nil {
					t.Fatal(err)
				}
				if w[0] > w[1] {
					wide, _ := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](reviewWide))
					t.Errorf("%s at %dx%d scrolls sideways: the page is %d px wide; widest: %v", p, size[0], size[1], w[0], wide)
				}
			}
		}
	})
	if err := chromedp.Do(tab.ctx, chromedp.EmulateViewport(1400, 1000)); err != nil {
		t.Fatal(err)
	}

	t.Run("charts", func(t *testing.T) {
		// every chart of the benchmark pages, one screenshot each, to look
		// at; on request, as it costs a third of the test
		if os.Getenv("FINREPRO_CHART_SHOTS") == "" {
			t.Skip("FINREPRO_CHART_SHOTS=1 saves a screenshot of every chart")
		}
		for _, p := range reviewPages[1:5] {
			if _, bad := tab.visitAt(root, p, "", 1400); len(bad) > 0 {
				t.Errorf("%s: %v", p, bad)
			}
			ids, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('figure.chart-fig')].map(f => f.id)`))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range ids {
				png, err := chromedp.Run(tab.ctx, chromedp.Screenshot(chromedp.CSS("#"+id)))
				if err != nil {
					t.Errorf("%s #%s: %v", p, id, err)
					continue
				}
				if err := os.WriteFile(filepath.Join(dir, "chart-"+strings.TrimSuffix(p, ".html")+"-"+id+".png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	t.Run("filter, sort and the fragment", func(t *testing.T) {
		const page = "findeepresearch.html"
		tab.open(t, root, page)
		// the first filterable table, and a word from its third row
		probe, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](`(() => {
			const t = [...document.querySelectorAll('table[data-table]')].find(t => t.filterInput);
			if (!t) return [];
			const id = t.getAttribute('data-table');
			return [id, t.tBodies[0].rows[2].cells[0].textContent.trim()];
		})()`))
		if err != nil || len(probe) != 2 {
			t.Fatalf("no filterable table on %s: %v %v", page, probe, err)
		}
		id, word := probe[0], probe[1]
		sel := `table[data-table="` + id + `"]`
		if err := chromedp.Do(tab.ctx,
			chromedp.SendKeys(chromedp.CSS(`#`+id+` .filter input`), word),
			chromedp.Click(chromedp.CSS(sel+` thead th:nth-child(2) button`)),
			chromedp.Click(chromedp.CSS(sel+` thead th:nth-child(2) button`))); err != nil {
			t.Fatal(err)
		}
		view := `(() => {
			const t = document.querySelector('` + sel + `');
			const rows = [...t.tBodies[0].rows];
			return [location.hash, t.filterInput ? t.filterInput.value : '', String(rows.filter(r => r.hidden).length),
				rows.filter(r => !r.hidden).map(r => r.cells[0].textContent.trim()).join('|')];
		})()`
		before, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](view))
		if err != nil {
			t.Fatal(err)
		}
		if before[2] == "0" {
			t.Errorf("filtering %q hid no row", word)
		}
		if !strings.Contains(before[0], "table="+id) || !strings.Contains(before[0], "sort=") || !strings.Contains(before[0], "dir=desc") || !strings.Contains(before[0], "q=") {
			t.Errorf("fragment %q does not hold the table, sort, direction and filter", before[0])
		}
		u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, page))}).String() + before[0]
		if err := chromedp.Do(tab.ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		after, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](view))
		if err != nil {
			t.Fatal(err)
		}
		if after[1] != word || after[2] != before[2] || after[3] != before[3] {
			t.Errorf("after a reload of %s: filter %q, %s hidden, rows %.200s; before: %q, %s hidden, rows %.200s",
				before[0], after[1], after[2], after[3], before[1], before[2], before[3])
		}
		for _, p := range tab.problems() {
			t.Error(p)
		}
	})

	t.Run("links of benchmark pages", func(t *testing.T) {
		ids := map[string]map[string]bool{}
		idsOf := func(file string) map[string]bool {
			if m, ok := ids[file]; ok {
				return m
			}
			m := map[string]bool{}
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
			if err == nil {
				for _, x := range regexp.MustCompile(` id="([^"]+)"`).FindAllSubmatch(b, -1) {
					m[string(x[1])] = true
				}
			} else {
				m = nil
			}
			ids[file] = m
			return m
		}
		checked := 0
		for _, p := range reviewPages[1:5] {
			tab.open(t, root, p)
			hrefs, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('main a[href]')].map(a => a.getAttribute('href'))`))
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hrefs {
				file, frag, _ := strings.Cut(h, "#")
				target := p
				if file != "" {
					target = path.Join(path.Dir(p), file)
				}
				if strings.HasPrefix(target, "../") {
					// a download next to the site
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
						t.Errorf("%s: download %q: %v", p, h, err)
					}
					continue
				}
				m := idsOf(target)
				switch {
				case m == nil:
					t.Errorf("%s: link %q: no file %s", p, h, target)
				case frag != "" && !strings.Contains(frag, "=") && !m[frag]:
					t.Errorf("%s: link %q: no element %q in %s", p, h, frag, target)
				}
				checked++
			}
		}
		if checked < 100 {
			t.Errorf("only %d links checked on the benchmark pages", checked)
		}
	})

	t.Run("a verdict's exchange", func(t *testing.T) {
		// on a task page of each benchmark with judges, the first
		// verdict's link opens its exchange, whose request and response
		// are drawn as the JSON the cache holds
		for _, p := range pages {
			if !strings.HasPrefix(p, "tasks/") || strings.HasPrefix(p, "tasks/findeepforecast/") {
				continue
			}
			tab.open(t, root, p)
			// folded verdicts are drawn when their fold opens
			step := func(js string) []string {
				t.Helper()
				got, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](js))
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(100 * time.Millisecond)
				return got
			}
			step(`[...document.querySelectorAll('details[data-verdicts]')].map(d => { d.open = true; return d.id; })`)
			if got := step(`(() => {
				const a = document.querySelector('table.verdicts a.xref');
				if (!a) return ['no verdict link'];
				a.click();
				return [a.getAttribute('href')];
			})()`); got[0] == "no verdict link" {
				t.Errorf("%s: %v", p, got)
				continue
			}
			// the fold opens on the fragment's change and fills on its
			// toggle: both events come after the click
			var got []string
			for wait := 0; wait < 20; wait++ {
				got = step(`(() => {
				const d = document.getElementById(decodeURIComponent(location.hash.slice(1)));
				if (!d || !d.open) return ['fold not open', location.hash];
				const parts = [...d.querySelectorAll('pre[data-part]')].map(p => p.textContent);
				if (parts.length !== 2) return ['not embedded: ' + d.textContent.slice(0, 200)];
				try { JSON.parse(parts[0]); JSON.parse(parts[1]); } catch (e) { return ['not JSON: ' + e + ' ' + parts[0].slice(0, 80)]; }
				return ['ok', location.hash, String(parts[0].length)];
			})()`)
				if got[0] == "ok" {
					break
				}
			}
			if got[0] != "ok" {
				t.Errorf("%s: %v", p, got)
			}
			png, err := chromedp.Run(tab.ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			name := "exchange-" + strings.NewReplacer("/", "_", ".html", "").Replace(strings.TrimPrefix(p, "tasks/")) + ".png"
			if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, pr := range tab.problems() {
				t.Errorf("%s: %s", p, pr)
			}
		}
	})

	t.Run("heatmap axis labels", func(t *testing.T) {
		// the pointer on an abbreviated axis label of a heatmap: its full
		// name shows in the chart's tooltip (canvas text) and as the
		// chart's title
		tab.open(t, root, "sensitivity.html")
		probe, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]any](reviewAxisLabel))
		if err != nil || len(probe) != 4 {
			t.Fatalf("no abbreviated heatmap axis label on sensitivity.html: %v %v", probe, err)
		}
		id, short := probe[0].(string), probe[1].(string)
		x, y := probe[2].(float64), probe[3].(float64)
		if err := chromedp.Do(tab.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(150 * time.Millisecond)
		got, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](`(() => {
			const el = document.getElementById(`+strconv.Quote(id)+`);
			const c = echarts.getInstanceByDom(el);
			const texts = c.getZr().storage.getDisplayList(true).filter(e => e.type === 'tspan').map(e => String(e.style.text));
			return [el.title, texts.join('\n')];
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		head, tail, _ := strings.Cut(short, "…")
		full := got[0]
		if len(full) <= len(short) || !strings.HasPrefix(full, head) || !strings.HasSuffix(full, tail) {
			t.Errorf("hovering %q in #%s: title %q, want the full name", short, id, full)
		}
		if !slices.Contains(strings.Split(got[1], "\n"), full) {
			t.Errorf("hovering %q in #%s: the chart's tooltip does not show %q", short, id, full)
		}
		if err := chromedp.Do(tab.ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 1, 1)); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("published vs computed", func(t *testing.T) {
		tab.open(t, root, "finresearchbench2.html")
		got, err := chromedp.Run(tab.ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#published .pub')].map(s =>
			(s.querySelector('.summary') || {}).textContent + ' | ' + s.querySelectorAll('td.v-ok, td.v-near, td.v-bad, td.v-none').length)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			t.Fatal("no published table on finresearchbench2.html")
		}
		summary := regexp.MustCompile(`^\d+ cells compared: \d+ reproduced, \d+ within twice the tolerance, \d+ differ`)
		for _, g := range got {
			if !summary.MatchString(g) || strings.HasSuffix(g, "| 0") {
				t.Errorf("published table: %q, want a summary and coloured cells", g)
			}
		}
		// the view comes first on the page
		first, err := chromedp.Run(tab.ctx, chromedp.Evaluate[string](`document.querySelector('main section').id`))
		if err != nil || first != "published" {
			t.Errorf("first section %q (%v), want published", first, err)
		}
	})
	t.Logf("review of %d pages at %d sizes in %v (the browser part)", len(pages), len(reviewSizes), time.Since(start).Round(time.Millisecond))
	if d := time.Since(start); d > 90*time.Second {
		t.Errorf("the review took %v, over 90 s", d)
	}
}

// visitAt is visit with screenshots as wide as the window.
func (tab *demoTab) visitAt(root, rel, shot string, width int64) (demoPage, []string) {
	got, bad := tab.visit(root, rel, "")
	if shot != "" {
		if err := tab.screenshotWidth(shot, width); err != nil {
			bad = append(bad, err.Error())
		}
	}
	return got, bad
}

// reviewWide lists the outermost elements that reach past the window's
// right edge, to say what makes a page scroll sideways.
const reviewWide = `[...document.querySelectorAll('body *')].filter(e => {
	const r = e.getBoundingClientRect();
	if (r.right <= window.innerWidth + 1) return false;
	const p = e.parentElement.getBoundingClientRect();
	return p.right <= window.innerWidth + 1;
}).slice(0, 5).map(e => e.tagName + '.' + e.className + '#' + e.id + ' "' + e.textContent.slice(0, 40) + '" ' + Math.round(e.getBoundingClientRect().right))`

// open loads a page without the checks of visit (the pages subtest made
// them): the site's script has run when the load event fires.
func (tab *demoTab) open(t *testing.T, root, rel string) {
	t.Helper()
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, rel))}).String()
	if err := chromedp.Do(tab.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}

// reviewAxisLabel finds an abbreviated axis label of a heatmap and
// returns its chart's ID, its text and its centre in window coordinates,
// scrolled into view; [] when there is none.
const reviewAxisLabel = `(() => {
	for (const el of document.querySelectorAll('[data-chart]')) {
		const c = echarts.getInstanceByDom(el);
		if (!c || !c.getOption().series.some(s => s.type === 'heatmap')) continue;
		el.scrollIntoView({block: 'center'});
		for (const e of c.getZr().storage.getDisplayList(true)) {
			if (e.type !== 'tspan' || !String(e.style.text).includes('…')) continue;
			const r = e.getBoundingRect().clone();
			if (e.transform) r.applyTransform(e.transform);
			const b = el.getBoundingClientRect();
			return [el.id, String(e.style.text), b.left + r.x + r.width / 2, b.top + r.y + r.height / 2];
		}
	}
	return [];
})()`

// reviewSite returns the site folder TestReviewBrowser looks at: the
// full-scale demo bundle recorded with "finrepro demo --scale full" and
// reproduced with "finrepro reproduce", in-process, into the test's
// temporary folder; with FINREPRO_REVIEW_BUNDLE=DIR the bundle in DIR
// (one built so before, to look again without recording again); with
// FINREPRO_REVIEW_SCALE=small the built-in demo's site (a quick look). The build is not part of the browser
// test's 90 s: it takes about 40 s (recording) and 10 s (reproduce) on an
// idle two-core machine and is logged.
func reviewSite(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		if code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("finrepro %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
		}
		t.Logf("finrepro %s: %v", strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	}
	out := filepath.Join(tmp, "out")
	switch b := os.Getenv("FINREPRO_REVIEW_BUNDLE"); {
	case os.Getenv("FINREPRO_REVIEW_SCALE") == "small":
		run("reproduce", "--quiet", "--out", out)
	case b != "":
		run("reproduce", b, "--quiet", "--out", out)
	default:
		bundle := filepath.Join(tmp, "full")
		run("demo", "--scale", "full", "--out", bundle)
		run("reproduce", bundle, "--quiet", "--out", out)
	}
	return filepath.Join(out, "site")
}
