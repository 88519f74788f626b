package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// fcAnswerer answers every call from the oracle directly, as the sim
// provider would, counting the calls.
type fcAnswerer struct {
	o     replay.Oracle
	calls *int
}

func (a fcAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		text, err := a.o.Respond(c.Prompt)
		out[i] = results.Reply{Text: text, Err: err, Model: c.Prompt.Model, Source: results.SourceSim, RecordedAt: RecordedAt.Format("2006-01-02T15:04:05Z")}
	}
	if a.calls != nil {
		*a.calls += len(calls)
	}
	return out
}

// fcGenerate generates the demo inputs into a fresh bundle folder.
func fcGenerate(t testing.TB, scale Scale) (*results.Bundle, replay.Oracle) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, results.InputsDir, forecast.Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := FinDeepForecast().Generate(in, Options{Scale: scale, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &results.Bundle{Dir: dir}, o
}

func fcRun(t testing.TB, scale Scale, settings analysis.Settings, calls *int) *analysis.Result {
	t.Helper()
	b, o := fcGenerate(t, scale)
	res, err := analysis.Run(context.Background(), FinDeepForecast().Benchmark(), analysis.Input{Bundle: b, Answer: fcAnswerer{o, calls}, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func fcHashResult(t testing.TB, res *analysis.Result) string {
	t.Helper()
	all := *res
	all.Details, all.LazyDetails = res.AllDetails(), nil // which the encoding leaves out
	b, err := json.Marshal(&all)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestFinDeepForecastSmall runs the benchmark over the small demo and
// checks that every table is complete and shaped like the published ones,
// and that the audit, the lifecycle and the output defences have work.
func TestFinDeepForecastSmall(t *testing.T) {
	calls := 0
	res := fcRun(t, Small, nil, &calls)
	if calls < 100 || calls > 400 {
		t.Errorf("%d exchanges, want 100-400 at small scale", calls)
	}
	if !res.Synthetic || res.Missing != 0 {
		t.Errorf("synthetic %v missing %d", res.Synthetic, res.Missing)
	}
	if len(res.Ranking) != 14 || len(res.Scores) != 14 {
		t.Errorf("ranking of %d systems, want 14 (13 methods + hostile)", len(res.Ranking))
	}
	for _, name := range []string{"overall", "headline", "task_types", "markets", "weekly", "lifecycle", "isolation_audit",
		"isolation_flags", "invalid_predictions", "tolerance_sensitivity", "tolerances"} {
		tb := res.Table(name)
		if tb == nil || len(tb.Rows) == 0 {
			t.Errorf("table %s missing or empty", name)
		}
	}
	// Every published table has a computed twin with its columns and keys.
	ents, err := fs.ReadDir(assets, "assets/published/findeepforecast")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, _ := fs.ReadFile(assets, "assets/published/findeepforecast/"+e.Name())
		pub, err := results.ReadCSV(bytes.NewReader(b), e.Name())
		if err != nil {
			t.Fatal(err)
		}
		tb := res.Table(strings.TrimSuffix(e.Name(), ".csv"))
		if tb == nil {
			t.Errorf("no computed table for published %s", e.Name())
			continue
		}
		for _, h := range pub.Header {
			if tb.Col(h) < 0 {
				t.Errorf("%s: computed table lacks column %s", e.Name(), h)
			}
		}
		keys := map[string]bool{}
		for _, r := range tb.Rows {
			keys[r[0].Format(0)] = true
		}
		for _, r := range pub.Rows {
			if !keys[r[0]] {
				t.Errorf("%s: computed table lacks row %s", e.Name(), r[0])
			}
		}
	}
	// Weeks 1-10 all present; some pending and void tasks.
	if n := len(res.Table("weekly").Rows); n != 10 {
		t.Errorf("%d weeks, want 10", n)
	}
	var pending, void float64
	for _, r := range res.Table("lifecycle").Rows {
		pending += r[4].Num
		void += r[5].Num
	}
	if pending == 0 || void == 0 {
		t.Errorf("pending %v void %v: want both", pending, void)
	}
	var late, leak float64
	for _, r := range res.Table("isolation_audit").Rows {
		late += r[2].Num
		leak += r[3].Num
	}
	if late == 0 || leak == 0 {
		t.Errorf("audit found %v late predictions and %v post-deadline evidence: want both", late, leak)
	}
	// The hostile system's invalid answers are listed; its huge output is
	// truncated in the details.
	zero := false
	for _, d := range res.AllDetails() {
		zero = zero || strings.Contains(d.Verdicts[0].Reasoning, "outcome 0 (absolute zero rule")
	}
	if !zero {
		t.Error("no task resolving to 0 was scored under the zero rule")
	}
	var invalid, huge bool
	for _, p := range res.Problems {
		invalid = invalid || strings.Contains(p, HostileForecastSystem)
	}
	for _, d := range res.AllDetails() {
		if d.System == HostileForecastSystem && strings.Contains(d.Output, "output truncated") {
			huge = true
		}
		if !strings.Contains(d.Question, "synthetic") {
			t.Fatalf("task %s question does not say synthetic", d.Task)
		}
	}
	if !invalid || !huge {
		t.Errorf("hostile system: invalid answers listed %v, huge output truncated %v", invalid, huge)
	}
	for _, tb := range res.Tables {
		for _, r := range tb.Rows {
			for _, c := range r {
				if c.IsNum && (math.IsNaN(c.Num) || math.IsInf(c.Num, 0)) {
					t.Fatalf("table %s: non-finite cell", tb.Name)
				}
			}
		}
	}
}

// TestFinDeepForecastDeterministic: two generations give byte-identical
// inputs and identical results.
func TestFinDeepForecastDeterministic(t *testing.T) {
	b1, _ := fcGenerate(t, Small)
	b2, _ := fcGenerate(t, Small)
	for _, f := range []string{forecast.ConfigFile, forecast.TasksJSONLFile, forecast.LogFile, forecast.ToleranceFile} {
		x, err1 := os.ReadFile(filepath.Join(b1.Dir, results.InputsDir, forecast.Name, f))
		y, err2 := os.ReadFile(filepath.Join(b2.Dir, results.InputsDir, forecast.Name, f))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two generations (%v, %v)", f, err1, err2)
		}
	}
	if fcHashResult(t, fcRun(t, Small, nil, nil)) != fcHashResult(t, fcRun(t, Small, nil, nil)) {
		t.Fatal("two runs give different results")
	}
}

// TestFinDeepForecastFull checks the full-scale calibration: the
// task-type and market accuracies land near the published tables.
func TestFinDeepForecastFull(t *testing.T) {
	if testing.Short() {
		t.Skip("full scale")
	}
	res := fcRun(t, Full, nil, nil)
	for _, tc := range []struct {
		table   string
		maxMean float64
	}{{"task_types", 3}, {"markets", 5}} {
		b, _ := fs.ReadFile(assets, "assets/published/findeepforecast/"+tc.table+".csv")
		pub, err := results.ReadCSV(bytes.NewReader(b), tc.table+".csv")
		if err != nil {
			t.Fatal(err)
		}
		tb := res.Table(tc.table)
		var sum float64
		var n int
		for _, pr := range pub.Rows {
			for _, r := range tb.Rows {
				if r[0].Text != pr[0] {
					continue
				}
				for ci, h := range pub.Header[2:] {
					var want float64
					fmt.Sscan(pr[ci+2], &want)
					got := r[tb.Col(h)].Num
					sum += math.Abs(got - want)
					n++
					if math.Abs(got-want) > 15 {
						t.Errorf("%s %s %s: %.1f, published %.1f", tc.table, pr[0], h, got, want)
					}
				}
			}
		}
		if want := 13 * (len(pub.Header) - 2); n != want || sum/float64(n) > tc.maxMean {
			t.Errorf("%s: mean |computed - published| %.2f over %d cells, want <= %.0f over %d", tc.table, sum/float64(n), n, tc.maxMean, want)
		}
		t.Logf("full scale: mean |computed - published| over the %s table = %.2f points", tc.table, sum/float64(n))
	}
}

// fcMemory generates the full-scale inputs into memory with every reply.
func fcMemory(b *testing.B) (fstest.MapFS, []results.Reply) {
	bundle, o := fcGenerate(b, Full)
	dir := filepath.Join(bundle.Dir, results.InputsDir, forecast.Name)
	mem := fstest.MapFS{}
	for _, f := range []string{forecast.ConfigFile, forecast.TasksJSONLFile, forecast.LogFile, forecast.ToleranceFile} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		mem[f] = &fstest.MapFile{Data: data}
	}
	in, err := forecast.LoadInputs(mem)
	if err != nil {
		b.Fatal(err)
	}
	return mem, fcAnswerer{o: o}.Answer(context.Background(), in.Calls())
}

// BenchmarkFinDeepForecastLoad is the baseline: loading the full-scale
// inputs and building the calls.
func BenchmarkFinDeepForecastLoad(b *testing.B) {
	mem, _ := fcMemory(b)
	for b.Loop() {
		in, err := forecast.LoadInputs(mem)
		if err != nil {
			b.Fatal(err)
		}
		in.Calls()
	}
}

// BenchmarkFinDeepForecastAnalysis is the whole analysis of the full
// scale demo (1,442 tasks x 14 systems) from inputs in memory.
func BenchmarkFinDeepForecastAnalysis(b *testing.B) {
	mem, replies := fcMemory(b)
	for b.Loop() {
		in, err := forecast.LoadInputs(mem)
		if err != nil {
			b.Fatal(err)
		}
		in.Calls()
		forecast.Analyze(in, replies, forecast.DefaultOptions())
	}
}

// TestFinDeepForecastRecordReplay builds the small demo bundle through
// the recorder and the sim provider, then replays it offline: every
// request must hit the cache (requests are byte-identical between runs)
// and the result must equal the direct run's.
func TestFinDeepForecastRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("records a bundle")
	}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Build(ctx, dir, Options{Scale: Small, Seed: 1}, []Generator{FinDeepForecast()}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range b.Manifest.Files {
		size += f.Size
	}
	if size > 1_500_000 {
		t.Errorf("small bundle part is %d bytes, want well under 1.5 MB", size)
	}
	t.Logf("small demo bundle part: %d files, %d bytes", len(b.Manifest.Files), size)
	store, err := cache.Open(b.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client := replay.New(store, replay.Config{Mode: replay.Offline})
	res, err := analysis.Run(ctx, FinDeepForecast().Benchmark(), analysis.Input{Bundle: b, Answer: client})
	if err != nil {
		t.Fatal(err)
	}
	if res.Missing != 0 || !res.Synthetic {
		t.Fatalf("offline replay: %d missing, synthetic %v", res.Missing, res.Synthetic)
	}
	direct := fcRun(t, Small, nil, nil)
	if fcHashResult(t, res) != fcHashResult(t, direct) {
		got, want := res.AllDetails(), direct.AllDetails()
		for i := range min(len(got), len(want)) {
			if a, b := got[i], want[i]; a.Output != b.Output || a.Score != b.Score {
				t.Errorf("detail %s %s: replayed %q (%s), direct %q (%s)", a.Task, a.System, clipTest(a.Output), a.Score, clipTest(b.Output), b.Score)
			}
		}
		for i, tb := range res.Tables {
			if fmt.Sprint(tb.Rows) != fmt.Sprint(direct.Tables[i].Rows) {
				t.Errorf("table %s differs", tb.Name)
			}
		}
		t.Fatal("replayed result differs from the direct run")
	}
}

func clipTest(s string) string {
	if len(s) > 200 {
		return s[:200]
	}
	return s
}
