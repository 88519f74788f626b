package icbc

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"
)

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		name, in string
		correct  bool
		conf     float64
		extract  string
		bad      bool
	}{
		{name: "plain", in: `{"extracted_final_answer": "35", "reasoning": "ok", "correct": "yes", "confidence": 85}`, correct: true, conf: 85, extract: "35"},
		{name: "fence", in: "```json\n{\"extracted_final_answer\": \"A\", \"correct\": \"no\", \"confidence\": 40}\n```", conf: 40, extract: "A"},
		{name: "prose around", in: "Here is my judgement:\n{\"correct\": \"yes\", \"confidence\": 70}\nThanks.", correct: true, conf: 70},
		{name: "percent", in: `{"correct": "yes", "confidence": "85%"}`, correct: true, conf: 85},
		{name: "missing confidence", in: `{"correct": "no"}`, conf: 100},
		{name: "full-width", in: `｛"extracted_final_answer"："1.5"，"correct"："yes"，"confidence"：90｝`, correct: true, conf: 90, extract: "1.5"},
		{name: "chinese quotes in string", in: `{"extracted_final_answer": "“35”", "correct": "是", "confidence": 60}`, correct: true, conf: 60, extract: "“35”"},
		{name: "bool and upper keys", in: `{"Correct": true, "Confidence": 30}`, correct: true, conf: 30},
		// Keys equal but for case: the last in sorted order ("correct"
		// after "Correct") wins, every time.
		{name: "keys differing in case", in: `{"correct": "no", "Correct": "yes", "confidence": 20}`, conf: 20},
		{name: "keys differing in case reversed", in: `{"Correct": "yes", "correct": "no", "confidence": 20}`, conf: 20},
		{name: "clipped", in: `{"correct": "yes", "confidence": 150}`, correct: true, conf: 100},
		{name: "broken json", in: `{"extracted_final_answer": "35", "correct": "yes", "confidence": 85,,}`, correct: true, conf: 85, extract: "35"},
		{name: "braces in strings", in: `{"reasoning": "a } brace", "correct": "no", "confidence": 5}`, conf: 5},
		{name: "no verdict", in: "I cannot grade this.", bad: true},
		{name: "bad correct", in: `{"correct": "maybe"}`, bad: true},
		{name: "bad confidence", in: `{"correct": "yes", "confidence": "high"}`, bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := ParseVerdict(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("ParseVerdict = %+v, want an error", v)
				}
				return
			}
			if err != nil || v.Correct != tc.correct || v.Confidence != tc.conf || v.Extracted != tc.extract {
				t.Fatalf("ParseVerdict = %+v, %v; want correct %v conf %v extracted %q", v, err, tc.correct, tc.conf, tc.extract)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	got := Format("a {x} {{y}} {z} {", map[string]string{"x": "{z}"})
	if want := "a {z} {y} {z} {"; got != want {
		t.Fatalf("Format = %q, want %q", got, want)
	}
}

func loadTestdata(t testing.TB) *Inputs {
	t.Helper()
	fsys := os.DirFS("testdata")
	in, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// TestAuthorsRubrics parses all 40 public rubrics: every one has 4 or 5
// dimensions, 11 to 15 sub-dimensions and 100 points, and only rubric 36
// is inconsistent (its dimension 2 announces 30 points, its
// sub-dimensions add up to 36, and sub-dimension 2.5 has no bands).
func TestAuthorsRubrics(t *testing.T) {
	in := loadTestdata(t)
	if len(in.Subjectives) != 40 || len(in.Objectives) != 80 {
		t.Fatalf("loaded %d subjective, %d objective tasks", len(in.Subjectives), len(in.Objectives))
	}
	for _, s := range in.Subjectives {
		r, err := ParseRubric(s.Criteria)
		if err != nil {
			t.Errorf("rubric %s: %v", s.ID, err)
			continue
		}
		nd, ns := len(r.Dimensions), len(r.Subs())
		if nd < 4 || nd > 5 || ns < 11 || ns > 15 || r.Total() != 100 {
			t.Errorf("rubric %s: %d dimensions, %d sub-dimensions, %g points", s.ID, nd, ns, r.Total())
		}
		if s.ID == "36" {
			want := []string{"sub-dimension 2.5 has no score bands", "dimension 2: sub-dimensions add up to 36 points, not its 30", "sub-dimensions add up to 106 points in all"}
			if strings.Join(r.Problems, "|") != strings.Join(want, "|") {
				t.Errorf("rubric 36 problems = %q, want %q", r.Problems, want)
			}
		} else if len(r.Problems) > 0 {
			t.Errorf("rubric %s: problems %q", s.ID, r.Problems)
		}
	}
	// Multiple-choice answers written as lists.
	for _, o := range in.Objectives {
		if o.ID == "6" && o.Answer.String() != "A, C, D" {
			t.Errorf("answer 6 = %q", o.Answer.String())
		}
	}
}

func TestParseRubricStyles(t *testing.T) {
	tests := []struct {
		name, md string
		dims     int
		subs     []float64
		problems int
		bad      bool
	}{
		{name: "bold subs", md: "## T\n### 1. A (100 points)\n**(1) x (60 points)**\n- 50-60: a\n**(2) y (40 points)**\n- 0-40: b\n", dims: 1, subs: []float64{60, 40}},
		{name: "h4 subs", md: "## T\n### 1. A (100 points)\n#### (1) x (100 points)\n- **9–100 points**: a\n", dims: 1, subs: []float64{100}},
		{name: "chinese h2", md: "## 标准\n## 1. 甲（共 100 分）\n### （1）乙（100 分）\n* **0–100 分**：丙\n", dims: 1, subs: []float64{100}},
		{name: "single band", md: "## T\n### 1. A (100 points)\n#### (1) x (100 points)\n- **100**: all\n", dims: 1, subs: []float64{100}},
		{name: "announced counts", md: "## T\nThe framework contains **2 primary dimensions and 3 secondary dimensions**.\n### 1. A (100 points)\n#### (1) x (100 points)\n- 0-100: a\n", dims: 1, subs: []float64{100}, problems: 2},
		{name: "not 100", md: "## T\n### 1. A (90 points)\n#### (1) x (90 points)\n- 0-80: a\n", dims: 1, subs: []float64{90}, problems: 2},
		{name: "no dimensions", md: "## Title\nsome text\n", bad: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRubric(tc.md)
			if tc.bad != (err != nil) {
				t.Fatalf("ParseRubric error = %v, want error %v", err, tc.bad)
			}
			if tc.bad {
				return
			}
			var subs []float64
			for _, s := range r.Subs() {
				subs = append(subs, s.Points)
			}
			if len(r.Dimensions) != tc.dims || !equalFloats(subs, tc.subs) || len(r.Problems) != tc.problems {
				t.Fatalf("ParseRubric = %d dims, subs %v, problems %q", len(r.Dimensions), subs, r.Problems)
			}
		})
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTier(t *testing.T) {
	a := loadTestdata(t).Authority
	tests := map[string]int{
		"https://www.bloomberg.com/news/x":        1,
		"https://data.stats.gov.cn/easyquery.htm": 1, // suffix .gov.cn and listed domain
		"https://www.sse.com.cn/disclosure":       1, // registrable domain under com.cn
		"https://www.bankofengland.co.uk/report":  1,
		"https://www.ecb.europa.eu/press":         1, // listed below the registrable domain
		"https://europa.eu/":                      4, // above the listed ecb.europa.eu
		"https://www.irs.gov/":                    1,
		"https://www.notice.com/":                 4, // not ice.com
		"https://finance.sina.com.cn/stock":       3,
		"https://www.caixin.com/2025":             2,
		"https://example.com.cn/":                 4,
		"ftp://reuters.com/x":                     4,
		"not a url":                               4,
		"https://WWW.Reuters.COM:443/x":           1,
	}
	for u, want := range tests {
		if got := a.Tier(u); got != want {
			t.Errorf("Tier(%q) = %d, want %d", u, got, want)
		}
	}
	if got := RegistrableDomain("a.b.sse.com.cn"); got != "sse.com.cn" {
		t.Errorf("RegistrableDomain = %q", got)
	}
}

func TestParseReport(t *testing.T) {
	refs, claims := ParseReport(reportA1, 30)
	if len(refs) != 3 || refs[0].URL != "https://www.reuters.com/x" || refs[0].Date.Format("2006-01-02") != "2026-01-31" ||
		refs[1].Date.Format("2006-01-02") != "2025-04-30" || !refs[2].Date.IsZero() {
		t.Fatalf("refs = %+v", refs)
	}
	want := []Claim{{"C1", "Banks grew deposits by 4.2% in 2025.", 1}, {"C2", "Loan demand fell.", 2}, {"C3", "Profit rose.", 1}, {"C4", "Profit rose.", 2}}
	if len(claims) != len(want) {
		t.Fatalf("claims = %+v", claims)
	}
	for i := range want {
		if claims[i] != want[i] {
			t.Errorf("claim %d = %+v, want %+v", i, claims[i], want[i])
		}
	}
	if _, c := ParseReport(reportA1, 2); len(c) != 2 {
		t.Errorf("maxClaims 2: got %d claims", len(c))
	}
	// A marker naming no reference is not a claim; Chinese stops split.
	_, c := ParseReport("甲上升[1]。乙下降[5]。\n[1] 来源 https://x.gov/a 2025-01-01\n", 10)
	if len(c) != 1 || c[0].Text != "甲上升。" {
		t.Errorf("chinese claims = %+v", c)
	}
}

func TestParseCitationsAndScores(t *testing.T) {
	v, notes, err := ParseCitations("```json\n{\"verdicts\":[{\"id\":\"C1\",\"verdict\":\"Supported\"},{\"id\":\"C9\",\"verdict\":\"supported\"},{\"id\":\"C2\",\"verdict\":\"partly\"}]}\n```", []string{"C1", "C2", "C3"})
	if err != nil || v["C1"].Verdict != Supported || v["C2"].Verdict != Unknown || v["C3"].Verdict != Unknown || len(notes) != 2 || len(v) != 3 {
		t.Fatalf("ParseCitations = %+v, %q, %v", v, notes, err)
	}
	if _, _, err := ParseCitations("no", nil); err == nil {
		t.Fatal("ParseCitations(no): want an error")
	}
	r, _ := ParseRubric(rubricEN)
	s, notes, err := ParseRubricScores(`{"scores":[{"id":"1.1","score":"38.5"},{"id":"1.2","score":-3},{"id":"2.1","score":"lots"}]}`, r)
	if err != nil || len(s) != 3 || s[0].Score != 38.5 || s[1].Score != 0 || s[2].Score != 0 || len(notes) != 3 {
		t.Fatalf("ParseRubricScores = %+v, %q, %v", s, notes, err)
	}
}

func TestLoadErrors(t *testing.T) {
	base := map[string][]byte{}
	for _, f := range []string{ObjectiveFile, SubjectiveFile, PromptsFile, AuthorityFile, ConfigFile} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		base[f] = b
	}
	tests := []struct{ name, config, want string }{
		{"format", `{"format": "x"}`, "config.json: format: got \"x\""},
		{"unknown field", `{"format": "icbcbench-config/1", "colour": 1}`, "config.json: colour: unknown field"},
		{"date", strings.Replace(string(base[ConfigFile]), `"2026-04-30"`, `"30/04/2026"`, 1), "config.json: reference_date: not a YYYY-MM-DD date"},
		{"tiers", strings.Replace(string(base[ConfigFile]), `[1, 0.85, 0.7, 0.2]`, `[1, 2]`, 1), "config.json: tiers: got 2 values, want 4"},
		{"task", strings.Replace(string(base[ConfigFile]), `"objective_tasks": []`, `"objective_tasks": ["999"]`, 1), `config.json: objective_tasks: no objective task "999"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := fstest.MapFS{}
			for f, b := range base {
				m[f] = &fstest.MapFile{Data: b}
			}
			m[ConfigFile] = &fstest.MapFile{Data: []byte(tc.config)}
			_, err := Load(m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load error = %v, want %q", err, tc.want)
			}
		})
	}
}

// judgeSeeds are judge responses the fuzz tests start from.
var judgeSeeds = []string{
	`{"extracted_final_answer": "A", "reasoning": "r \"q\" \u003cb\u003e", "correct": "yes", "confidence": 85}`,
	"```json\n{\"correct\":\"no\",\"confidence\":\"85%\"}\n```",
	`｛"correct"："yes"，"confidence"：90｝`,
	`{"correct": true, "confidence": null, "reasoning": 3}`,
	`{"Correct": "yes", "correct": "no"}`,
	`{"correct": "yes", "correct": "no", "confidence": 1e400}`,
	`{"scores": [{"id": "1.1", "score": 8, "justification": "ok\n"}, {"id": " 1.2", "score": "38.5%"}, {"id": "2.1", "score": null}, {"id": "2.2"}, {"id": "1.2", "score": [1]}]}`,
	`{"scores": [{"id": "1.1", "score": -0.5e1, "justification": "\ud83d\ude00"}], "total": 5}`,
	`{"scores": []}`,
	`{"verdicts": [{"id": "C1", "verdict": "Supported", "reason": "x"}, {"id": "C2", "verdict": "partly"}]}`,
	`{"verdicts": null}`,
	"{\"verdicts\": [{\"id\": \"C1\", \"verdict\": \"supported\xff\"}]}",
	`{"id": 01, "score": 1.}`,
	`{`, ``, `"correct": yes`,
}

// FuzzParseVerdict checks that a verdict's confidence is in 0..100 and
// that the verdict does not depend on map order: keys equal but for case
// resolve the same way every time.
func FuzzParseVerdict(f *testing.F) {
	for _, s := range append(judgeSeeds, `{"correct": "yes", "confidence": "85%"}`, "```json\n{\"correct\":\"no\"}\n```", `｛"correct"："yes"｝`, `"correct": yes`) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVerdict(s)
		if err == nil && !(v.Confidence >= 0 && v.Confidence <= 100) {
			t.Fatalf("confidence %v outside 0..100", v.Confidence)
		}
		for range 3 {
			if v2, err2 := ParseVerdict(s); !reflect.DeepEqual(v, v2) || fmt.Sprint(err) != fmt.Sprint(err2) {
				t.Fatalf("two parses differ: %+v, %v and %+v, %v", v, err, v2, err2)
			}
		}
	})
}

func FuzzParseRubric(f *testing.F) {
	f.Add(rubricEN)
	f.Add(rubricZH)
	f.Add("### 1. A (x points)\n**(1)")
	f.Add("# T\n4 primary dimensions and 12 secondary dimensions\n1. A (10 pts)\n（1）B（10分）\n- 9-10: x\n+ 5: y\n* **1 to 2 points**: z")
	f.Add("## 4个一级维度、12个二级维度\n(1) early (5 points)\n### 1、名称（共 30 分）\n- bad")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRubric(s)
		if err != nil {
			return
		}
		if len(r.Dimensions) == 0 {
			t.Fatal("no error and no dimensions")
		}
		for _, d := range r.Dimensions {
			for _, sd := range d.Subs {
				if !strings.HasPrefix(sd.ID, d.ID+".") {
					t.Fatalf("sub-dimension %s under dimension %s", sd.ID, d.ID)
				}
				for _, b := range sd.Bands {
					if b.Lo > b.Hi {
						t.Fatalf("band %+v: low above high", b)
					}
				}
			}
		}
	})
}

func FuzzParseReport(f *testing.F) {
	f.Add(reportA1, 5)
	f.Add("a.[1][2] b。[3]\n[1] https://x.gov 2025-01-01", 2)
	f.Add("[", 1)
	f.Add(" - [12]: Title — https://a.b/c?d=1). 2025-02-03 x\n* [3] https://)x https://y.z/(1) 2024-1-01 2024-01-011 a2024-01-01 2024-01-01\nClaim one [12] . Two[3]， 三[3]。", 30)
	f.Add("\xff[1] https://a\xfe 2020-01-01\nbad \xff utf8 [1]. more\xc3[1]", 30)
	f.Add("[1] 来源：《报告》https://x.gov.cn/a，2025-01-01\n甲上升 [1] ，乙下降[1][1]！丙[1]？", 30)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%50 + 1
		if max < 1 {
			max = 1
		}
		refs, claims := ParseReport(s, max)
		if len(claims) > max {
			t.Fatalf("%d claims, max %d", len(claims), max)
		}
		have := map[int]bool{}
		for i, r := range refs {
			if i > 0 && refs[i-1].N > r.N || have[r.N] {
				t.Fatalf("references not sorted and unique: %+v", refs)
			}
			have[r.N] = true
			if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
				t.Fatalf("reference URL %q", r.URL)
			}
		}
		for i, c := range claims {
			// (Removing markers can leave one: "[[2]0]" is "[0]" without "[2]".)
			if !have[c.Ref] || c.ID != fmt.Sprintf("C%d", i+1) || c.Text == "" {
				t.Fatalf("claim %+v: unknown reference, bad id or empty", c)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c.Text) {
				t.Fatalf("invalid UTF-8 claim from valid input")
			}
		}
	})
}

func FuzzParseJudgeJSON(f *testing.F) {
	f.Add(`{"scores":[{"id":"1.1","score":5}]}`, `{"verdicts":[{"id":"C1","verdict":"supported"}]}`)
	f.Add("```{", "}")
	for _, s := range judgeSeeds {
		f.Add(s, s)
	}
	r, _ := ParseRubric(rubricEN)
	f.Fuzz(func(t *testing.T, scores, verdicts string) {
		s, _, err := ParseRubricScores(scores, r)
		if err == nil {
			for i, sc := range s {
				if sc.Score < 0 || sc.Score > r.Subs()[i].Points {
					t.Fatalf("score %v outside its range", sc.Score)
				}
			}
		}
		v, _, err := ParseCitations(verdicts, []string{"C1"})
		if err == nil && len(v) != 1 {
			t.Fatalf("verdicts %v", v)
		}
	})
}

func FuzzLoadConfig(f *testing.F) {
	b, err := os.ReadFile("testdata/" + ConfigFile)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
	f.Add(`{"format":"icbcbench-config/1","systems":[{}]}`)
	base := fstest.MapFS{}
	for _, n := range []string{ObjectiveFile, SubjectiveFile, PromptsFile, AuthorityFile} {
		d, err := os.ReadFile("testdata/" + n)
		if err != nil {
			f.Fatal(err)
		}
		base[n] = &fstest.MapFile{Data: d}
	}
	f.Fuzz(func(t *testing.T, cfg string) {
		m := fstest.MapFS{ConfigFile: &fstest.MapFile{Data: []byte(cfg)}, humanFileForFuzz: &fstest.MapFile{Data: []byte(cfg)}}
		for k, v := range base {
			m[k] = v
		}
		in, err := Load(m)
		if err == nil {
			if _, err := json.Marshal(in.Config); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// humanFileForFuzz lets a fuzzed configuration name a human-score file
// that exists (holding the fuzzed text itself).
const humanFileForFuzz = "human.jsonl"

func TestLoadPrivate(t *testing.T) {
	m := fstest.MapFS{}
	for _, f := range []string{ObjectiveFile, SubjectiveFile, PromptsFile, AuthorityFile, ConfigFile} {
		b, err := os.ReadFile("testdata/" + f)
		if err != nil {
			t.Fatal(err)
		}
		m[f] = &fstest.MapFile{Data: b}
	}
	cfg := strings.Replace(string(m[ConfigFile].Data), `"max_claims": 30`, `"max_claims": 30, "private_objective_file": "private_objective.json", "private_subjective_file": "private_subjective.json"`, 1)
	m[ConfigFile] = &fstest.MapFile{Data: []byte(cfg)}
	m["private_objective.json"] = m[ObjectiveFile]
	m["private_subjective.json"] = &fstest.MapFile{Data: []byte(`[{"id": "1", "language": "fr", "question": "q"}]`)}
	if _, err := Load(m); err == nil || !strings.Contains(err.Error(), "private_subjective.json: [0].language") {
		t.Fatalf("Load error = %v, want the private file's language", err)
	}
	m["private_subjective.json"] = m[SubjectiveFile]
	in, err := Load(m)
	if err != nil || len(in.PrivateObjectives) != 80 || len(in.PrivateSubjectives) != 40 {
		t.Fatalf("Load = %v private tasks, %v", in, err)
	}
}
