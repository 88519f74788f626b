package hisrubric

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
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

func FuzzParseReplyMatchesRef(f *testing.F) {
	pts := 6.5
	good, _ := json.Marshal(Reply{Items: []ReplyItem{
		{ID: "a", Verdict: "correct", Reason: "<b>\"x\"</b> & \u2028 é\n"},
		{ID: "b", Claims: []string{"one", "two \\ three"}, Criterion: []Point{{Point: "p", Max: 4}, {Point: "q", Max: 1e-7}}},
		{ID: "c", Covered: []bool{true, false}, Points: &pts},
	}})
	for _, s := range []string{
		string(good),
		"Here:\n```json\n" + string(good) + "\n```\nDone.",
		`{"items":[{"id":"a","verdict":"correct","covered":[true],"points":3}]}`,
		"```json\n{\"items\":null}\n```",
		`{"items":[]}`, `{"items":[{}]}`, `{ "items" : [ { "id" : "a" , "points" : -0.5e+1 } ] } `,
		`{"items":[{"id":"a","ID":"b"}]}`, `{"items":[{"id":"a","id":"b"}]}`, `{"Items":[{"id":"a"}]}`,
		`{"items":[{"id":"\u00e9\ud83d\ude00\/\t"}]}`, `{"items":[{"id":"a","points":1e400}]}`,
		`{"items":[{"id":"a","extra":{"x":[1,2]}}]}`, `{"items":[{"id":"a"}],"note":"x"}`,
		`{"items":[{"id":"a","claims":null}]}`, `{"items":[{"id":01}]}`, `{"items":[{"id":"a"}]} }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseReply(s)
		want, rerr := refParseReply(s)
		if (err == nil) != (rerr == nil) || err != nil && err.Error() != rerr.Error() {
			t.Fatalf("ParseReply(%q): error %v, want %v", s, err, rerr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("ParseReply(%q):\n got %+v\nwant %+v", s, got, want)
		}
	})
}

func FuzzJudgePromptMatchesRef(f *testing.F) {
	f.Add("S1.1 Basic Information | Company Name | Value", "Acme <Corp> & \"Sons\"", "1,721 Millions\tUSD\u2028", 4.0)
	f.Add("\x00\x1f\x7f\xff", "é\u2029", "", 1e-7)
	f.Add("", "", "x", 1e21)
	f.Add("a", "b", "c", -0.0)
	f.Add("\u2028x\u2029\xe2\x80", "\xe2\x80\xa8\xe2", "é\xe2\x80\xaa", 2.5)
	f.Fuzz(func(t *testing.T, q, truth, pred string, max float64) {
		if math.IsNaN(max) || math.IsInf(max, 0) {
			return
		}
		for _, st := range []Stage{StageClaims, StageCriteria, StageAccuracy, StageCoverage, StageGrading} {
			b := &Batch{Stage: st, Company: truth, Language: pred, Items: []BatchItem{
				{ID: q, Question: q, Truth: truth, Prediction: pred},
				{ID: "x", Question: pred, Claims: []string{q, truth}},
				{ID: "y", Question: truth, Criterion: []Point{{Point: q, Max: max}, {Point: pred, Max: max / 3}}},
			}}
			want := refJudgePrompt(b)
			if got := judgePrompt(b); got != want {
				t.Fatalf("judgePrompt:\n got %q\nwant %q", got, want)
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
		for _, s := range []string{q, truth, pred} {
			var w strings.Builder
			writeJSONString(&w, s)
			if n := jsonStringLen(s); n != w.Len() {
				t.Fatalf("jsonStringLen(%q) = %d, want %d", s, n, w.Len())
			}
		}
		if got, want := judgePrompt(&Batch{Stage: StageClaims}), refJudgePrompt(&Batch{Stage: StageClaims}); got != want {
			t.Fatalf("judgePrompt of no items:\n got %q\nwant %q", got, want)
		}
	})
}

func FuzzAppendClipMatchesClip(f *testing.F) {
	for _, s := range []string{"", "abc", "héllo wörld", "\xff\xfeabc", "a\xe2\x80", "一二三四五六"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 400 {
			return
		}
		if got, want := string(appendClip([]byte("x"), s, n)), "x"+clip(s, n); got != want {
			t.Fatalf("appendClip(%q, %d) = %q, want %q", s, n, got, want)
		}
	})
}

func FuzzResolveMatchesRef(f *testing.F) {
	f.Add("Value as of {DATE}", 2024, 2024, "2025-09-20")
	f.Add("{FY_{CY}}{CY_{FY}}", 1, 1, "{FY}")
	f.Add("{FY}{FY_1}{FY_2}{CY}{CY_1}", -3, 0, "")
	f.Fuzz(func(t *testing.T, s string, fy, cy int, date string) {
		p := Params{FY: fy, CY: cy, Date: date}
		if got, want := p.Resolve(s), refResolve(p, s); got != want {
			t.Fatalf("Resolve(%q) with %+v = %q, want %q", s, p, got, want)
		}
	})
}
