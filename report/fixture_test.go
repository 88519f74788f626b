package report

import (
	"github.com/finrepro/finrepro/analysis"
)

// hostile is a table with everything a writer must defend against: text
// that spreadsheets run as formulas, markup that ends a script, LaTeX
// specials, CJK text, control characters, undefined cells, ties for best
// and negative zero.
func hostile() *analysis.Table {
	t := &analysis.Table{
		Benchmark: "findeepresearch",
		Name:      "hostile_scores",
		Title:     "Scores of hostile systems <b>& co</b>",
		Caption:   "Synthetic: 50% of $cores_ are {fake} #1 ~ ^ \\ made up.",
		Columns: []analysis.Column{
			{Name: "system", Title: "System", Doc: "system under test"},
			{Name: "score", Title: "Score", Unit: "%", Decimals: 1, Better: analysis.Higher, Doc: "mean score"},
			{Name: "ci_low", Title: "CI low", Unit: "%", Decimals: 1},
			{Name: "ci_high", Title: "CI high", Unit: "%", Decimals: 1},
			{Name: "latency", Title: "Latency", Unit: "s", Decimals: 2, Better: analysis.Lower},
			{Name: "tier", Title: "Tier"},
			{Name: "output", Title: "Output (excerpt)", Doc: "model-written text"},
		},
		Notes: []string{
			"Ties share the best mark.",
			"</script><script>alert('x')</script> & =1+1",
		},
	}
	t.AddRow(analysis.Text(`=HYPERLINK("http://evil.example","click")`), analysis.Number(58.26), analysis.Number(55.1), analysis.Number(61.4),
		analysis.Number(12.5), analysis.Text("A"), analysis.Text("</script><script>alert(1)</script>"))
	t.AddRow(analysis.Text("+cmd|' /C calc'!A0"), analysis.Number(58.2549), analysis.Number(54.9), analysis.Number(61.0),
		analysis.Number(9.875), analysis.Text("A"), analysis.Text(`\ { } $ & # ^ _ ~ % -- < > | "`))
	t.AddRow(analysis.Text("-2+3"), analysis.Number(57.1), analysis.Number(-0.00001), analysis.Number(60.2),
		analysis.Undefined("no replies"), analysis.Text("B"), analysis.Text("@SUM(A1:A9)"))
	t.AddRow(analysis.Text("@attack"), analysis.Undefined("no replies"), analysis.Undefined("no replies"), analysis.Undefined("no replies"),
		analysis.Number(30), analysis.Text("C"), analysis.Text("\tstarts with a tab"))
	t.AddRow(analysis.Text("深度研究系统（金融）"), analysis.Number(-3.04), analysis.Number(-4.5), analysis.Number(-1.25),
		analysis.Number(9.87), analysis.Text("B"), analysis.Text("\rCR first; 中文报告：收入增长 12%，毛利率 45.3%。 \x1b[31mred\x1b[0m\nnew line"))
	t.AddRow(analysis.Text("plain system with a rather long name that needs wrapping"), analysis.Number(57.1), analysis.Number(50), analysis.Number(64.25),
		analysis.Number(0.001), analysis.Text("B"), analysis.Text("A long excerpt of a research report that goes on and on about revenue, margins, guidance and the outlook for next year."))
	return t
}

// plain is an ordinary table as a benchmark produces it.
func plain() *analysis.Table {
	t := &analysis.Table{
		Benchmark: "icbcbench",
		Name:      "accuracy",
		Title:     "Accuracy by system",
		Caption:   "Share of questions answered correctly.",
		Columns: []analysis.Column{
			{Name: "system", Title: "System"},
			{Name: "accuracy", Title: "Accuracy", Unit: "%", Decimals: 1, Better: analysis.Higher},
			{Name: "n", Title: "N", Decimals: 0},
		},
	}
	t.AddRow(analysis.Text("alpha"), analysis.Number(71.234), analysis.Int(120))
	t.AddRow(analysis.Text("beta"), analysis.Number(65.95), analysis.Int(120))
	t.AddRow(analysis.Text("gamma"), analysis.Number(40), analysis.Int(118))
	return t
}
