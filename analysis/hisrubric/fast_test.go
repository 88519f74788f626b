package hisrubric

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var reportSeeds = []string{
	"## Section 1\n|a|b|\n|-|\n|\\|",
	"|||\n|:-:|\n",
	"text\n| A | B \\| C |\n|:--|--:|\n| 1 | <i>x</i><br/>y |\n| 2 |\n| 3 | 4 | 5 |\nafter",
	"   #### Title ##\n####### seven\n    # four spaces\n#\n",
	"| a | b |\r\n| :- | -: |\r\n| **x**  y | `z` __w__ |\r\n",
	"|a|\n|-|-|\n|\\\\|x|\\|\n| ***b*** | c\u00a0d | e\u2028f | \t g |",
	"|a|b|\n-|-\n|c|d|\n| a |\n|--- | ---|\n|x|\n|a|\n| - - |\n|a|\n|:--:|:|\n",
	"text\nmore text\n\nother\n```\n~~~\n| x | y |\n|---|---|\n| K&P | İstanbul |",
	"|a|\n|\f-\v|\n|a|\n|-|  \t\n|a|\n||-|\n|a|\n|-||",
}

// FuzzParseTable checks that a table written in markdown, with any
// spacing, emphasis and alignment marks, parses back to its cells, under
// its header; and that Parse takes any report.
func FuzzParseTable(f *testing.F) {
	f.Add(fullReport(Default(), Params{FY: 2024, CY: 2024, Date: "2025-09-20"}), "Revenue 2024 | 1,721 million | 3.2%", uint8(2))
	for _, s := range reportSeeds {
		f.Add(s, "a b|c", uint8(0))
	}
	f.Fuzz(func(t *testing.T, md, words string, style uint8) {
		Parse(md) // any report
		// A header row and two body rows of words: ASCII letters, digits
		// and single inner spaces.
		var cells []string
		for _, w := range strings.Split(words, "|") {
			w = strings.Join(strings.FieldsFunc(w, func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			}), " ")
			if w != "" {
				cells = append(cells, w)
			}
		}
		if len(cells) == 0 || len(cells) > 8 {
			return
		}
		pad := []string{"", " ", "  ", "\t"}[style%4]
		mark := []string{"", "**", "__", "`"}[style/4%4]
		align := []string{"---", ":--", "--:", ":-:"}[style/16%4]
		row := func(cs []string, em string) string {
			var b strings.Builder
			for _, c := range cs {
				b.WriteString("|" + pad + em + c + em + pad)
			}
			return b.String() + "|"
		}
		body := make([]string, len(cells))
		for i := range cells {
			body[i] = cells[(i+1)%len(cells)]
		}
		md = "## Section 1\n\n" + row(cells, "") + "\n" + row(slices.Repeat([]string{align}, len(cells)), "") + "\n" +
			row(body, mark) + "\n" + row(cells, "") + "\nafter\n"
		d := Parse(md)
		var tables []*MDTable
		for _, b := range d.Blocks {
			if b.Kind == TableBlock {
				tables = append(tables, b.Table)
			}
		}
		if len(tables) != 1 || !slices.Equal(tables[0].Header, cells) || len(tables[0].Rows) != 2 ||
			!slices.Equal(tables[0].Rows[0], body) || !slices.Equal(tables[0].Rows[1], cells) || tables[0].Ragged != 0 {
			t.Fatalf("Parse(%q): tables %+v; want header %q, rows %q and %q", md, tables, cells, body, cells)
		}
	})
}

// BenchmarkParse times Parse on a full report against the regular
// expression parser it replaced (refParse in baseline_test.go; used by this benchmark only, never as a test oracle).
func BenchmarkParse(b *testing.B) {
	md := fullReport(Default(), Params{FY: 2024, CY: 2024, Date: "2025-09-20"})
	b.SetBytes(int64(len(md)))
	b.Run("scanner", func(b *testing.B) {
		for b.Loop() {
			Parse(md)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		for b.Loop() {
			refParse(md)
		}
	})
}

// FuzzJudgePrompt checks that a judge request's batch reads back as it
// was written, and that the grading prompt, written from items encoded
// once per company, is the judge prompt of the same batch.
func FuzzJudgePrompt(f *testing.F) {
	f.Add("S1.1 Basic Information | Company Name | Value", "Acme <Corp> & \"Sons\"", "1,721 Millions\tUSD\u2028", 4.0)
	f.Add("\x00\x1f\x7f", "é\u2029", "", 1e-7)
	f.Add("", "", "x", 1e21)
	f.Add("a", "b", "c", -0.0)
	f.Add("\u2028x\u2029", "\u2028", "é\u202a", 2.5)
	f.Fuzz(func(t *testing.T, q, truth, pred string, max float64) {
		if math.IsNaN(max) || math.IsInf(max, 0) || !utf8.ValidString(q) || !utf8.ValidString(truth) || !utf8.ValidString(pred) {
			return // judge requests hold text read from JSON: valid UTF-8, finite numbers
		}
		for _, st := range []Stage{StageClaims, StageCriteria, StageAccuracy, StageCoverage, StageGrading} {
			b := &Batch{Stage: st, Company: truth, Language: pred, Items: []BatchItem{
				{ID: q, Question: q, Truth: truth, Prediction: pred},
				{ID: "x", Question: pred, Claims: []string{q, truth}},
				{ID: "y", Question: truth, Criterion: []Point{{Point: q, Max: max}, {Point: pred, Max: max / 3}}},
			}}
			want := judgePrompt(b)
			back, err := ParseBatch(want)
			if err != nil || !reflect.DeepEqual(back, b) {
				t.Fatalf("ParseBatch(judgePrompt(%+v)) = %+v, %v", b, back, err)
			}
			parts, items := make([]itemJSON, len(b.Items)), make([]int, len(b.Items))
			for i := range b.Items {
				it := b.Items[i]
				it.Prediction = ""
				parts[i], items[i] = newItemJSON(&it), i
			}
			got := gradingPrompt(b.Stage, b.Company, b.Language, parts, items, func(i int) string { return b.Items[i].Prediction })
			if got != want {
				t.Fatalf("gradingPrompt:\n got %q\nwant %q", got, want)
			}
		}
	})
}

// TestResolve checks Resolve on known values.
func TestResolve(t *testing.T) {
	p := Params{FY: 2024, CY: 2023, Date: "2025-09-20"}
	for _, tc := range []struct{ in, want string }{
		{"Value as of {DATE}", "Value as of 2025-09-20"},
		{"{FY} {FY_1} {FY_2} | {CY} {CY_1}", "2024 2023 2022 | 2023 2022"},
		{"FY{FY}{FY}", "FY20242024"},
		{"{FY_3} {fy} {", "{FY_3} {fy} {"},
		{"no placeholder", "no placeholder"},
	} {
		if got := p.Resolve(tc.in); got != tc.want {
			t.Errorf("Resolve(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
