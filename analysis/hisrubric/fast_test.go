package hisrubric

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// The hand-written scanners give what the reference implementations in
// ref_test.go give, on the seeds and on whatever the fuzzer finds.

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

func FuzzParseMatchesRef(f *testing.F) {
	f.Add(fullReport(Default(), Params{FY: 2024, CY: 2024, Date: "2025-09-20"}))
	for _, s := range reportSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, md string) {
		if got, want := Parse(md), refParse(md); !reflect.DeepEqual(got, want) {
			t.Fatalf("Parse(%q):\n got %+v\nwant %+v", md, got, want)
		}
		for _, ln := range strings.Split(md, "\n") {
			if got, want := isAlignRow(ln), refAlignRE.MatchString(ln) && strings.Contains(ln, "-"); got != want {
				t.Fatalf("isAlignRow(%q) = %v, want %v", ln, got, want)
			}
			if got, want := splitRow(ln), refSplitRow(ln); !reflect.DeepEqual(got, want) {
				t.Fatalf("splitRow(%q) = %q, want %q", ln, got, want)
			}
			if got, want := cleanCell(ln), refCleanCell(ln); got != want {
				t.Fatalf("cleanCell(%q) = %q, want %q", ln, got, want)
			}
			if got, want := key(ln), refKey(ln); got != want {
				t.Fatalf("key(%q) = %q, want %q", ln, got, want)
			}
		}
	})
}

func FuzzParseQuantityMatchesRef(f *testing.F) {
	for _, s := range []string{"1,721 Millions USD", "(3.5)%", "1.234.567", "3亿", "-0.0", "1..2", "1.2.", "v1,2,3x", "12'000 ribu", "−4,5 %", "", "1,234,567.5 Bn", "12 Mn.m", "3 x-k", "1.234,5 juta"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, ok := ParseQuantity(s)
		rq, rok := refParseQuantity(s)
		if ok != rok || q.Percent != rq.Percent || math.Float64bits(q.Value) != math.Float64bits(rq.Value) {
			t.Fatalf("ParseQuantity(%q) = %v %v, want %v %v", s, q, ok, rq, rok)
		}
		for _, sep := range []string{",", "."} {
			if got, want := groupsOfThree(s, sep[0]), refGroupsOfThree(s, sep); got != want {
				t.Fatalf("groupsOfThree(%q, %q) = %v, want %v", s, sep, got, want)
			}
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
