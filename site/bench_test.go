package site

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

// demoInput is a synthetic input the size of a full demo bundle: four
// benchmarks, each with 10 systems, 100 tasks with an 8 KB output and
// three verdicts per system, and tables with every chart kind.
func demoInput() Input {
	in := fixture(false)
	var results []*analysis.Result
	for b, name := range []string{"icbcbench", "findeepresearch", "findeepforecast", "finresearchbench2"} {
		r := &analysis.Result{Benchmark: name, Title: strings.ToUpper(name), Synthetic: true, Scores: map[string]float64{}}
		var systems []string
		for s := 0; s < 10; s++ {
			sys := fmt.Sprintf("system-%02d", s)
			systems = append(systems, sys)
			r.Ranking = append(r.Ranking, sys)
			r.Scores[sys] = float64(90 - s*3)
		}
		for _, t := range in.Results[0].Tables {
			c := *t
			c.Benchmark = name
			for i := range c.Charts {
				c.Charts[i].ID = fmt.Sprintf("%s_%d", c.Charts[i].ID, b)
			}
			r.Tables = append(r.Tables, &c)
		}
		wide := &analysis.Table{Benchmark: name, Name: "items", Title: "Items", Columns: []analysis.Column{{Name: "item"}}}
		for _, s := range systems {
			wide.Columns = append(wide.Columns, analysis.Column{Name: s, Decimals: 2, Better: analysis.Higher})
		}
		for i := 0; i < 250; i++ {
			row := []analysis.Cell{analysis.Text(fmt.Sprintf("item-%03d", i))}
			for s := range systems {
				row = append(row, analysis.Number(float64((i*7+s*13)%100)))
			}
			wide.AddRow(row...)
		}
		wide.Charts = []analysis.Chart{{ID: "items_heat", Kind: analysis.Heatmap, Title: "Items", X: "item", Y: systems[:5]}}
		r.Tables = append(r.Tables, wide)
		output := strings.Repeat("The bank's net interest margin narrowed 12 bp year on year; 净息差同比收窄。\n", 100)
		for t := 0; t < 100; t++ {
			for _, s := range systems {
				d := analysis.Detail{Task: fmt.Sprintf("task-%03d", t), System: s, Question: "Question " + fmt.Sprint(t), Output: output, Score: "58.0/100"}
				for j := 0; j < 3; j++ {
					d.Verdicts = append(d.Verdicts, analysis.Verdict{Judge: fmt.Sprintf("judge-%d", j), Verdict: "yes", Reasoning: strings.Repeat("Covers the claim. ", 20)})
				}
				r.Details = append(r.Details, d)
			}
		}
		results = append(results, r)
	}
	in.Results = results
	in.Aliases = nil
	in.Provenance = report.Provenance{Bundle: "demo", Synthetic: true}
	return in
}

// BenchmarkWrite writes the demo-size site. BenchmarkWriteFiles writes
// the same bytes as plain files, the floor any site writer pays: compare
// the two as a ratio.
func BenchmarkWrite(b *testing.B) {
	in := demoInput()
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := Write(filepath.Join(dir, fmt.Sprint(i)), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteFiles(b *testing.B) {
	files, err := build(demoInput())
	if err != nil {
		b.Fatal(err)
	}
	size := 0
	for _, f := range files {
		size += len(f.data)
	}
	b.SetBytes(int64(size))
	dir := b.TempDir()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for _, f := range files {
			p := filepath.Join(dir, fmt.Sprint(i), filepath.FromSlash(f.name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, f.data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestDemoSize checks the limits on a demo-size site: every page under
// MaxPage.
func TestDemoSize(t *testing.T) {
	if testing.Short() {
		t.Skip("demo-size site skipped in short mode")
	}
	files, err := build(demoInput())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, f := range files {
		total += len(f.data)
		if f.name != "assets/echarts.min.js" && len(f.data) > MaxPage {
			t.Errorf("%s: %d bytes, over %d", f.name, len(f.data), MaxPage)
		}
	}
	if len(files) < 400 {
		t.Errorf("%d files, want a page per task", len(files))
	}
	t.Logf("%d files, %d bytes", len(files), total)
}

// BenchmarkAppendEscapedCut escapes texts like a task page's: reports in
// Markdown with Chinese figures and a few quotes, and short reasonings.
func BenchmarkAppendEscapedCut(b *testing.B) {
	report := strings.Repeat("| Gross Profit Margin | 13.2% | 3.8% | N/A |\n### S2.5: revenue：2024財年收入增長61%。 \"Synthetic\" note.\n", 40)
	reason := "answer: innovation使利潤率變動76個基點。 | truth: innovation新增32個網點。 | judge: Synthetic judge: 1 of 3 claims covered."
	texts := []string{report, reason, reason, reason, reason, reason, reason, reason, reason}
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	b.SetBytes(int64(size))
	var buf []byte
	for b.Loop() {
		buf = buf[:0]
		for _, t := range texts {
			buf, _ = appendEscapedCut(buf, t, 4<<10)
		}
	}
}

// BenchmarkAppendJSONString encodes exchange text as a task page embeds
// it: a judge request's JSON with a Markdown report in English and
// Chinese, and its reply.
func BenchmarkAppendJSONString(b *testing.B) {
	for _, bc := range []struct{ name, text string }{
		{"mixed", `{"model":"synthetic-judge","messages":[{"role":"user","content":"` +
			strings.Repeat(`| Gross Profit Margin | 13.2% | 3.8% | N/A |\n### S2.5: revenue：2024財年收入增長61%。 \"Synthetic\" note. `, 60) + `"}]}`},
		// a stored JSON string token, as task pages embed them: ASCII
		// with escapes of its own
		{"json", `"` + strings.Repeat(`## Findings\n\n| Metric | FY2024 | FY2023 |\n|---|---|---|\n| Revenue (USD m) | 1,234.5 | 1,100.2 |\nThe company \"grew\" revenue by 12.2% <est>.\n`, 60) + `"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			var buf []byte
			for b.Loop() {
				buf, _ = appendJSONString(buf[:0], bc.text, -1)
			}
		})
	}
}
