package hisrubric

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/results"
)

// The fixture: two sections with one subsection each (structure max 6),
// five items worth 7 marks (weights 1,1,2,2):
//
//	name     1.1 Company Name   recognition    accuracy           1 mark
//	strategy 1.1 Strategy       abstraction    claim              2 marks
//	revenue  2.1 Revenue {FY}   recognition    accuracy, numeric  1 mark
//	margin   2.1 Net Margin {FY} calculation   accuracy, numeric  1 mark
//	outlook  2.1 Outlook {FY}   interpretation criterion          2 marks
//
// Companies A (US, en) and B (CN, zh-CN); systems Alpha and Beta.
func fixtureStructure() *Structure {
	return &Structure{Version: StructureVersion, Sections: []Section{
		{ID: "1", Title: "Overview", Subsections: []Subsection{{ID: "1.1", Title: "Basic Information",
			Table: TableSpec{Columns: []string{"Field", "Value"}, Rows: []string{"Company Name", "Strategy"}}}}},
		{ID: "2", Title: "Financials", Subsections: []Subsection{{ID: "2.1", Title: "Income Statement",
			Table: TableSpec{Columns: []string{"Field", "{FY}", "Multiplier", "Currency"}, Rows: []string{"Revenue", "Net Margin", "Outlook"}}}}},
	}}
}

func fixtureItems() []Item {
	return []Item{
		{ID: "name", Subsection: "1.1", Row: "Company Name", Column: "Value", Capability: Recognition, Protocol: Accuracy},
		{ID: "strategy", Subsection: "1.1", Row: "Strategy", Column: "Value", Capability: Abstraction, Protocol: Claim},
		{ID: "revenue", Subsection: "2.1", Row: "Revenue", Column: "{FY}", Capability: Recognition, Protocol: Accuracy, Numeric: true},
		{ID: "margin", Subsection: "2.1", Row: "Net Margin", Column: "{FY}", Capability: Calculation, Protocol: Accuracy, Numeric: true},
		{ID: "outlook", Subsection: "2.1", Row: "Outlook", Column: "{FY}", Capability: Interpretation, Protocol: Criterion},
	}
}

func fixtureCompanies() []Company {
	return []Company{
		{ID: "A", Name: "Acme", Ticker: "ACM", Exchange: "NYSE", Market: "US", Language: "en", Industry: "Energy", FY: 2024, CY: 2024, ValuationDate: "2025-09-20"},
		{ID: "B", Name: "Bolt", Ticker: "BLT", Exchange: "SSE", Market: "CN", Language: "zh-CN", Industry: "Utilities", FY: 2024, CY: 2024, ValuationDate: "2025-09-20"},
	}
}

func fixtureTruth() []Truth {
	var out []Truth
	for _, c := range []string{"A", "B"} {
		name := map[string]string{"A": "Acme", "B": "Bolt"}[c]
		out = append(out,
			Truth{Company: c, Item: "name", Answer: name},
			Truth{Company: c, Item: "strategy", Answer: "Grow. Cut costs. Expand. Hedge."},
			Truth{Company: c, Item: "revenue", Answer: "1,000 Millions USD"},
			Truth{Company: c, Item: "margin", Answer: "10%"},
			Truth{Company: c, Item: "outlook", Answer: "Stable outlook."})
	}
	return out
}

func fixtureConfig() *Config {
	return &Config{Version: ConfigVersion,
		Systems: []Agent{{Name: "Alpha", Group: "deep-research", Provider: "fake", Model: "alpha-1"}, {Name: "Beta", Group: "thinking", Provider: "fake", Model: "beta-1"}},
		Judge:   Agent{Name: "Judge", Provider: "fake", Model: "judge-1", Params: map[string]any{"temperature": 0}}}
}

// writeInputs writes the inputs into a bundle folder and returns the bundle.
func writeInputs(t testing.TB, cfg *Config, s *Structure, items []Item, cs []Company, truth []Truth) *results.Bundle {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, results.InputsDir, Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, v any, lines bool) {
		var b []byte
		if lines {
			rv := v.([]any)
			for _, x := range rv {
				j, err := json.Marshal(x)
				if err != nil {
					t.Fatal(err)
				}
				b = append(append(b, j...), '\n')
			}
		} else {
			var err error
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(in, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	anys := func(n int, f func(int) any) []any {
		out := make([]any, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	write(ConfigFile, cfg, false)
	write(StructureFile, s, false)
	write(ItemsFile, anys(len(items), func(i int) any { return items[i] }), true)
	write(CompaniesFile, anys(len(cs), func(i int) any { return cs[i] }), true)
	write(TruthFile, anys(len(truth), func(i int) any { return truth[i] }), true)
	return &results.Bundle{Dir: dir, Manifest: &results.Manifest{Name: "fixture", Benchmarks: []string{Name}}}
}

// The fixture reports.
var fixtureReports = map[string]string{
	// Perfect structure; everything found.
	"A|Alpha": "# Report\n\n## Section 1: Overview\n\n### S1.1: Basic Information\n\n| Field | Value |\n|:--|:--|\n| Company Name | Acme |\n| Strategy | Grow. Cut costs. |\n\n" +
		"## Section 2: Financials\n\n### S2.1: Income Statement\n\n| Field | 2024 | Multiplier | Currency |\n|---|---:|---|---|\n| Revenue | 1,000 | Millions | USD |\n| Net Margin | 10% | | |\n| Outlook | Stable. | | |\n",
	// Section 2 misnamed (-1), table 1.1 with a renamed column (-1),
	// table 2.1 without its Outlook row (-1): binary 1-1+1-1+1-1 = 0 of
	// 6; fractional 1-1+1+0.75+1+5/6 (table 1.1: rows 2/2, columns 1/2;
	// table 2.1: rows 2/3, columns 4/4). Revenue written in billions
	// (numerically right), margin negative, a ragged margin row.
	"A|Beta": "## 1. overview\n### s1.1 basic information\n| Item | Value |\n| --- | --- |\n| company name | Acme |\n| Strategy | Grow |\n" +
		"## Section 2: Money\n### S2.1: Income Statement\n| Field | FY2024 | Multiplier | Currency |\n|:-|:-|:-|:-|\n| Revenue | 1 | Billions | USD |\n| Net Margin | -10% |\n",
	"B|Alpha": "## Section 1: Overview\n### S1.1: Basic Information\n| Field | Value |\n|:--|:--|\n| Company Name | Bolt |\n| Strategy | 全部 |\n" +
		"## Section 2: Financials\n### S2.1: Income Statement\n| Field | 2024 | Multiplier | Currency |\n|:--|:--|:--|:--|\n| Revenue | 1,000 | Millions | USD |\n| Net Margin | 12% | | |\n| Outlook | 稳定 | | |\n",
}

// The fixture judge verdicts, by company, system and item.
var (
	fixtureAccuracy = map[string]string{
		"A|Alpha|name": "correct", "A|Alpha|revenue": "correct", "A|Alpha|margin": "correct",
		"A|Beta|name": "correct", "A|Beta|revenue": "incorrect", "A|Beta|margin": "incorrect",
		"B|Alpha|name": "correct", "B|Alpha|revenue": "correct", "B|Alpha|margin": "incorrect",
	}
	fixtureCovered = map[string][]bool{
		"A|Alpha": {true, true, false, false}, "A|Beta": {true, false, false, false}, "B|Alpha": {true, true, true, true},
	}
	fixturePoints = map[string]float64{"A|Alpha": 6, "B|Alpha": 10}
)

// fixtureAnswerer answers from the fixture; Beta's report on B is
// missing. It records the calls.
type fixtureAnswerer struct{ calls []results.Call }

func (f *fixtureAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	f.calls = append(f.calls, calls...)
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		out[i] = f.answer(c)
	}
	return out
}

func (f *fixtureAnswerer) answer(c results.Call) results.Reply {
	if c.Label.Role == results.RoleSystem {
		text, ok := fixtureReports[c.Label.Task+"|"+c.Label.Name]
		if !ok {
			return results.Reply{Err: errors.New("not recorded")}
		}
		return results.Reply{Text: text, Source: results.SourceAPI}
	}
	b, err := ParseBatch(c.Prompt.User)
	if err != nil {
		return results.Reply{Err: err}
	}
	task := strings.Replace(c.Label.Task, " ", "|", 1)
	var r Reply
	for _, it := range b.Items {
		ri := ReplyItem{ID: it.ID, Reason: "fixture"}
		switch b.Stage {
		case StageClaims:
			ri.Claims = []string{"Grow", "Cut costs", "Expand", "Hedge"}
		case StageCriteria:
			ri.Criterion = []Point{{"stability", 4}, {"reasons", 6}}
		case StageAccuracy:
			ri.Verdict = fixtureAccuracy[task+"|"+it.ID]
		case StageCoverage:
			ri.Covered = fixtureCovered[task]
		case StageGrading:
			p := fixturePoints[task]
			ri.Points = &p
		}
		r.Items = append(r.Items, ri)
	}
	js, _ := json.Marshal(r)
	return results.Reply{Text: "Here is my grading:\n```json\n" + string(js) + "\n```", Source: results.SourceAPI}
}

func runFixture(t *testing.T, settings analysis.Settings, shuffle bool) (*analysis.Result, *fixtureAnswerer) {
	t.Helper()
	items, cs, truth := fixtureItems(), fixtureCompanies(), fixtureTruth()
	if shuffle {
		r := stats.NewRand(7)
		r.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
		r.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
		r.Shuffle(len(truth), func(i, j int) { truth[i], truth[j] = truth[j], truth[i] })
	}
	b := writeInputs(t, fixtureConfig(), fixtureStructure(), items, cs, truth)
	a := &fixtureAnswerer{}
	res, err := Benchmark{}.Run(context.Background(), analysis.Input{Bundle: b, Answer: a, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return res, a
}

// cell returns the numeric cell of table name at row key, column col.
func cell(t *testing.T, res *analysis.Result, name, row, col string) analysis.Cell {
	t.Helper()
	tab := res.Table(name)
	if tab == nil {
		t.Fatalf("no table %s", name)
	}
	c := tab.Col(col)
	if c < 0 {
		t.Fatalf("table %s: no column %s", name, col)
	}
	for _, r := range tab.Rows {
		if r[0].Text == row {
			return r[c]
		}
	}
	t.Fatalf("table %s: no row %s", name, row)
	return analysis.Cell{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestFixtureScores(t *testing.T) {
	res, a := runFixture(t, nil, false)
	// Round 1: 4 reports + claims and criteria for A and B; round 2:
	// accuracy, coverage and grading for A|Alpha and B|Alpha, accuracy
	// and coverage for A|Beta (its outlook row is missing, so nothing to
	// grade by criterion).
	if len(a.calls) != 4+4+3+3+2 {
		t.Errorf("%d calls, want 16", len(a.calls))
	}
	if res.Missing != 1 || res.Synthetic {
		t.Errorf("missing %d synthetic %v, want 1 false", res.Missing, res.Synthetic)
	}
	for _, c := range []struct {
		table, row, col string
		want            float64
	}{
		// A|Alpha = (1 + 1 + 1 + 2*2/4 + 2*6/10) / 7 = 5.2/7.
		// B|Alpha = (1 + 1 + 0 + 2*4/4 + 2*10/10) / 7 = 6/7.
		// Alpha = mean = 5.6/7 = 80.
		{"accuracy", "Alpha", "accuracy", 80},
		// A|Beta = (1 + 0 + 0 + 2*1/4 + 0 [outlook not found]) / 7 = 1.5/7.
		{"accuracy", "Beta", "accuracy", 100 * 1.5 / 7},
		{"accuracy", "Alpha", "reports", 2},
		{"accuracy", "Beta", "unscored", 1},
		{"accuracy", "Alpha", "structure", 1},
		{"accuracy", "Beta", "structure", 0},
		{"markets", "Alpha", "US", 100 * 5.2 / 7},
		{"markets", "Alpha", "CN", 100.0 * 6 / 7},
		{"markets", "Beta", "US", 100 * 1.5 / 7},
		{"languages", "Alpha", "zh-CN", 100.0 * 6 / 7},
		{"industries", "Alpha", "Energy", 100 * 5.2 / 7},
		// Capabilities (Alpha): recognition name+revenue 4/4; calculation
		// margin 1/2; abstraction strategy (0.5 + 1)/2; interpretation
		// outlook (0.6 + 1)/2.
		{"capabilities", "Alpha", "recognition", 100},
		{"capabilities", "Alpha", "calculation", 50},
		{"capabilities", "Alpha", "abstraction", 75},
		{"capabilities", "Alpha", "interpretation", 80},
		// Sections (Alpha): S1 = name (1) + strategy (2): A (1+1)/3, B 3/3;
		// S2 = revenue, margin (1 each) + outlook (2): A (1+1+1.2)/4, B (1+0+2)/4.
		{"sections", "Alpha", "section_1", (200.0/3 + 100) / 2},
		{"sections", "Alpha", "section_2", (80.0 + 75) / 2},
		{"structure_scores", "Beta", "structure", 0},
		{"structure_scores", "Beta", "fractional", (3.75 - 1 + 5.0/6) / 6},
		{"structure_scores", "Beta", "raw", 0},
		{"structure_scores", "Alpha", "perfect", 2},
		// Numeric check: Alpha's revenue and margin agree with the judge on
		// A and B (B's 12% is wrong both ways). Beta: revenue "1
		// Billions USD" is right numerically, wrong to the judge; margin
		// -10% wrong both ways. Kappa over Beta's (incorrect, incorrect)
		// vs (correct, incorrect): po = 0.5, pe = 1*0.5 = 0.5, kappa 0.
		{"numeric_check", "Alpha", "agree", 4},
		{"numeric_check", "Beta", "numeric_only", 1},
		{"numeric_check", "Beta", "agreement", 50},
		{"numeric_check", "Beta", "kappa", 0},
		{"structure", "companies", "value", 2},
		{"structure", "structure_score_max", "value", 6},
		{"structure", "full_marks_per_report", "value", 7},
		{"structure", "total_grading_items", "value", 10},
		{"structure", "companies_per_market", "value", 1},
	} {
		got := cell(t, res, c.table, c.row, c.col)
		if !got.IsNum || !near(got.Num, c.want) {
			t.Errorf("%s %s %s = %+v, want %g", c.table, c.row, c.col, got, c.want)
		}
	}
	if got := cell(t, res, "markets", "Beta", "CN"); !got.Undef {
		t.Errorf("Beta CN = %+v, want undefined", got)
	}
	if got := strings.Join(res.Ranking, ","); got != "Alpha,Beta" {
		t.Errorf("ranking %s", got)
	}
	if got := cell(t, res, "headline", "overall_accuracy_best", "value"); !near(got.Num, 80) {
		t.Errorf("headline %+v", got)
	}
	// Beta's deductions explain themselves.
	var reasons []string
	for _, r := range res.Table("structure_deductions").Rows {
		if r[0].Text == "Beta" {
			reasons = append(reasons, r[2].Text+" "+r[3].Text+": "+r[8].Text)
		}
	}
	want := []string{`section 2: misnamed: header "Section 2: Money"`, `table 1.1: wrong columns: got ["Item", "Value"], want ["Field", "Value"]`, `table 2.1: missing rows: ["Outlook"]`}
	if strings.Join(reasons, "\n") != strings.Join(want, "\n") {
		t.Errorf("Beta deductions:\n%s\nwant\n%s", strings.Join(reasons, "\n"), strings.Join(want, "\n"))
	}
	// Details: one per company and system, Beta on B missing, generated
	// as they are asked for.
	if res.Details != nil || res.LazyDetails == nil {
		t.Error("details made at once, not as they are asked for")
	}
	res.Details = res.AllDetails()
	if len(res.Details) != 4 || res.Details[3].Task != "B" || res.Details[3].Score != "missing" {
		t.Errorf("details %d, last %+v", len(res.Details), res.Details[len(res.Details)-1])
	}
	for _, d := range res.Details {
		if d.Task == "A" && d.System == "Beta" {
			found := false
			for _, v := range d.Verdicts {
				found = found || strings.HasPrefix(v.Verdict, "outlook") && strings.Contains(v.Verdict, "not found (no row Outlook)")
			}
			if !found {
				t.Errorf("A Beta: outlook not reported as not found: %+v", d.Verdicts)
			}
		}
	}
}

func TestKnobs(t *testing.T) {
	for _, c := range []struct {
		settings analysis.Settings
		table    string
		row, col string
		want     float64
	}{
		// Beta's revenue scored by the numeric comparison: (1+1+0+0.5)/7.
		{analysis.Settings{"numeric_verdict": "numeric"}, "accuracy", "Beta", "accuracy", 100 * 2.5 / 7},
		// ... and with signs ignored its -10% margin counts too.
		{analysis.Settings{"numeric_verdict": "numeric", "sign": "ignore"}, "accuracy", "Beta", "accuracy", 100 * 3.5 / 7},
		// A 25% relative tolerance accepts Alpha's 12% for 10% on B: B = 7/7.
		{analysis.Settings{"numeric_verdict": "numeric", "rel_tol": "0.25"}, "accuracy", "Alpha", "accuracy", (100*5.2/7 + 100) / 2},
		// Equal weights: A|Alpha = (1+1+1+0.5+0.6)/5, B|Alpha = 4/5.
		{analysis.Settings{"weights": "1,1,1,1"}, "accuracy", "Alpha", "accuracy", (100*4.1/5 + 80) / 2},
		{analysis.Settings{"weights": "1,1,1,1"}, "structure", "full_marks_per_report", "value", 5},
		{analysis.Settings{"structure": "fractional"}, "accuracy", "Beta", "structure", (3.75 - 1 + 5.0/6) / 6},
		{analysis.Settings{"overall": "markets"}, "accuracy", "Alpha", "accuracy", 80},
	} {
		t.Run(fmt.Sprint(c.settings), func(t *testing.T) {
			res, _ := runFixture(t, c.settings, false)
			if got := cell(t, res, c.table, c.row, c.col); !got.IsNum || !near(got.Num, c.want) {
				t.Errorf("%s %s %s = %+v, want %g", c.table, c.row, c.col, got, c.want)
			}
		})
	}
	for _, bad := range []analysis.Settings{{"structure": "x"}, {"weights": "1,2"}, {"rel_tol": "-1"}, {"sign": "maybe"}, {"overall": "x"}, {"numeric_verdict": "x"}} {
		b := writeInputs(t, fixtureConfig(), fixtureStructure(), fixtureItems(), fixtureCompanies(), fixtureTruth())
		if _, err := (Benchmark{}).Run(context.Background(), analysis.Input{Bundle: b, Answer: &fixtureAnswerer{}, Settings: bad}); err == nil {
			t.Errorf("settings %v: no error", bad)
		}
	}
}

func TestShuffledInputsSameResult(t *testing.T) {
	hash := func(res *analysis.Result) string {
		res.Details = res.AllDetails() // they are part of the result
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	a, _ := runFixture(t, nil, false)
	b, _ := runFixture(t, nil, true)
	if hash(a) != hash(b) {
		t.Error("shuffled inputs give a different result")
	}
}

// TestScoreConcurrently scores one collection under several settings at
// once: each result is that of a whole run under the same settings, and
// the collection is only read (go test -race checks that).
func TestScoreConcurrently(t *testing.T) {
	settings := []analysis.Settings{nil,
		{"numeric_verdict": "numeric"}, {"numeric_verdict": "numeric", "sign": "ignore", "rel_tol": "0.25"},
		{"structure": "fractional"}, {"weights": "1,1,1,1"}, {"overall": "markets"}, {"abs_tol": "2"},
	}
	hash := func(res *analysis.Result) string {
		res.Details = res.AllDetails() // they are part of the result
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%x", sha256.Sum256(b))
	}
	want := make([]string, len(settings))
	for i, s := range settings {
		res, _ := runFixture(t, s, false)
		want[i] = hash(res)
	}
	b := writeInputs(t, fixtureConfig(), fixtureStructure(), fixtureItems(), fixtureCompanies(), fixtureTruth())
	a := &fixtureAnswerer{}
	c, err := Benchmark{}.Collect(context.Background(), analysis.Input{Bundle: b, Answer: a})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(settings))
	errs := make([]error, len(settings))
	var wg sync.WaitGroup
	for i, s := range settings {
		wg.Go(func() {
			res, err := Benchmark{}.Score(context.Background(), c, s)
			if errs[i] = err; err == nil {
				got[i] = hash(res)
			}
		})
	}
	wg.Wait()
	for i, s := range settings {
		if errs[i] != nil || got[i] != want[i] {
			t.Errorf("settings %v: scored from one collection differs from a run (error %v)", s, errs[i])
		}
	}
	if n := len(a.calls); n != 16 {
		t.Errorf("%d calls to collect, want 16", n)
	}
}

// TestGradedOnce checks that a report is graded once per grading: the
// score, the uncertainty board and the item records of runs under
// settings that grade alike (other weights, say) share one grading of
// each report, a run under another tolerance of the numeric comparison
// grades anew, and the judge's grading, which ignores the tolerance, is
// read from the collected scores, not kept.
func TestGradedOnce(t *testing.T) {
	b := writeInputs(t, fixtureConfig(), fixtureStructure(), fixtureItems(), fixtureCompanies(), fixtureTruth())
	c, err := Benchmark{}.Collect(context.Background(), analysis.Input{Bundle: b, Answer: &fixtureAnswerer{}})
	if err != nil {
		t.Fatal(err)
	}
	col := c.(*collection)
	graded := func(s analysis.Settings) map[*report]*float64 {
		t.Helper()
		if _, err := (Benchmark{}).Score(context.Background(), c, s); err != nil {
			t.Fatal(err)
		}
		items, err := Benchmark{}.Items(c, s)
		if err != nil {
			t.Fatal(err)
		}
		for range items.Rows {
		}
		opt, _ := parseOptions(s)
		out := map[*report]*float64{}
		g := col.grades[grading{numeric: true, tol: opt.tol}]
		if g == nil {
			return out
		}
		ni := len(col.in.Items)
		for _, rep := range col.reports {
			if g.done[rep.n] {
				out[rep] = &g.all[rep.n*ni]
			}
		}
		return out
	}
	numeric := graded(analysis.Settings{"numeric_verdict": "numeric"})
	if len(numeric) == 0 || len(col.grades) != 1 {
		t.Fatalf("%d reports graded, %d gradings", len(numeric), len(col.grades))
	}
	for _, rep := range col.reports {
		if rep.complete && numeric[rep] == nil {
			t.Errorf("complete report %s/%d not graded", rep.company.ID, rep.sys)
		}
	}
	if again := graded(analysis.Settings{"numeric_verdict": "numeric", "weights": "1,1,1,1"}); !maps.Equal(again, numeric) || len(col.grades) != 1 {
		t.Errorf("other weights graded again (%d gradings)", len(col.grades))
	}
	graded(analysis.Settings{"numeric_verdict": "numeric", "rel_tol": "0.25"})
	if len(col.grades) != 2 {
		t.Errorf("%d gradings after a second tolerance, want 2", len(col.grades))
	}
	for _, s := range []analysis.Settings{nil, {"abs_tol": "2"}} {
		if graded(s); len(col.grades) != 2 {
			t.Errorf("the judge's grading (%v) kept: %d gradings", s, len(col.grades))
		}
	}
}
