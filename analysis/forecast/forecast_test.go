package forecast

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
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

// fixtureAnswerer answers from a table of replies keyed by system and
// task; a pair it lacks gets an error reply (missing). Every reply carries
// RecordedAt, which the prediction log overrides.
type fixtureAnswerer map[[2]string]string

func (f fixtureAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		text, ok := f[[2]string{c.Label.Name, c.Label.Task}]
		if !ok {
			out[i] = results.Reply{Err: errors.New("cache miss")}
			continue
		}
		out[i] = results.Reply{Text: text, Model: c.Prompt.Model, Source: results.SourceImport, RecordedAt: "2025-11-01T00:00:00Z"}
	}
	return out
}

func fa(answer string, evidence ...string) string {
	s := "Reasoning.\nFinal answer: " + answer + "\nEvidence:\n"
	for _, e := range evidence {
		s += "- " + e + "\n"
	}
	return s
}

// fixtureReplies are the replies the fixture's numbers are derived from
// (see TestFixture). Deadlines: week 1 2025-11-02T15:59Z, week 2
// 2025-11-09T15:59Z.
var fixtureReplies = fixtureAnswerer{
	// A: every scored answer right. t1 comes with a late RecordedAt
	// (2026), but the prediction log says 2025-10-31: not late.
	{"A", "t1"}: fa("Yes", "https://example.com/a1 (published 2025-10-20T00:00:00Z)"),
	{"A", "t2"}: fa("否"),
	{"A", "t3"}: fa("104 million"),   // |104-100|/100 = 0.04 < 0.05
	{"A", "t4"}: fa("2.0012%"),       // 0.0012/2 = 0.0006 < 0.001
	{"A", "t5"}: fa("0.004"),         // y = 0: |0.004| < 0.01
	{"A", "t6"}: fa("5"),             // pending: not scored
	{"A", "t7"}: fa("Yes"),           // void with two weeks: not scored
	{"B", "t1"}: fa("**Yes**"),       // right
	{"B", "t2"}: fa("No"),            // right, but logged 2025-11-03: late, counted wrong
	{"B", "t3"}: fa("(0.1) billion"), // -100: relative error 2
	{"B", "t4"}: fa("2.0036"),        // 0.0018: wrong below 2x (eps 0.002)
	{"B", "t5"}: fa("0.5"),           // y = 0: 0.5 >= 0.01
	{"B", "t6"}: fa("7"),
	{"B", "t7"}: fa("No"),
	{"C", "t1"}: fa(`=HYPERLINK("https://evil.example","Yes")`), // invalid: wrong
	{"C", "t2"}: fa("No", "https://example.com/c2 (published 2025-11-05T00:00:00Z)", "https://example.com/undated"),
	// C t3 has no reply: missing.
	{"C", "t4"}: fa("two percent"), // invalid: wrong
	{"C", "t5"}: fa("0"),
	{"C", "t6"}: "no answer at all\nreally",
	{"C", "t7"}: fa("是"),
}

func runFixture(t *testing.T, settings analysis.Settings) *analysis.Result {
	t.Helper()
	in := analysis.Input{Bundle: &results.Bundle{Dir: "testdata/fixture"}, Answer: fixtureReplies, Settings: settings}
	res, err := Benchmark{}.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// cell returns the formatted cell of table name at the row whose first
// column is key.
func cell(t *testing.T, res *analysis.Result, name, key, col string) string {
	t.Helper()
	tb := res.Table(name)
	if tb == nil {
		t.Fatalf("no table %s", name)
	}
	c := tb.Col(col)
	if c < 0 {
		t.Fatalf("table %s: no column %s", name, col)
	}
	for _, r := range tb.Rows {
		if r[0].Format(tb.Columns[0].Decimals) == key {
			return r[c].Format(tb.Columns[c].Decimals)
		}
	}
	t.Fatalf("table %s: no row %s", name, key)
	return ""
}

type want struct{ table, key, col, val string }

func check(t *testing.T, res *analysis.Result, wants []want) {
	t.Helper()
	for _, w := range wants {
		if got := cell(t, res, w.table, w.key, w.col); got != w.val {
			t.Errorf("%s[%s][%s] = %s, want %s", w.table, w.key, w.col, got, w.val)
		}
	}
}

// TestFixture checks every table against numbers derived by hand:
//
//	A: t1 t2 t3 t4 t5 right               -> 5/5 = 100.0
//	B: t1 right; t3 t4 t5 wrong; t2 late  -> 1/5 = 20.0 (flagged 1)
//	C: t1 t4 invalid; t5 right; t2 leaks; t3 missing -> 1/4 = 25.0
//
// Flagged (late or leaking) predictions count as not correct: accuracy =
// correct / resolved tasks the system answered (late_policy=wrong, the
// default; TestKnobs checks late_policy=exclude). A call without a reply
// (C t3) is a gap in the recording, counted in missing, not scored.
//
// t6 is pending (t_e 2025-11-28 + 2 weeks > 2025-12-01), t7 void
// (resolved 2025-11-26, after t_e 2025-11-09 + 2 weeks).
func TestFixture(t *testing.T) {
	res := runFixture(t, nil)
	check(t, res, []want{
		{"overall", "A", "overall_accuracy", "100.0"},
		{"overall", "B", "overall_accuracy", "20.0"},
		{"overall", "C", "overall_accuracy", "25.0"},
		{"overall", "B", "scored", "5"},
		{"overall", "B", "flagged", "1"},
		{"overall", "C", "scored", "4"},
		{"overall", "C", "invalid", "2"},
		{"overall", "C", "flagged", "1"},
		{"overall", "C", "missing", "1"},
		{"headline", "C", "overall_accuracy", "25.0"},
		// Task types: B's only non-recurrent macro task (t2) is late: wrong.
		{"task_types", "B", "nonrec_corporate", "100.0"},
		{"task_types", "B", "nonrec_macro", "0.0"},
		{"task_types", "B", "nonrec_overall", "50.0"},
		{"task_types", "B", "rec_overall", "0.0"},
		{"task_types", "C", "nonrec_overall", "0.0"},
		{"task_types", "C", "rec_corporate", "n/a"}, // t3 missing
		{"task_types", "C", "rec_macro", "50.0"},    // t4 wrong, t5 right
		// Markets: US = t1, t3; CN = t2, t4; JP = t5.
		{"markets", "B", "US", "50.0"},
		{"markets", "B", "CN", "0.0"},
		{"markets", "C", "JP", "100.0"},
		{"markets", "A", "SG", "n/a"},
		// Weekly: week 1 = t1, t2; week 2 = t3, t4, t5; week 3 pending.
		{"weekly", "1", "B", "50.0"}, // t1 right, t2 late
		{"weekly", "1", "C", "0.0"},
		{"weekly", "2", "C", "50.0"},
		{"weekly", "3", "A", "n/a"},
		// Lifecycle: t1 resolved 8 days after t_e (re-checked).
		{"lifecycle", "1", "tasks", "3"},
		{"lifecycle", "1", "resolved", "2"},
		{"lifecycle", "1", "rechecked", "1"},
		{"lifecycle", "1", "void", "1"},
		{"lifecycle", "3", "pending", "1"},
		{"isolation_audit", "A", "late", "0"},
		{"isolation_audit", "B", "late", "1"},
		{"isolation_audit", "C", "post_deadline_evidence", "1"},
		{"isolation_audit", "C", "undated_evidence", "1"},
		{"isolation_audit", "C", "predictions", "6"},
		{"tolerances", "unit", "applies_to", "million-scale financial metrics"},
	})
	if got := strings.Join(res.Ranking, ","); got != "A,C,B" {
		t.Errorf("ranking %s, want A,C,B", got)
	}
	if res.Missing != 1 || res.Synthetic {
		t.Errorf("missing %d synthetic %v, want 1 false", res.Missing, res.Synthetic)
	}
	flags := res.Table("isolation_flags")
	if len(flags.Rows) != 2 || flags.Rows[0][3].Text != "late" || flags.Rows[1][6].Text != "https://example.com/c2" {
		t.Errorf("isolation_flags rows %v", flags.Rows)
	}
	inv := res.Table("invalid_predictions")
	if len(inv.Rows) != 3 || inv.Rows[0][4].Text != `=HYPERLINK("https://evil.example","Yes")` || inv.Rows[0][5].Text != "not yes or no" ||
		inv.Rows[2][3].Text != "pending" || inv.Rows[2][5].Text != "no final answer" {
		t.Errorf("invalid_predictions rows %v", inv.Rows)
	}
	var invalid int
	for _, p := range res.Problems {
		if strings.HasPrefix(p, "invalid prediction:") {
			invalid++
		}
	}
	if invalid != 3 { // C t1, t4, t6
		t.Errorf("%d invalid problems, want 3: %q", invalid, res.Problems)
	}
	tol := res.Table("tolerances")
	if tol.Rows[2][2].Num != 0.001 || tol.Rows[2][4].Num != 1 { // t4's category beats its unit type
		t.Errorf("interest-rate tolerance row %v", tol.Rows[2])
	}
	for _, tb := range res.Tables {
		for _, r := range tb.Rows {
			for _, c := range r {
				if c.IsNum && (math.IsNaN(c.Num) || math.IsInf(c.Num, 0)) {
					t.Errorf("table %s: non-finite cell", tb.Name)
				}
			}
		}
	}
}

// TestSensitivity: at 0.5x A loses t3 (0.04 >= 0.025) and t4 (0.0006 >=
// 0.0005) -> 3/5 = 60; at 0.75x only t3 -> 80; B gains t4 only at 2x ->
// 2/5 = 40, which puts B above C (25): accuracies (100, 20, 25) vs
// (100, 40, 25) give tau-b (2 - 1)/3 and rho 1 - 6*2/(3*8) = 0.5.
func TestSensitivity(t *testing.T) {
	res := runFixture(t, nil)
	check(t, res, []want{
		{"tolerance_sensitivity", "0.50", "A", "60.0"},
		{"tolerance_sensitivity", "0.75", "A", "80.0"},
		{"tolerance_sensitivity", "1.00", "kendall_tau_b", "1.000"},
		{"tolerance_sensitivity", "0.50", "kendall_tau_b", "1.000"},
		{"tolerance_sensitivity", "2.00", "B", "40.0"},
		{"tolerance_sensitivity", "2.00", "kendall_tau_b", "0.333"},
		{"tolerance_sensitivity", "2.00", "spearman_rho", "0.500"},
		{"tolerance_sensitivity", "2.00", "moved", "2"},
		{"tolerance_sensitivity", "2.00", "ranking", "A > B > C"},
	})
}

// TestKnobs checks that each knob changes what it should.
func TestKnobs(t *testing.T) {
	tests := []struct {
		name     string
		settings analysis.Settings
		wants    []want
	}{
		// Flagged predictions left out (the old default): B 1/4 (t2 out), C
		// 1/3 (t2 out), B's non-recurrent macro task gone.
		{"late exclude", analysis.Settings{KnobLatePolicy: LateExclude}, []want{
			{"overall", "B", "overall_accuracy", "25.0"}, {"overall", "C", "overall_accuracy", "33.3"},
			{"overall", "A", "overall_accuracy", "100.0"}, {"overall", "B", "scored", "4"},
			{"task_types", "B", "nonrec_macro", "n/a"}}},
		// y = 0 must be hit exactly: A's 0.004 is wrong (4/5); C's 0 right
		// (t5 of t1 t2 t4 t5: 1/4).
		{"zero exact", analysis.Settings{KnobZeroRule: ZeroExact}, []want{
			{"overall", "A", "overall_accuracy", "80.0"}, {"overall", "C", "overall_accuracy", "25.0"}}},
		// t5 left out: A 4/4, B 1/4 (t1 of t1-t4), C 0/3 (t1 t2 t4).
		{"zero exclude", analysis.Settings{KnobZeroRule: ZeroExclude}, []want{
			{"overall", "A", "overall_accuracy", "100.0"}, {"overall", "B", "overall_accuracy", "25.0"},
			{"overall", "C", "overall_accuracy", "0.0"}}},
		// A three-week window resolves t7 (Yes): A 6/6, B 1/6 (No is wrong),
		// C 2/5 (t5 and t7 right).
		{"validity 3", analysis.Settings{KnobValidityWeeks: "3"}, []want{
			{"overall", "A", "overall_accuracy", "100.0"}, {"overall", "B", "overall_accuracy", "16.7"},
			{"overall", "C", "overall_accuracy", "40.0"}, {"lifecycle", "1", "void", "0"}}},
		// Tolerances doubled: as the 2x sensitivity row (B 2/5); the
		// sweep's 0.5x row is then the paper's tolerances (B 1/5).
		{"scale 2", analysis.Settings{KnobToleranceScale: "2"}, []want{
			{"overall", "B", "overall_accuracy", "40.0"}, {"tolerances", "unit", "epsilon", "0.100"},
			{"tolerance_sensitivity", "0.50", "B", "20.0"}, {"tolerance_sensitivity", "0.50", "A", "100.0"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, runFixture(t, tc.settings), tc.wants) })
	}
}

func TestBadKnobs(t *testing.T) {
	for _, s := range []analysis.Settings{
		{KnobToleranceScale: "0"}, {KnobToleranceScale: "x"}, {KnobToleranceScale: "+Inf"},
		{KnobLatePolicy: "ignore"}, {KnobZeroRule: "relative"}, {KnobValidityWeeks: "-1"}, {KnobValidityWeeks: "1.5"},
	} {
		if _, err := ParseOptions(s); err == nil {
			t.Errorf("ParseOptions(%v): no error", s)
		}
	}
}

// hashResult hashes everything a result shows.
func hashResult(t *testing.T, res *analysis.Result) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestDeterminism: shuffled task and log lines give identical results,
// as do two runs.
func TestDeterminism(t *testing.T) {
	base := hashResult(t, runFixture(t, nil))
	if again := hashResult(t, runFixture(t, nil)); again != base {
		t.Fatal("two runs differ")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "inputs", Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "fixture", "inputs", Name)
	for _, f := range []string{ConfigFile, TasksJSONLFile, LogFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f != ConfigFile {
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			for i, j := 0, len(lines)-1; i < j; i, j = i+1, j-1 {
				lines[i], lines[j] = lines[j], lines[i]
			}
			b = []byte(strings.Join(lines, "\n") + "\n")
		}
		if err := os.WriteFile(filepath.Join(in, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Benchmark{}.Run(context.Background(), analysis.Input{Bundle: &results.Bundle{Dir: dir}, Answer: fixtureReplies})
	if err != nil {
		t.Fatal(err)
	}
	if got := hashResult(t, res); got != base {
		t.Fatal("shuffled inputs give a different result")
	}
}

// TestCallsBatched: the fixture's 21 calls fit in one window, so they are
// answered in one Answer call (TestCollectWindows splits them).
func TestCallsBatched(t *testing.T) {
	n := 0
	counter := answererFunc(func(ctx context.Context, calls []results.Call) []results.Reply {
		n++
		return fixtureReplies.Answer(ctx, calls)
	})
	if _, err := (Benchmark{}).Run(context.Background(), analysis.Input{Bundle: &results.Bundle{Dir: "testdata/fixture"}, Answer: counter}); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d Answer calls, want 1", n)
	}
}

type answererFunc func(context.Context, []results.Call) []results.Reply

func (f answererFunc) Answer(ctx context.Context, c []results.Call) []results.Reply { return f(ctx, c) }

// TestPairedBootstrap: the shared-resample intervals equal those of
// stats.Bootstrap run system by system with the same seed.
func TestPairedBootstrap(t *testing.T) {
	res := runFixture(t, nil)
	in, err := LoadInputs(os.DirFS(filepath.Join("testdata", "fixture", "inputs", Name)))
	if err != nil {
		t.Fatal(err)
	}
	b := &board{in: in, opt: DefaultOptions()}
	b.preds = make([]Prediction, len(in.Tasks)*len(in.Config.Systems))
	b.status = make([]Status, len(in.Tasks))
	replies := fixtureReplies.Answer(context.Background(), in.Calls())
	for ti, task := range in.Tasks {
		b.status[ti] = task.StatusAt(in.Config.asOf, 2)
		for s := range in.Config.Systems {
			logged, has := in.log.at(ti*3 + s)
			b.pred(ti, s).parse(task, replies[ti*3+s], logged, has)
		}
	}
	b.out = b.outcomes(1)
	overall := res.Table("overall")
	for s := range in.Config.Systems {
		o := b.out[s]
		lo, hi, err := stats.Bootstrap(len(o), bootReps, bootSeed, bootLevel, func(idx []int) float64 {
			var c, n float64
			for _, i := range idx {
				if o[i] != notScored {
					n++
					if o[i] == correct {
						c++
					}
				}
			}
			if n == 0 {
				return math.NaN()
			}
			return 100 * c / n
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := overall.Rows[s][3].Num; got != lo {
			t.Errorf("system %d: ci_low %v, stats.Bootstrap %v", s, got, lo)
		}
		if got := overall.Rows[s][4].Num; got != hi {
			t.Errorf("system %d: ci_high %v, stats.Bootstrap %v", s, got, hi)
		}
	}
}

// TestScoreConcurrently scores one collection under several settings at
// once, as a sweep does: each result equals a whole run's under the same
// settings (go test -race checks the collection is only read).
func TestScoreConcurrently(t *testing.T) {
	in := analysis.Input{Bundle: &results.Bundle{Dir: "testdata/fixture"}, Answer: fixtureReplies}
	c, err := Benchmark{}.Collect(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	variants := []analysis.Settings{
		{},
		{KnobToleranceScale: "2"},
		{KnobLatePolicy: LateExclude},
		{KnobZeroRule: ZeroExclude, KnobValidityWeeks: "0"},
	}
	got := make([]string, len(variants))
	var wg sync.WaitGroup
	for i, s := range variants {
		wg.Go(func() {
			res, err := Benchmark{}.Score(context.Background(), c, s)
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := json.Marshal(res) // a Result always encodes
			got[i] = fmt.Sprintf("%x", sha256.Sum256(b))
		})
	}
	wg.Wait()
	for i, s := range variants {
		if want := hashResult(t, runFixture(t, s)); got[i] != want {
			t.Errorf("settings %v: scoring the shared collection differs from a whole run", s)
		}
	}
}
