package site

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
)

// write writes in into a fresh site folder under an output root that
// holds the download files, and returns the site folder.
func write(t testing.TB, in Input) string {
	t.Helper()
	out := t.TempDir()
	for _, d := range in.Downloads {
		p := filepath.Join(out, filepath.FromSlash(d))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(out, "site")
	if _, err := Write(root, in); err != nil {
		t.Fatal(err)
	}
	return root
}

// hashes returns the SHA-256 of every file under root by slash path.
func hashes(t testing.TB, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		sum := sha256.Sum256(b)
		rel, _ := filepath.Rel(root, p)
		m[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func diffHashes(t *testing.T, a, b map[string]string) {
	t.Helper()
	for _, k := range sortedKeys(a) {
		if a[k] != b[k] {
			t.Errorf("%s differs between runs", k)
		}
	}
	for _, k := range sortedKeys(b) {
		if _, ok := a[k]; !ok {
			t.Errorf("%s only in the second run", k)
		}
	}
}

// TestDeterministic writes the site twice, and once more from input in
// another order, and compares the hash of every file.
func TestDeterministic(t *testing.T) {
	for _, evil := range []bool{false, true} {
		t.Run(fmt.Sprint("evil=", evil), func(t *testing.T) {
			first := hashes(t, write(t, fixture(evil)))
			diffHashes(t, first, hashes(t, write(t, fixture(evil))))

			shuffled := fixture(evil)
			for _, r := range shuffled.Results {
				slices.Reverse(r.Details)
			}
			slices.Reverse(shuffled.Aliases)
			slices.Reverse(shuffled.Downloads)
			slices.Reverse(shuffled.Provenance.Settings)
			diffHashes(t, first, hashes(t, write(t, shuffled)))
			if len(first) < 15 {
				t.Errorf("only %d files written", len(first))
			}
		})
	}
}

// TestGolden compares pages with testdata/*.html.golden; -update rewrites
// them.
func TestGolden(t *testing.T) {
	root := write(t, fixture(false))
	for _, page := range []string{"index.html", "icbcbench.html", "sensitivity.html", "tasks/icbcbench/en-001.html"} {
		t.Run(page, func(t *testing.T) {
			got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", strings.ReplaceAll(page, "/", "_")+".golden"), got)
		})
	}
}

var (
	scriptTag = regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`)
	linkAttr  = regexp.MustCompile(`\s(?:href|src)="([^"]*)"`)
	idAttr    = regexp.MustCompile(`\sid="([^"]*)"`)
)

// TestEscaping reads the pages of the hostile fixture: no payload appears
// as markup, the only scripts are the two local files and JSON blocks that
// parse and hold no <, and no raw U+2028/9 reaches a script.
func TestEscaping(t *testing.T) {
	root := write(t, fixture(true))
	for _, p := range htmlFiles(t, root) {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		page := string(b)
		for _, bad := range []string{"<img", "<svg", "<iframe", "<a href=\"javascript", "onerror=\"", "onload=\"", "<!--"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: contains %q", p, bad)
			}
		}
		// as HTML text, or in a folded entry's JSON
		if !strings.Contains(page, "&lt;script&gt;") && !strings.Contains(page, `\u003cscript\u003e`) {
			t.Errorf("%s: the hostile text is not shown escaped", p)
		}
		scripts := scriptTag.FindAllStringSubmatch(page, -1)
		if n := strings.Count(page, "<script"); n != len(scripts) {
			t.Errorf("%s: %d <script openings, %d well-formed scripts", p, n, len(scripts))
		}
		for _, s := range scripts {
			attrs, body := s[1], s[2]
			switch {
			case strings.HasPrefix(attrs, ` src="`) && body == "":
				src := strings.TrimSuffix(strings.TrimPrefix(attrs, ` src="`), `"`)
				if base := path.Base(src); base != "echarts.min.js" && base != "site.js" {
					t.Errorf("%s: script %s", p, src)
				}
			case strings.HasPrefix(attrs, ` type="application/json" id="data_`):
				if strings.ContainsAny(body, "<>&\u2028\u2029") {
					t.Errorf("%s: chart JSON holds an unescaped character: %.80s", p, body)
				}
				var v map[string]any
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Errorf("%s: chart JSON: %v", p, err)
				}
			case strings.HasPrefix(attrs, ` type="application/json" id="s-`) && strings.HasSuffix(attrs, `-vj"`):
				// folded verdicts
				if strings.ContainsAny(body, "<>&\u2028\u2029") {
					t.Errorf("%s: verdict JSON holds an unescaped character: %.80s", p, body)
				}
				var v [][]any
				if err := json.Unmarshal([]byte(body), &v); err != nil || len(v) <= foldVerdicts {
					t.Errorf("%s: verdict JSON: %d rows, %v", p, len(v), err)
				}
			case strings.HasPrefix(attrs, ` type="application/json" id="s-`) && strings.HasSuffix(attrs, `-oj"`):
				// a folded output
				if strings.ContainsAny(body, "<>&\u2028\u2029") {
					t.Errorf("%s: output JSON holds an unescaped character: %.80s", p, body)
				}
				var v string
				if err := json.Unmarshal([]byte(body), &v); err != nil || len(v) <= foldOutput/2 {
					t.Errorf("%s: output JSON: %d bytes, %v", p, len(v), err)
				}
			case attrs == ` type="application/json" id="exchanges"`:
				// a page's exchanges (see TestExchanges)
				if strings.ContainsAny(body, "<>&\u2028\u2029") {
					t.Errorf("%s: exchange JSON holds an unescaped character: %.80s", p, body)
				}
				var v exchangeBlock
				if err := json.Unmarshal([]byte(body), &v); err != nil || len(v.S) == 0 {
					t.Errorf("%s: exchange JSON: %d strings, %v", p, len(v.S), err)
				}
			default:
				t.Errorf("%s: unexpected script %s", p, attrs)
			}
		}
	}
}

func htmlFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for p := range hashes(t, root) {
		if strings.HasSuffix(p, ".html") {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// TestLinks checks that every link and script is relative and points to a
// file that exists (downloads one folder up, outside the site), and that
// every fragment names an element of its page.
func TestLinks(t *testing.T) {
	for _, evil := range []bool{false, true} {
		root := write(t, fixture(evil))
		ids := map[string]map[string]bool{}
		type ref struct{ from, to string }
		var refs []ref
		for _, p := range htmlFiles(t, root) {
			b, _ := os.ReadFile(filepath.Join(root, p))
			ids[p] = map[string]bool{}
			for _, m := range idAttr.FindAllStringSubmatch(string(b), -1) {
				if ids[p][m[1]] {
					t.Errorf("%s: id %q twice", p, m[1])
				}
				ids[p][m[1]] = true
			}
			for _, m := range linkAttr.FindAllStringSubmatch(string(b), -1) {
				refs = append(refs, ref{p, m[1]})
			}
		}
		for _, r := range refs {
			u := r.to
			if strings.Contains(u, ":") || strings.HasPrefix(u, "/") || strings.Contains(u, "\\") {
				t.Errorf("%s: link %q is not relative", r.from, u)
				continue
			}
			file, frag, _ := strings.Cut(u, "#")
			target := r.from
			if file != "" {
				target = path.Join(path.Dir(r.from), file)
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(target))); err != nil {
					t.Errorf("%s: link %q: %v", r.from, u, err)
					continue
				}
			}
			if frag != "" && !ids[target][frag] {
				t.Errorf("%s: link %q: no id %q in %s", r.from, u, frag, target)
			}
		}
	}
}

// TestPageSize checks the size limit with ten systems on one task, each
// with a long output and three long verdicts made of characters that
// escaping expands, and a table too long for a page.
func TestPageSize(t *testing.T) {
	in := fixture(false)
	long := strings.Repeat(`"<&長い報告 `, 100000) // ~1.5 MB, more once escaped
	r := in.Results[0]
	for s := 0; s < 10; s++ {
		d := analysis.Detail{Task: "big", System: fmt.Sprintf("sys-%d", s), Question: long, Output: long}
		for j := 0; j < 3; j++ {
			d.Verdicts = append(d.Verdicts, analysis.Verdict{Judge: fmt.Sprint("judge-", j), Verdict: "yes", Reasoning: long})
		}
		d.Call = fixtureCall("big", d.System, "")
		r.Details = append(r.Details, d)
	}
	// an entry with more judge exchanges than a page lists, each verdict
	// from its own exchange
	many := analysis.Detail{Task: "big", System: "sys-many", Output: "short"}
	for j := 0; j < 3000; j++ {
		many.Verdicts = append(many.Verdicts, analysis.Verdict{Judge: fmt.Sprint("judge-", j), Verdict: "yes", Reasoning: "ok", Call: fixtureCall("big", "many", fmt.Sprint(j))})
	}
	r.Details = append(r.Details, many)
	// six tables that together would make a benchmark page of ~3 MB,
	// every row naming a system
	for k := 0; k < 6; k++ {
		big := &analysis.Table{Benchmark: "icbcbench", Name: fmt.Sprint("big", k),
			Columns: []analysis.Column{{Name: "item"}, {Name: "system"}, {Name: "value", Decimals: 2}},
			Charts:  []analysis.Chart{{ID: "heat", Kind: analysis.Heatmap, X: "item", Y: []string{"value"}}}}
		for i := 0; i < 20000; i++ {
			big.AddRow(analysis.Text(fmt.Sprintf("item %d %s", i, strings.Repeat("x", 100))), analysis.Text("OpenAI-o3-deep-research"), analysis.Number(float64(i)))
		}
		r.Tables = append(r.Tables, big)
	}
	for i := 0; i < 5000; i++ {
		r.Problems = append(r.Problems, fmt.Sprintf("task %d: verdict unparsable", i))
	}
	root := write(t, in)
	for p := range hashes(t, root) {
		if p == "assets/echarts.min.js" {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > MaxPage {
			t.Errorf("%s: %d bytes, over %d", p, fi.Size(), MaxPage)
		}
	}
	b, _ := os.ReadFile(filepath.Join(root, "tasks", "icbcbench", "big.html"))
	if !bytes.Contains(b, []byte("The output is cut here")) {
		t.Error("a cut output does not say so")
	}
	// 10 outputs' and 3000 verdicts' exchanges, of which maxExchanges
	// are listed
	if want := fmt.Sprintf("%d more exchanges behind this page's verdicts are not listed", 3010-maxExchanges); !bytes.Contains(b, []byte(want)) {
		t.Errorf("the big task page does not say %q", want)
	}
	b, _ = os.ReadFile(filepath.Join(root, "icbcbench.html"))
	for _, want := range []string{"Only the first 500 of 20000 rows are shown", "The charts draw the first 1000 of 20000 rows.", "4001 more are not listed here."} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("icbcbench.html does not say %q", want)
		}
	}
}

// TestSynthetic checks the banner: on every page when any result or the
// provenance is synthetic, on none otherwise.
func TestSynthetic(t *testing.T) {
	tests := []struct {
		name            string
		prov, resultSyn bool
		want            bool
	}{
		{"provenance", true, false, true},
		{"one result", false, true, true},
		{"none", false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fixture(false)
			in.Provenance.Synthetic = tt.prov
			for _, r := range in.Results {
				r.Synthetic = false
			}
			in.Results[1].Synthetic = tt.resultSyn
			root := write(t, in)
			for _, p := range htmlFiles(t, root) {
				b, _ := os.ReadFile(filepath.Join(root, p))
				if got := bytes.Contains(b, []byte("SYNTHETIC DATA")); got != tt.want {
					t.Errorf("%s: banner %v, want %v", p, got, tt.want)
				}
			}
		})
	}
}

// TestMarks checks best bold and second underlined, ties included, and
// undefined cells with their reason.
func TestMarks(t *testing.T) {
	root := write(t, fixture(false))
	b, _ := os.ReadFile(filepath.Join(root, "icbcbench.html"))
	page := string(b)
	for _, want := range []string{
		`<td class="num" data-v="61.25"><strong>61.25</strong></td>`, // a tie for best, twice
		`<td class="num" data-v="57.8"><u>57.80</u></td>`,
		`<td class="num" data-v="48.75"><strong>48.75</strong></td>`, // lower is better
		`<td class="num" data-v="" title="fewer than 10 confident answers">n/a</td>`,
		`<th scope="col" class="num" data-key="calibration_error" title="RMS calibration error"><button type="button">Calibration error (%)</button></th>`,
		`<caption id="t0-c">Overall scores<span class="cap">: Objective and subjective tracks, EN and ZH.</span></caption>`,
	} {
		n := strings.Count(page, want)
		if n == 0 || strings.Contains(want, "61.25") && n != 2 {
			t.Errorf("icbcbench.html has %d of %s", n, want)
		}
	}
	// a system page's tables have one row each: nothing is marked best
	sys, err := filepath.Glob(filepath.Join(root, "systems", "*.html"))
	if err != nil || len(sys) == 0 {
		t.Fatal(sys, err)
	}
	for _, p := range sys {
		b, _ := os.ReadFile(p)
		if regexp.MustCompile(`data-v="[^"]*"><(strong|u)>`).Match(b) {
			t.Errorf("%s marks a value of a one-row table", p)
		}
	}
}

// TestSystems checks the cross-benchmark view: aliased names share one
// system page that lists both benchmarks.
func TestSystems(t *testing.T) {
	root := write(t, fixture(false))
	index, _ := os.ReadFile(filepath.Join(root, "index.html"))
	// On icbcbench the first two systems tie at 61.25: both rank =1 (the
	// leader column names both); on findeepforecast o3 leads alone.
	if !bytes.Contains(index, []byte("=1 of 5 (as OpenAI-o3-deep-research)")) || !bytes.Contains(index, []byte("#1 of 3 (as o3-deep-research)")) {
		t.Error("index lacks the aliased ranks of OpenAI o3 Deep Research")
	}
	if !bytes.Contains(index, []byte("OpenAI-o3-deep-research = Gemini-2.5-Pro-Deep-Research")) || !bytes.Contains(index, []byte("=1 of 5")) {
		t.Error("index breaks the tie for first on icbcbench")
	}
	var page []byte
	for p := range hashes(t, root) {
		if strings.HasPrefix(p, "systems/openai-o3-deep-research") {
			page, _ = os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		}
	}
	for _, want := range []string{"<h1>OpenAI o3 Deep Research</h1>", "ICBCBench", "FinDeepForecast", "../tasks/icbcbench/en-001.html", "61.25", "=1 of 5"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("system page lacks %q", want)
		}
	}
}

// TestWriteErrors checks that bad input is an error that says what is
// wrong.
func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Input)
		want   string
	}{
		{"parent download", func(in *Input) { in.Downloads = append(in.Downloads, "../etc/passwd") }, `download "../etc/passwd"`},
		{"absolute download", func(in *Input) { in.Downloads = append(in.Downloads, "/etc/passwd") }, `download "/etc/passwd"`},
		{"javascript download", func(in *Input) { in.Downloads = append(in.Downloads, "javascript:alert(1)") }, `download "javascript:alert(1)"`},
		{"unclean download", func(in *Input) { in.Downloads = append(in.Downloads, "a/../b") }, `download "a/../b"`},
		{"duplicate benchmark", func(in *Input) { in.Results = append(in.Results, in.Results[0]) }, "benchmark icbcbench given twice"},
		{"reserved benchmark", func(in *Input) { in.Results[0].Benchmark = "index" }, `benchmark name "index"`},
		{"odd benchmark", func(in *Input) { in.Results[0].Benchmark = "ICBC bench" }, `benchmark name "ICBC bench"`},
		{"nil result", func(in *Input) { in.Results[1] = nil }, "result 1 is nil"},
		{"missing column", func(in *Input) { in.Results[0].Tables[0].Charts[0].Y[1] = "nope" }, `chart overall_mirror: table overall has no column "nope"`},
		{"bad chart id", func(in *Input) { in.Results[0].Tables[0].Charts[0].ID = "Bad-ID" }, `chart "Bad-ID": id is not of the form`},
		{"one-sided mirror", func(in *Input) { in.Results[0].Tables[0].Charts[0].Y = []string{"en_overall"} }, "a mirror chart needs two Y columns"},
		{"unknown kind", func(in *Input) { in.Results[0].Tables[0].Charts[0].Kind = "pie" }, `unknown kind "pie"`},
		{"no Y", func(in *Input) { in.Results[0].Tables[0].Charts[1].Y = nil }, "chart accuracy_ci: no Y columns"},
		{"conflicting alias", func(in *Input) {
			in.Aliases = append(in.Aliases, Alias{System: "OpenAI o3 Deep Research", Benchmark: "icbcbench", Name: "Perplexity-Deep-Research"})
		}, "both alias system"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fixture(false)
			tt.change(&in)
			_, err := Write(t.TempDir(), in)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "site: ") {
				t.Errorf("Write: %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// TestChartNonFinite checks that NaN and infinite values, even in cells
// built without analysis.Number, never reach a chart.
func TestChartNonFinite(t *testing.T) {
	tb := &analysis.Table{Name: "t", Columns: []analysis.Column{{Name: "x"}, {Name: "a", Decimals: 1}, {Name: "b", Decimals: 1}, {Name: "c"}}}
	tb.AddRow(analysis.Text("r1"), analysis.Cell{Num: math.NaN(), IsNum: true}, analysis.Cell{Num: math.Inf(1), IsNum: true}, analysis.Number(1))
	tb.AddRow(analysis.Text("r2"), analysis.Number(2), analysis.Cell{Num: math.Inf(-1), IsNum: true}, analysis.Number(2))
	for _, c := range []analysis.Chart{
		{ID: "bar", Kind: analysis.Bar, X: "x", Y: []string{"a", "b"}, Low: "a", High: "b"},
		{ID: "line", Kind: analysis.Line, X: "x", Y: []string{"a", "b"}},
		{ID: "scatter", Kind: analysis.Scatter, X: "a", Y: []string{"b"}, Label: "x", Zone: &analysis.Zone{XMin: math.NaN(), XMax: 1}},
		{ID: "heat", Kind: analysis.Heatmap, X: "x", Y: []string{"a", "b"}},
		{ID: "mirror", Kind: analysis.Mirror, X: "x", Y: []string{"a", "b", "c"}},
	} {
		t.Run(string(c.Kind), func(t *testing.T) {
			b, err := chartOption(tb, c)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("Inf")) {
				t.Errorf("option holds a non-finite value: %s", b)
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("option is not JSON: %v", err)
			}
			if c.Kind == analysis.Scatter && bytes.Contains(b, []byte("zone")) {
				t.Error("a zone with a NaN bound is drawn")
			}
		})
	}
}

func TestSlug(t *testing.T) {
	s := newSlugger()
	tests := []struct{ name, want string }{
		{"kimi-researcher", "kimi-researcher"},
		{"OpenAI-o3", "openai-o3-"},            // lossy: hash appended
		{"openai-o3-", "openai-o3-"},           // lossy too (trailing hyphen dropped)
		{"文心一言", ""},                           // no ASCII: hash only
		{"a  b//c", "a-b-c-"},                  // runs of others become one hyphen
		{"kimi-researcher", "kimi-researcher"}, // same name, same slug
	}
	seen := map[string]string{}
	for _, tt := range tests {
		got := s.slug(tt.name)
		if !strings.HasPrefix(got, tt.want) || !regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`).MatchString(got) {
			t.Errorf("slug(%q) = %q, want prefix %q and [a-z0-9-] only", tt.name, got, tt.want)
		}
		if prev, ok := seen[strings.ToLower(got)]; ok && prev != tt.name {
			t.Errorf("slug(%q) = slug(%q) = %q", tt.name, prev, got)
		}
		seen[strings.ToLower(got)] = tt.name
	}
}

// FuzzSlug checks that slugs are safe file names and never shared.
func FuzzSlug(f *testing.F) {
	for _, s := range []string{"", "a", "A", "a-", "../x", "文心", "con", strings.Repeat("x", 300)} {
		f.Add(s, s+"!")
	}
	valid := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	f.Fuzz(func(t *testing.T, a, b string) {
		s := newSlugger()
		sa, sb := s.slug(a), s.slug(b)
		for _, v := range []string{sa, sb} {
			if !valid.MatchString(v) || len(v) > maxSlug+20 {
				t.Errorf("slug %q is not a safe file name", v)
			}
		}
		if a != b && sa == sb {
			t.Errorf("slug(%q) = slug(%q) = %q", a, b, sa)
		}
	})
}

// FuzzChartOption feeds arbitrary text and numbers into every chart kind:
// the option is JSON without <, >, & or a line separator.
func FuzzChartOption(f *testing.F) {
	for _, p := range payloads {
		f.Add(p, p, 1.5, -2.0)
	}
	f.Add("", "\x00\xff", math.NaN(), math.Inf(1))
	f.Fuzz(func(t *testing.T, label, title string, a, b float64) {
		tb := &analysis.Table{Name: "t", Columns: []analysis.Column{{Name: "x"}, {Name: "a", Title: title, Decimals: 2}, {Name: "b", Decimals: 2}, {Name: "c"}}}
		tb.AddRow(analysis.Text(label), analysis.Cell{Num: a, IsNum: true}, analysis.Number(b), analysis.Text(label))
		for _, k := range []analysis.ChartKind{analysis.Bar, analysis.Line, analysis.Scatter, analysis.Heatmap, analysis.Mirror} {
			c := analysis.Chart{ID: "c", Kind: k, Title: title, X: "x", Y: []string{"a", "b"}, Label: "c", Zone: &analysis.Zone{Label: label, XMax: a, YMax: b}}
			if k == analysis.Scatter {
				c.X = "a"
				c.Y = []string{"b"}
			}
			opt, err := chartOption(tb, c)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.ContainsAny(opt, "<>&") || bytes.Contains(opt, []byte("\u2028")) || bytes.Contains(opt, []byte("\u2029")) {
				t.Fatalf("%s option holds an unescaped character: %s", k, opt)
			}
			if !json.Valid(opt) {
				t.Fatalf("%s option is not JSON: %s", k, opt)
			}
		}
	})
}
