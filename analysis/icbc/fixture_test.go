package icbc

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

const rubricEN = `## Synthetic test rubric
### 1. Analysis (60 points)
#### (1) Depth (40 points)
- 30-40: deep
- 0-29: shallow
#### (2) Data (20 points)
- 10-20: good
- 0-9: poor
### 2. Writing (40 points)
**(1) Clarity (40 points)**
- 0-40: any
`

// rubricZH's first dimension announces 50 points but its sub-dimensions
// add up to 40.
const rubricZH = `## 合成测试评分标准
## 1. 分析（共 50 分）
### （1）深度（30分）
- 20–30分：好
### （2）数据（10分）
- 0–10分：一般
## 2. 表达（共 50 分）
### （1）清晰（50分）
- 0–50分：任意
`

func fixtureInputs() *Inputs {
	ref, _ := time.Parse(time.DateOnly, "2026-04-30")
	return &Inputs{
		Objectives: []Objective{
			{ID: "1", Question: "Q1?", Answer: Answer{"35"}, ClassificationCode: "BNK-TSY", Modality: "Text-Only", Language: "en"},
			{ID: "2", Question: "Q2?", Answer: Answer{"A", "B"}, ClassificationCode: "CAP-COM", Modality: "Multi-Modal", Language: "en"},
			{ID: "3", Question: "问题3？", Answer: Answer{"1.5"}, ClassificationCode: "INS-RSV", Modality: "Text-Only", Language: "zh"},
			{ID: "4", Question: "问题4？", Answer: Answer{"x"}, ClassificationCode: "OTH-INT", Modality: "Text-Only", Language: "zh"},
		},
		Subjectives: []Subjective{
			{ID: "1", Question: "Write report 1.", Language: "en", Criteria: rubricEN},
			{ID: "2", Question: "写报告2。", Language: "zh", Criteria: rubricZH},
			{ID: "3", Question: "Write report 3.", Language: "en", Criteria: rubricEN},
		},
		Prompts: Prompts{
			Answer: map[string]string{"en": "Answer with {{Exact Answer}}.", "zh": "请回答。"},
			Judge:  map[string]string{"en": "Q: {question}\nR: {response}\nA: {correct_answer}", "zh": "问：{question}\n答：{response}\n正确：{correct_answer}"},
		},
		Authority: Authority{HighTrustSuffixes: []string{".gov"}, HighTrustDomains: []string{"reuters.com"}, DefaultWeight: 0.2},
		Config: Config{
			Format: ConfigFormat, ReferenceDate: "2026-04-30",
			Systems: []System{
				{Model: Model{Name: "A", Provider: "test", Model: "a"}, Group: "closed", Citation: true, Source: true},
				{Model: Model{Name: "B", Provider: "test", Model: "b"}, Group: "open"},
			},
			ObjectiveJudge: Model{Name: "OJ", Provider: "test", Model: "oj"},
			RubricJudges:   []Model{{Name: "RJ", Provider: "test", Model: "rj"}},
			CitationJudge:  Model{Name: "CJ", Provider: "test", Model: "cj"},
			Domains:        []Domain{{"BNK", "banking"}, {"CAP", "capital_markets"}, {"INS", "insurance"}, {"OTH", "others"}},
			Tiers:          []float64{1, 0.85, 0.7, 0.2},
			Alpha:          0.002,
			Weights:        Weights{0.8, 0.1, 0.1},
			MaxClaims:      30,
		},
		RefDate: ref,
	}
}

const reportA1 = `Prepared by A.
Banks grew deposits by 4.2% in 2025 [1]. Loan demand fell.[2]
Profit rose [1][2].
[1] Reuters story, https://www.reuters.com/x, published 2026-01-31
[2] Blog, https://blog.example.net/y (2025-04-30)
[3] No date source https://www.sec.gov/z
`

func verdictJSON(correct string, conf any) string {
	m := map[string]any{"extracted_final_answer": "x", "reasoning": "r", "correct": correct}
	if conf != nil {
		m["confidence"] = conf
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// fixtureReplies answers by (task, role, name).
var fixtureReplies = map[string]string{
	"objective/en/1 system A":    "Exact Answer: 35",
	"objective/en/2 system A":    "Exact Answer: C",
	"objective/zh/3 system A":    "确切答案：1.5",
	"objective/zh/4 system A":    "确切答案：?",
	"objective/en/1 system B":    "Exact Answer: 1",
	"objective/en/2 system B":    "Exact Answer: A, B",
	"objective/zh/4 system B":    "确切答案：y",
	"objective/en/1 judge OJ A":  verdictJSON("yes", 80),
	"objective/en/2 judge OJ A":  "```json\n" + verdictJSON("no", 60) + "\n```",
	"objective/zh/3 judge OJ A":  verdictJSON("yes", "90%"),
	"objective/zh/4 judge OJ A":  "I will not grade this.",
	"objective/en/1 judge OJ B":  verdictJSON("no", nil),
	"objective/en/2 judge OJ B":  verdictJSON("yes", 50) + " trailing prose",
	"objective/zh/4 judge OJ B":  `｛"correct"："no"，"confidence"：20｝`,
	"subjective/en/1 system A":   reportA1,
	"subjective/zh/2 system A":   "没有引用的报告。",
	"subjective/en/3 system A":   "Synthetic.",
	"subjective/en/1 system B":   "Report B1.",
	"subjective/zh/2 system B":   "报告B2。",
	"subjective/en/3 system B":   "Report B3.",
	"subjective/en/1 judge RJ A": `{"scores":[{"id":"1.1","score":35},{"id":"1.2","score":25},{"id":"2.1","score":30}]}`,
	"subjective/zh/2 judge RJ A": `{"scores":[{"id":"1.1","score":20},{"id":"1.2","score":10},{"id":"2.1","score":"40"}]}`,
	"subjective/en/3 judge RJ A": `{"scores":[{"id":"1.1","score":30},{"id":"1.2","score":10},{"id":"2.1","score":15}]}`,
	"subjective/en/1 judge RJ B": "I refuse.",
	"subjective/zh/2 judge RJ B": `{"scores":[{"id":"1.1","score":30},{"id":"2.1","score":20}]}`,
	"subjective/en/3 judge RJ B": `{"scores":[{"id":"1.1","score":20},{"id":"1.2","score":20},{"id":"2.1","score":20}]}`,
	"subjective/en/1 judge CJ A": `{"verdicts":[{"id":"C1","verdict":"supported"},{"id":"C2","verdict":"unsupported"},{"id":"C3","verdict":"unknown"},{"id":"C4","verdict":"Supported"}]}`,
}

// fixtureAnswerer answers from fixtureReplies; a judge's key names the
// system whose output it judges (found from the output in the prompt).
type fixtureAnswerer struct{ calls *[]results.Call }

func (f fixtureAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		if f.calls != nil {
			*f.calls = append(*f.calls, c)
		}
		key := c.Label.Task + " " + string(c.Label.Role) + " " + c.Label.Name
		if c.Label.Role == results.RoleJudge {
			sys := "A"
			for k, v := range fixtureReplies {
				if strings.HasSuffix(k, " system B") && strings.HasPrefix(k, c.Label.Task+" ") && strings.Contains(c.Prompt.User, v) {
					sys = "B"
				}
			}
			key += " " + sys
		}
		text, ok := fixtureReplies[key]
		if !ok {
			out[i] = results.Reply{Err: errors.New("no fixture reply for " + key)}
			continue
		}
		out[i] = results.Reply{Text: text, Source: results.SourceSim}
	}
	return out
}

func cellNum(t *testing.T, res *analysis.Result, table, row, col string) (float64, bool) {
	t.Helper()
	tb := res.Table(table)
	if tb == nil {
		t.Fatalf("no table %s", table)
	}
	c := tb.Col(col)
	if c < 0 {
		t.Fatalf("table %s: no column %s", table, col)
	}
	for _, r := range tb.Rows {
		if r[0].Text == row {
			return r[c].Num, r[c].IsNum
		}
	}
	t.Fatalf("table %s: no row %s", table, row)
	return 0, false
}

func runFixture(t *testing.T, in *Inputs, s analysis.Settings) *analysis.Result {
	t.Helper()
	res, err := analyze(context.Background(), in, fixtureAnswerer{}, s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestScoring checks every number of the fixture, derived by hand:
//
// Objective (judge verdicts): A: en/1 correct 80, en/2 wrong 60, zh/3
// correct "90%", zh/4 unparsable (incorrect, no confidence). B: en/1
// wrong, no confidence (100), en/2 correct 50, zh/3 no answer (missing),
// zh/4 wrong 20 in full-width JSON.
//   - A: EN all 1/2 = 50, text-only (en/1) 100; ZH all 1/2 = 50, text 50.
//   - B: EN 1/2 = 50, text-only 0; ZH 0/1 = 0 (zh/3 not scored).
//   - Calibration (bins of 10, one bin): A (.8,T) (.6,F) (.9,T): mean
//     conf .7667 - acc .6667 = 10.00%. B (1,F) (.5,T) (.2,F): .5667 -
//     .3333 = 23.33%. Accuracy = mean of EN and ZH: A 50, B 25.
//   - Domains: A banking 100, capital 0, insurance 100, others 0, avg 50.
//
// Subjective: rubric EN = 40 + 20 + 40 points. A: en/1 35 + 25 (clipped
// to 20) + 30 = 85; zh/2 20 + 10 + 40 = 70; en/3 30 + 10 + 15 = 55.
// B: en/1 unparsable = 0; zh/2 30 + missing (0) + 20 = 50; en/3 60.
//   - Expert (tasks > 0): A EN (85+55)/2 = 70, ZH 70; B EN 60, ZH 50.
//     Over all tasks: B EN (0+60)/2 = 30.
//   - Citation, A EN: report 1 has claims C1 "Banks grew ... 4.2% in
//     2025" [1], C2 "Loan demand fell" [2] (marker after the stop), C3
//     and C4 "Profit rose" [1][2]. Verdicts supported, unsupported,
//     unknown, supported: 2 of 3 judged = 2/3. Report 3 has no claims:
//     0. Task mean 33.33; pooled 2/3 = 66.67. A ZH: no claims: 0.
//   - Source, A EN: [1] reuters.com tier 1, 89 days old:
//     exp(-0.178) = 0.836942; [2] tier 4 (0.2), 365 days: 0.2 x
//     exp(-0.73) = 0.096382; [3] undated, not counted. S_1 = 0.466662,
//     S_3 = 0 (no references): 100 x 0.233331 = 23.3331. A ZH: 0.
//   - Subjective A EN = 0.8x70 + 0.1x33.3333 + 0.1x23.3331 = 61.6666;
//     overall (50 + 61.6666)/2 = 55.8333. A ZH = 0.8x70 = 56, overall
//     (50+56)/2 = 53. B EN = 48, overall 49; B ZH = 40, overall 20.
//   - Delta A = 2.8333, B = 29.
func TestScoring(t *testing.T) {
	res := runFixture(t, fixtureInputs(), nil)
	want := []struct {
		table, row, col string
		v               float64
	}{
		{"en_detail", "A", "objective_all", 50}, {"en_detail", "A", "objective_text_only", 100},
		{"zh_detail", "A", "objective_all", 50}, {"zh_detail", "A", "objective_text_only", 50},
		{"en_detail", "B", "objective_all", 50}, {"en_detail", "B", "objective_text_only", 0},
		{"zh_detail", "B", "objective_all", 0},
		{"calibration", "A", "calibration_error", 10}, {"calibration", "B", "calibration_error", 23.333333333},
		{"calibration", "A", "accuracy", 50}, {"calibration", "B", "accuracy", 25},
		{"domains", "A", "banking", 100}, {"domains", "A", "capital_markets", 0}, {"domains", "A", "insurance", 100},
		{"domains", "A", "others", 0}, {"domains", "A", "average", 50},
		{"en_detail", "A", "expert", 70}, {"zh_detail", "A", "expert", 70},
		{"en_detail", "B", "expert", 60}, {"zh_detail", "B", "expert", 50}, {"en_detail", "B", "expert_all_tasks", 30},
		{"en_detail", "A", "citation", 100.0 / 3}, {"zh_detail", "A", "citation", 0},
		{"en_detail", "A", "source", 23.33310553767}, {"zh_detail", "A", "source", 0},
		{"main_results", "A", "en_subjective", 56 + 10.0/3 + 2.333310553767}, {"main_results", "A", "en_overall", (50 + 56 + 10.0/3 + 2.333310553767) / 2},
		{"main_results", "A", "zh_subjective", 56}, {"main_results", "A", "zh_overall", 53},
		{"main_results", "B", "en_overall", 49}, {"main_results", "B", "zh_overall", 20},
		{"cross_lingual", "B", "delta", 29},
	}
	for _, w := range want {
		got, ok := cellNum(t, res, w.table, w.row, w.col)
		if !ok || math.Abs(got-w.v) > 1e-6 {
			t.Errorf("%s %s %s = %v (defined %v), want %v", w.table, w.row, w.col, got, ok, w.v)
		}
	}
	if _, ok := cellNum(t, res, "en_detail", "B", "citation"); ok {
		t.Error("B citation: want not evaluated")
	}
	if _, ok := cellNum(t, res, "domains", "B", "insurance"); ok {
		t.Error("B insurance (only task missing): want undefined")
	}
	if res.Missing != 1 {
		t.Errorf("Missing = %d, want 1 (B's answer to zh/3)", res.Missing)
	}
	if !res.Synthetic {
		t.Error("Synthetic = false")
	}
	for _, p := range []string{
		"objective/zh/4 A: judge response counted incorrect",
		"objective/en/1 B: judge response: no confidence; taken as 100",
		"subjective/en/1 A: judge RJ: sub-dimension 1.2: score 25 outside 0..20, clipped",
		"subjective/en/1 B: judge RJ: response scored 0",
		"subjective/zh/2 B: judge RJ: sub-dimension 1.2: no score, taken as 0",
		"rubric 2: dimension 1: sub-dimensions add up to 40 points, not its 50",
	} {
		found := false
		for _, q := range res.Problems {
			found = found || strings.Contains(q, p)
		}
		if !found {
			t.Errorf("no problem %q in %q", p, res.Problems)
		}
	}
	if res.Ranking[0] != "A" || len(res.Ranking) != 2 {
		t.Errorf("Ranking = %v", res.Ranking)
	}
}

func TestKnobs(t *testing.T) {
	tests := []struct {
		knob, value, table, row, col string
		want                         float64
		undef                        bool
	}{
		// B EN expert over all tasks: (0 + 60)/2.
		{knob: KnobExpertAverage, value: "all", table: "en_detail", row: "B", col: "expert", want: 30},
		// Pooled citations: 2 supported of 3 judged.
		{knob: KnobCitationAverage, value: "pooled", table: "en_detail", row: "A", col: "citation", want: 200.0 / 3},
		// No decay: S_1 = (1 + 0.2)/2, S_3 = 0 -> 30.
		{knob: KnobAlpha, value: "0", table: "en_detail", row: "A", col: "source", want: 30},
		// Expert only: A EN subjective = 70.
		{knob: KnobWeights, value: "1,0,0", table: "main_results", row: "A", col: "en_subjective", want: 70},
		// Tier 4 worth 0: S_1 = 0.836942/2.
		{knob: KnobTiers, value: "1,0.85,0.7,0", table: "en_detail", row: "A", col: "source", want: 100 * 0.8369424234887681 / 4},
		// The original HLE code has no bin for 3 predictions.
		{knob: KnobBinning, value: "hle", table: "calibration", row: "A", col: "calibration_error", undef: true},
		// Bins of 2 over 3 predictions: one bin (the last takes the
		// remainder), as with 10.
		{knob: KnobBeta, value: "2", table: "calibration", row: "A", col: "calibration_error", want: 10},
		// Bins of 1: (.6,F) (.8,T) (.9,T): sqrt((.36 + .04 + .01)/3).
		{knob: KnobBeta + "1", value: "1", table: "calibration", row: "A", col: "calibration_error", want: 100 * math.Sqrt(0.41/3)},
	}
	for _, tc := range tests {
		t.Run(tc.knob, func(t *testing.T) {
			res := runFixture(t, fixtureInputs(), analysis.Settings{strings.TrimRight(tc.knob, "0123456789"): tc.value})
			got, ok := cellNum(t, res, tc.table, tc.row, tc.col)
			if tc.undef != !ok || (ok && math.Abs(got-tc.want) > 1e-6) {
				t.Fatalf("%s=%s: %s %s %s = %v (defined %v), want %v (undefined %v)", tc.knob, tc.value, tc.table, tc.row, tc.col, got, ok, tc.want, tc.undef)
			}
		})
	}
	if _, err := analyze(context.Background(), fixtureInputs(), fixtureAnswerer{}, analysis.Settings{KnobBeta: "0"}); err == nil {
		t.Error("beta=0: want an error")
	}
}

func TestDeterminism(t *testing.T) {
	encode := func(res *analysis.Result) string {
		all := *res
		all.Details, all.LazyDetails = res.AllDetails(), nil // which the encoding leaves out
		b, err := json.Marshal(&all)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	base := encode(runFixture(t, fixtureInputs(), nil))
	r := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		in := fixtureInputs()
		r.Shuffle(len(in.Objectives), func(i, j int) { in.Objectives[i], in.Objectives[j] = in.Objectives[j], in.Objectives[i] })
		r.Shuffle(len(in.Subjectives), func(i, j int) { in.Subjectives[i], in.Subjectives[j] = in.Subjectives[j], in.Subjectives[i] })
		r.Shuffle(len(in.Config.Systems), func(i, j int) {
			in.Config.Systems[i], in.Config.Systems[j] = in.Config.Systems[j], in.Config.Systems[i]
		})
		if got := encode(runFixture(t, in, nil)); got != base {
			t.Fatal("shuffled inputs changed the result")
		}
	}
	// The requests themselves do not depend on input order either.
	var a, b []results.Call
	analyze(context.Background(), fixtureInputs(), fixtureAnswerer{&a}, nil)
	in := fixtureInputs()
	in.Objectives[0], in.Objectives[3] = in.Objectives[3], in.Objectives[0]
	analyze(context.Background(), in, fixtureAnswerer{&b}, nil)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatal("shuffled inputs changed the requests")
	}
}

// TestPrivateHoldout runs the fixture's tasks again as a private set:
// with the same replies the private_holdout table equals main_results,
// and the private calls are labelled apart.
func TestPrivateHoldout(t *testing.T) {
	in := fixtureInputs()
	in.PrivateObjectives = in.Objectives
	in.PrivateSubjectives = in.Subjectives
	var calls []results.Call
	ans := fixtureAnswerer{&calls}
	res, err := analyze(context.Background(), in, privateAnswerer{ans}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pub, priv := res.Table("main_results"), res.Table("private_holdout")
	if priv == nil || len(priv.Rows) != len(pub.Rows) {
		t.Fatalf("private_holdout = %+v", priv)
	}
	for i, row := range priv.Rows {
		for j, c := range row {
			want := pub.Rows[i][pub.Col(priv.Columns[j].Name)]
			if c != want {
				t.Errorf("private_holdout %s %s = %+v, want %+v", row[0].Text, priv.Columns[j].Name, c, want)
			}
		}
	}
	if res.Missing != 2 {
		t.Errorf("Missing = %d, want 2 (zh/3 of B, public and private)", res.Missing)
	}
	private := 0
	for _, c := range calls {
		if strings.HasPrefix(c.Label.Task, "private/") {
			private++
		}
	}
	if private == 0 || 2*private != len(calls) {
		t.Errorf("%d private calls of %d", private, len(calls))
	}
}

// privateAnswerer answers private calls as the public ones.
type privateAnswerer struct{ a fixtureAnswerer }

func (p privateAnswerer) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	cs := make([]results.Call, len(calls))
	for i, c := range calls {
		c.Label.Task = strings.TrimPrefix(c.Label.Task, "private/")
		cs[i] = c
	}
	out := p.a.Answer(ctx, cs)
	for i := range calls {
		(*p.a.calls)[len(*p.a.calls)-len(calls)+i] = calls[i]
	}
	return out
}

// analyze runs the benchmark over loaded inputs: Collect and Score in one.
func analyze(ctx context.Context, inputs *Inputs, ans results.Answerer, s analysis.Settings) (*analysis.Result, error) {
	if _, err := parseSettings(s, &inputs.Config); err != nil {
		return nil, err
	}
	return score(collect(ctx, inputs, ans, &analysis.MemoryTexts{}), s)
}
