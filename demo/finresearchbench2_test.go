package demo

import (
	"bytes"
	"context"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/results"
)

// frb2FS generates the FinResearchBench II inputs in memory.
func frb2FS(opt Options, hostile bool) (fstest.MapFS, *frb2World) {
	w := newFRB2World(opt, hostile)
	fsys := fstest.MapFS{}
	for name, b := range w.files() {
		fsys[name] = &fstest.MapFile{Data: b}
	}
	return fsys, w
}

// oracleAnswerer answers every call with the oracle directly, as the sim
// provider would.
type oracleAnswerer struct{ w *frb2World }

func (o oracleAnswerer) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		text, err := o.w.Respond(c.Prompt)
		out[i] = results.Reply{Text: text, Err: err, Source: results.SourceSim, Model: c.Prompt.Model}
	}
	return out
}

// recorded answers from replies computed once, so that a benchmark times
// the analysis alone.
type recorded struct{ replies []results.Reply }

func (r recorded) Answer(ctx context.Context, calls []results.Call) []results.Reply { return r.replies }

func TestFRB2Small(t *testing.T) {
	opt := Options{Scale: Small, Seed: 1}
	fsys, w := frb2FS(opt, true)
	again, _ := frb2FS(opt, true)
	size := 0
	for name, f := range fsys {
		size += len(f.Data)
		if !bytes.Equal(f.Data, again[name].Data) {
			t.Errorf("%s differs between two generations", name)
		}
	}
	if size > 1<<20 {
		t.Errorf("small inputs are %d bytes, want under 1 MB", size)
	}
	res, err := consensus.RunFS(context.Background(), fsys, oracleAnswerer{w}, analysis.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Synthetic || res.Missing != 0 || len(res.Ranking) != 11 {
		t.Fatalf("Synthetic %v, Missing %d, ranking %v", res.Synthetic, res.Missing, res.Ranking)
	}
	if len(res.Problems) == 0 {
		t.Error("no problems: the small demo should exercise malformed judge output")
	}
	hostile := false
	for _, d := range res.Details {
		if d.System == hostileProduct.name {
			hostile = strings.Contains(d.Output, "<script>alert(1)</script>") && strings.Contains(d.Output, "=HYPERLINK(")
			break
		}
	}
	if !hostile {
		t.Error("the hostile product's report does not reach the details")
	}
	for _, name := range []string{"filtering", "pass_rates", "stability", "validation", "leave_one_judge_out", "splits", "ablation", "self_preference", "figures"} {
		if tb := res.Table(name); tb == nil || len(tb.Rows) == 0 {
			t.Errorf("table %s missing or empty", name)
		}
	}
}

func TestFRB2GenerateWritesFiles(t *testing.T) {
	dir := t.TempDir()
	oracle, err := FinResearchBench2().Generate(dir, Options{Scale: Small, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	in, err := consensus.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Queries) != 8 || len(in.Panel.Products) != 11 || len(in.Panel.Judges) != 3 {
		t.Errorf("%d queries, %d products, %d judges", len(in.Queries), len(in.Panel.Products), len(in.Panel.Judges))
	}
	cats := map[string]bool{}
	for _, q := range in.Queries {
		cats[q.Category] = true
	}
	if len(cats) != 7 {
		t.Errorf("%d categories, want 7", len(cats))
	}
	if _, err := oracle.Respond(results.Prompt{Model: "nobody", User: "x"}); err == nil {
		t.Error("oracle answered an unknown model")
	}
}

// TestFRB2FullCalibration checks that the full-scale simulation lands
// near the published figures (go test -v shows them side by side).
func TestFRB2FullCalibration(t *testing.T) {
	if testing.Short() {
		t.Skip("full scale")
	}
	fsys, w := frb2FS(Options{Scale: Full, Seed: 1}, false)
	res, err := consensus.RunFS(context.Background(), fsys, oracleAnswerer{w}, analysis.Settings{consensus.KnobBootstrap: "200"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range res.Table("figures").Rows {
		got[r[0].Text] = r[1].Num
	}
	read := func(table string) *results.CSVTable {
		b, err := assets.ReadFile("assets/published/finresearchbench2/" + table + ".csv")
		if err != nil {
			t.Fatal(err)
		}
		tb, err := results.ReadCSV(bytes.NewReader(b), table+".csv")
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	pub := map[string]float64{}
	for _, r := range read("figures").Rows {
		pub[r[0]], _ = strconv.ParseFloat(r[1], 64)
		t.Logf("%-50s published %10.4f simulated %10.4f", r[0], pub[r[0]], got[r[0]])
	}
	// Relative tolerances: the simulation is tuned, not fitted.
	for name, tol := range map[string]float64{
		"rubrics_per_query_candidate_mean":     0.02,
		"rubrics_per_query_consistency_mean":   0.08,
		"rubrics_per_query_gold_mean":          0.10,
		"failed_distinguishability_always_yes": 0.15,
		"gold_item_spread_pp":                  0.10,
		"consistency_item_spread_pp":           0.10,
		"validation_llm_unanimous":             0.05,
		"validation_both_unanimous":            0.05,
		"validation_majority_label_agreement":  0.03,
		"llm_human_pairwise_agreement_mean":    0.05,
		"human_human_pairwise_agreement_mean":  0.05,
		"leave_one_judge_out_spearman":         0.03,
		"split_test_mean_spearman":             0.03,
	} {
		if math.Abs(got[name]-pub[name]) > tol*math.Abs(pub[name]) {
			t.Errorf("%s = %.4f, published %.4f (tolerance %.0f%%)", name, got[name], pub[name], 100*tol)
		}
	}
	rates := res.Table("pass_rates")
	for _, r := range read("pass_rates").Rows {
		for _, col := range []string{"gold_item", "consistency_item"} {
			want, _ := strconv.ParseFloat(r[slices.Index(read("pass_rates").Header, col)], 64)
			for _, row := range rates.Rows {
				if row[0].Text == r[0] {
					if g := row[rates.Col(col)].Num; math.Abs(g-want) > 3 {
						t.Errorf("%s %s = %.2f, published %.2f", r[0], col, g, want)
					}
				}
			}
		}
	}
	st := res.Table("stability")
	if g := st.Rows[0][st.Col("full_consistency")].Num; math.Abs(g-90.99) > 2 {
		t.Errorf("full consistency %.2f, published 90.99", g)
	}
	for _, tbn := range []string{"filtering", "pass_rates", "stability"} {
		tb := res.Table(tbn)
		for _, row := range tb.Rows {
			var s []string
			for i, c := range row {
				s = append(s, c.Format(tb.Columns[i].Decimals))
			}
			t.Logf("%s: %s", tbn, strings.Join(s, " "))
		}
	}
}

// fullRun prepares a full-scale run: inputs in memory and every reply
// computed once.
func fullRun(b *testing.B) (fstest.MapFS, recorded) {
	fsys, w := frb2FS(Options{Scale: Full, Seed: 1}, false)
	var calls []results.Call
	_, err := consensus.RunFS(context.Background(), fsys, answererFunc(func(ctx context.Context, cs []results.Call) []results.Reply {
		calls = cs
		return oracleAnswerer{w}.Answer(ctx, cs)
	}), analysis.Settings{consensus.KnobBootstrap: "1"})
	if err != nil {
		b.Fatal(err)
	}
	return fsys, recorded{oracleAnswerer{w}.Answer(context.Background(), calls)}
}

type answererFunc func(ctx context.Context, calls []results.Call) []results.Reply

func (f answererFunc) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	return f(ctx, calls)
}

// BenchmarkFRB2FullLoad is the baseline: reading and checking the
// full-scale inputs.
func BenchmarkFRB2FullLoad(b *testing.B) {
	fsys, _ := fullRun(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := consensus.Load(fsys); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFRB2FullAnalysis is the whole analysis at full scale (104
// queries x 10 products x 3 judges, ~139 candidates per query, stability
// reruns) with 10,000 bootstrap resamples and all 120 splits; replies
// come from memory. The target is under 5 s on 2 cores.
func BenchmarkFRB2FullAnalysis(b *testing.B) {
	fsys, rec := fullRun(b)
	b.ResetTimer()
	for b.Loop() {
		res, err := consensus.RunFS(context.Background(), fsys, rec, analysis.Settings{consensus.KnobBootstrap: "10000"})
		if err != nil {
			b.Fatal(err)
		}
		if n := len(res.Table("split_detail").Rows); n != 120 {
			b.Fatalf("%d splits", n)
		}
	}
}
