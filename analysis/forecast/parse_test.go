package forecast

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseNumber(t *testing.T) {
	tests := []struct {
		in      string
		value   float64
		scale   float64
		percent bool
		err     bool
	}{
		{in: "1234.5", value: 1234.5},
		{in: "1,234.5", value: 1234.5},
		{in: "1,234,567", value: 1234567},
		{in: "-12", value: -12},
		{in: "+3.5", value: 3.5},
		{in: "(45.2)", value: -45.2},
		{in: "(1,234.5) million", value: -1234.5, scale: 1e6},
		{in: "1.2e3", value: 1200},
		{in: "1.2E-3", value: 0.0012},
		{in: "5.25%", value: 5.25, percent: true},
		{in: "5.25 percent", value: 5.25, percent: true},
		{in: "５.２５％", value: 5.25, percent: true},
		{in: "１２３４", value: 1234},
		{in: "－７", value: -7},
		{in: "3.2亿", value: 3.2, scale: 1e8},
		{in: "3.2亿元", value: 3.2, scale: 1e8},
		{in: "1.5万亿", value: 1.5, scale: 1e12},
		{in: "12万", value: 12, scale: 1e4},
		{in: "USD 1.2 billion", value: 1.2, scale: 1e9},
		{in: "$1.2bn", value: 1.2, scale: 1e9},
		{in: "-$3.4 million", value: -3.4, scale: 1e6},
		{in: "450 mn USD", value: 450, scale: 1e6},
		{in: "2.5k", value: 2.5, scale: 1e3},
		{in: "approximately 7.1", value: 7.1},
		{in: "~7.1", value: 7.1},
		{in: "**42**", value: 42},
		{in: "42.", value: 42},
		{in: ".5", value: 0.5},
		{in: "7.1234 CNY", value: 7.1234},
		{in: "0", value: 0},
		{in: "", err: true},
		{in: "two percent", err: true},
		{in: "1,23", err: true},
		{in: "12 months", err: true},
		{in: "1.2.3", err: true},
		{in: "(12", err: true},
		{in: "e5", err: true},
		{in: "1e999", err: true},
		{in: "=HYPERLINK(\"x\")", err: true},
		{in: "5-7", err: true},
		{in: strings.Repeat("9", 300), err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			n, err := ParseNumber(tc.in)
			if tc.err {
				if err == nil {
					t.Fatalf("ParseNumber(%q) = %+v, want an error", tc.in, n)
				}
				return
			}
			if err != nil || n.Value != tc.value || n.Scale != tc.scale || n.Percent != tc.percent {
				t.Fatalf("ParseNumber(%q) = %+v, %v; want %v scale %v percent %v", tc.in, n, err, tc.value, tc.scale, tc.percent)
			}
		})
	}
}

func TestNumberIn(t *testing.T) {
	tests := []struct {
		in   string
		unit float64
		want float64
	}{
		{"1.2 billion", 1e6, 1200},
		{"3.2亿", 1e6, 320},
		{"1234.5", 1e6, 1234.5}, // no scale word: already in the task's unit
		{"1.2 billion", 0, 1.2}, // task without a unit multiplier
	}
	for _, tc := range tests {
		n, err := ParseNumber(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := n.In(tc.unit); got < tc.want*(1-1e-12) || got > tc.want*(1+1e-12) {
			t.Errorf("%q in %g = %v, want %v", tc.in, tc.unit, got, tc.want)
		}
	}
}

func TestParseBinary(t *testing.T) {
	tests := []struct {
		in  string
		yes bool
		err bool
	}{
		{in: "Yes", yes: true}, {in: "yes.", yes: true}, {in: "**YES**", yes: true}, {in: "Yes, because the board met", yes: true},
		{in: "是", yes: true}, {in: "是的", yes: true}, {in: "Ｙｅｓ", yes: true},
		{in: "No", yes: false}, {in: "no.", yes: false}, {in: "否", yes: false}, {in: "不会", yes: false}, {in: "False", yes: false},
		{in: "", err: true}, {in: "maybe", err: true}, {in: "Yesterday", err: true}, {in: "=HYPERLINK(\"Yes\")", err: true},
	}
	for _, tc := range tests {
		yes, err := ParseBinary(tc.in)
		if tc.err != (err != nil) || (!tc.err && yes != tc.yes) {
			t.Errorf("ParseBinary(%q) = %v, %v; want %v (error %v)", tc.in, yes, err, tc.yes, tc.err)
		}
	}
}

func TestParseReply(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		answer   string
		evidence []string // url|published-as-RFC3339 ("" when undated)
		err      bool
	}{
		{name: "text", in: "Reasoning.\nFinal answer: 12.5\nEvidence:\n- https://a.example/x (published 2025-11-01T08:00:00Z)\n- https://b.example/y",
			answer: "12.5", evidence: []string{"https://a.example/x|2025-11-01T08:00:00Z", "https://b.example/y|"}},
		{name: "last answer wins", in: "Answer: 1\n**Final Answer:** 2", answer: "2"},
		{name: "chinese", in: "分析……\n最终答案：是\n来源 https://c.example/z 发布于 2025-11-02", answer: "是",
			evidence: []string{"https://c.example/z|2025-11-02T00:00:00Z"}},
		{name: "one line", in: "  No  ", answer: "No"},
		{name: "json", in: `{"answer": 7.5, "evidence": [{"url": "https://d.example/", "published": "2025-10-30T00:00:00+08:00"}]}`,
			answer: "7.5", evidence: []string{"https://d.example/|2025-10-29T16:00:00Z"}},
		{name: "json string", in: `{"answer": "Yes"}`, answer: "Yes"},
		{name: "url in answer is not evidence", in: "Final answer: =HYPERLINK(\"https://e.example\")", answer: "=HYPERLINK(\"https://e.example\")"},
		{name: "none", in: "I cannot say.\nSorry.", err: true},
		{name: "empty answer", in: "Final answer:\n", err: true},
		{name: "empty", in: "", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseReply(tc.in)
			if tc.err {
				if !errors.Is(err, ErrNoAnswer) {
					t.Fatalf("error %v, want ErrNoAnswer", err)
				}
				return
			}
			if err != nil || f.Answer != tc.answer {
				t.Fatalf("ParseReply = %q, %v; want %q", f.Answer, err, tc.answer)
			}
			var got []string
			for _, e := range f.Evidence {
				ts := ""
				if !e.Time.IsZero() {
					ts = e.Time.Format(timeLayout)
				}
				got = append(got, e.URL+"|"+ts)
			}
			if strings.Join(got, " ") != strings.Join(tc.evidence, " ") {
				t.Fatalf("evidence %q, want %q", got, tc.evidence)
			}
		})
	}
}

// FuzzParseNumber checks, for every finite float64 x written the way
// strconv writes it, that ParseNumber reads back x exactly, -x in
// accounting parentheses, and x with scale 1e6 after "million"; and that
// any accepted answer reads the same between spaces.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"1,234.5 million", "(12)", "3.2亿元", "５％", "1e3", "$-4", "~7", "", "(", "1,23",
		"1,2345", "123,4567.5e+3x", "1234,567", "12,345,678 USD", "1e+", "1E-7 bn", ".5", "5.", "-.5e", "0,000", "1,000,00",
		"USD 12", "12 usd", "HK$ 3.5", "approx. 1,234 万", "−4,5 %", "１２，３４５", "3 percent", "1 元", "\xff1", "1\u3000m"} {
		f.Add(s, 12.5)
	}
	f.Add("", 1e-300)
	f.Add("", -0.0)
	f.Fuzz(func(t *testing.T, s string, x float64) {
		if n, err := ParseNumber(s); err == nil {
			if math.IsNaN(n.Value) || math.IsInf(n.Value, 0) {
				t.Fatalf("ParseNumber(%q) = %v", s, n.Value)
			}
			if len(s)+2 <= MaxAnswer {
				if m, err := ParseNumber("\t" + s + " "); err != nil || m != n {
					t.Fatalf("ParseNumber(space %q space) = %+v, %v; want %+v", s, m, err, n)
				}
			}
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		w := strconv.FormatFloat(math.Abs(x), 'f', -1, 64)
		if len(w)+len(" million") > MaxAnswer {
			w = strconv.FormatFloat(math.Abs(x), 'e', -1, 64)
		}
		for _, tc := range []struct {
			in   string
			want Number
		}{
			{w, Number{Value: math.Abs(x)}},
			{"-" + w, Number{Value: -math.Abs(x)}},
			{"(" + w + ")", Number{Value: -math.Abs(x)}},
			{w + " million", Number{Value: math.Abs(x), Scale: 1e6}},
		} {
			if n, err := ParseNumber(tc.in); err != nil || n != tc.want {
				t.Fatalf("ParseNumber(%q) = %+v, %v; want %+v", tc.in, n, err, tc.want)
			}
		}
	})
}

// FuzzParseBinary checks that a known yes or no word followed by a stop
// decides the answer whatever follows it.
func FuzzParseBinary(f *testing.F) {
	for _, s := range []string{"Yes", "否", "no.", "", "Ｙｅｓ", "because ...", "**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ParseBinary(s) // any input: an answer or an error
		if !utf8.ValidString(s) {
			return
		}
		for _, w := range append(append([]string{}, yesWords...), noWords...) {
			in := w + ". " + s
			if len(in) > MaxAnswer {
				continue
			}
			if got, err := ParseBinary(in); err != nil || got != slices.Contains(yesWords, w) {
				t.Fatalf("ParseBinary(%q) = %v, %v", in, got, err)
			}
		}
	})
}

// FuzzParseReply checks that a reply of a final-answer line and an
// evidence line gives back the answer, trimmed, and the dated URL; and
// that any reply with no error has an answer in valid UTF-8.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{
		"Final answer: 1\nEvidence:\n- https://a.example (published 2025-11-01T00:00:00Z)",
		`{"answer": "Yes", "evidence": [{"url": "https://x.example", "published": "2025-01-01"}]}`,
		"最终答案：否", "\xff\xfe Final answer: \x00", "{",
		"> **Final   Answer**: Yes\n- https://x.example/a published: 2025-01-02 03:04:05+08:00 and http://y.example",
		"- https://a.b (published：： 2025-10-29T16:00) \n## 预测：否\nhttps://c.d 发布于2024-01-01T00:00:00-05",
		"Prediction : 12 bn\nhttps://e.f published 2025-1-01\nhttps://g.h PUBLISHED 2025-01-01T00:00:60Zx",
		"ＦＩＮＡＬ answer: 3\nfınal answer: 4\nAnswer:\t\n最终答案：42\n答案: \xff\n\xe6\x9c",
		"- none (no search; synthetic)\nhttps://x 2025-01-01 published",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fc, err := ParseReply(s)
		if err == nil && fc.Answer == "" {
			t.Fatal("no error and no answer")
		}
		if !utf8.ValidString(fc.Answer) {
			t.Fatalf("answer %q is not UTF-8", fc.Answer)
		}
		if !utf8.ValidString(s) || strings.ContainsAny(s, "\n") || len(s) > MaxAnswer {
			return
		}
		want := strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "*_"))
		reply := "Final answer: " + s + "\n- https://x.example/p (published 2025-01-02)"
		fc, err = ParseReply(reply)
		if want == "" {
			if err != ErrNoAnswer {
				t.Fatalf("ParseReply(%q): error %v, want ErrNoAnswer", reply, err)
			}
			return
		}
		if err != nil || fc.Answer != want || len(fc.Evidence) != 1 || fc.Evidence[0].URL != "https://x.example/p" ||
			!fc.Evidence[0].Time.Equal(time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("ParseReply(%q) = %+v, %v; want answer %q and one dated URL", reply, fc, err, want)
		}
	})
}
