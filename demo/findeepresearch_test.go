package demo

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
	"github.com/klauspost/compress/zstd"
)

// fdrOracleAnswerer answers calls straight from an oracle, as the sim
// provider would, marking replies synthetic.
type fdrOracleAnswerer struct {
	o     replay.Oracle
	calls int
	bytes int
	// packed sums the exchanges compressed one by one, as the cache
	// stores them, when enc is set.
	enc    *zstd.Encoder
	packed int
}

func (a *fdrOracleAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		// Params pass through JSON in the real provider.
		b, _ := json.Marshal(c.Prompt.Params)
		var params map[string]any
		_ = json.Unmarshal(b, &params)
		p := c.Prompt
		p.Params = params
		text, err := a.o.Respond(p)
		out[i] = results.Reply{Text: text, Model: p.Model, Source: results.SourceSim, Err: err}
		a.calls++
		a.bytes += len(text) + len(p.User)
		if a.enc != nil {
			a.packed += len(a.enc.EncodeAll([]byte(p.User+text), nil))
		}
	}
	return out
}

func fdrBuild(t testing.TB, scale Scale) (*results.Bundle, replay.Oracle) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, results.InputsDir, hisrubric.Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := FinDeepResearch().Generate(in, Options{Scale: scale, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return &results.Bundle{Dir: dir, Manifest: &results.Manifest{Name: "t", Benchmarks: []string{hisrubric.Name}}}, o
}

func fdrHash(t testing.TB, res *analysis.Result) string {
	t.Helper()
	c := *res
	c.Details = res.AllDetails() // generated on demand: hashed with the rest
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestFinDeepResearchSmall(t *testing.T) {
	b, o := fdrBuild(t, Small)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	a := &fdrOracleAnswerer{o: o, enc: enc}
	res, err := hisrubric.Benchmark{}.Run(context.Background(), analysis.Input{Bundle: b, Answer: a})
	if err != nil {
		t.Fatal(err)
	}
	if res.Missing != 0 || !res.Synthetic {
		t.Fatalf("missing %d, synthetic %v", res.Missing, res.Synthetic)
	}
	if a.calls > 400 {
		t.Errorf("%d exchanges, want at most 400 at small scale", a.calls)
	}
	t.Logf("%d exchanges, %d bytes of prompts and replies, %d compressed", a.calls, a.bytes, a.packed)
	if a.packed > 1<<20 {
		t.Errorf("%d bytes compressed, want under 1 MiB", a.packed)
	}
	for _, name := range []string{"accuracy", "markets", "structure_scores", "capabilities", "sections", "languages", "industries", "headline", "structure", "structure_deductions", "numeric_check"} {
		tab := res.Table(name)
		if tab == nil {
			t.Fatalf("no table %s", name)
		}
		if len(tab.Rows) == 0 {
			t.Errorf("table %s is empty", name)
		}
	}
	// Every system but the hostile one has a defined score in every market.
	mk := res.Table("markets")
	for _, row := range mk.Rows {
		for i, cell := range row[2:] {
			if cell.Undef && !strings.HasPrefix(row[0].Text, "Hostile") {
				t.Errorf("markets: %s %s undefined: %s", row[0].Text, mk.Columns[i+2].Name, cell.Text)
			}
		}
	}
	// The published comparison keys: method names and market columns.
	for _, name := range []string{"OpenAI o3-deep-research", "Grok 4 DeepSearch", "Mistral Deep Research"} {
		found := false
		for _, row := range mk.Rows {
			found = found || row[0].Text == name
		}
		if !found {
			t.Errorf("markets: no row %q", name)
		}
	}
	// Faults show as deductions: Mistral's broken or missing tables,
	// Deepseek's Chinese section header in CN and HK.
	ded := res.Table("structure_deductions")
	reasons := map[string]bool{}
	for _, row := range ded.Rows {
		reasons[row[0].Text+": "+strings.SplitN(row[8].Text, ":", 2)[0]] = true
	}
	for _, want := range []string{"Deepseek-v3.2 (T): misnamed", "Deepseek-v3.2 (T): wrong columns", "Hostile-Demo (synthetic): missing"} {
		if !reasons[want] {
			t.Errorf("no deduction %q in %v", want, reasons)
		}
	}
	st := res.Table("structure_scores")
	for _, row := range st.Rows {
		if row[0].Text == "OpenAI o3-deep-research" && row[1].Num != 1 {
			t.Errorf("o3-deep-research structure %v, want 1 (no faults)", row[1].Num)
		}
	}
	res.Details = res.AllDetails()
	if len(res.Details) != 8*6 {
		t.Errorf("%d details, want 48", len(res.Details))
	}
	hostile := false
	for _, d := range res.Details {
		if strings.Contains(d.Output, "<script>") {
			hostile = true
		}
		if len(d.Output) > 70<<10 {
			t.Errorf("%s %s: output of %d bytes in the drill-down", d.Task, d.System, len(d.Output))
		}
	}
	if !hostile {
		t.Error("no hostile output in the details")
	}
	// Determinism: a second independent build and run gives the same result.
	b2, o2 := fdrBuild(t, Small)
	res2, err := hisrubric.Benchmark{}.Run(context.Background(), analysis.Input{Bundle: b2, Answer: &fdrOracleAnswerer{o: o2}})
	if err != nil {
		t.Fatal(err)
	}
	if fdrHash(t, res) != fdrHash(t, res2) {
		t.Error("two runs differ")
	}
	t.Logf("%d problems", len(res.Problems))
	for i, p := range res.Problems {
		if i < 5 {
			t.Log(p)
		}
	}
	for _, row := range res.Table("accuracy").Rows {
		t.Logf("%-32s acc %s structure %s", row[0].Text, row[2].Format(1), row[6].Format(3))
	}
}

// fdrMemo answers from replies recorded once, so that a benchmark times
// the analysis and not the simulator.
type fdrMemo map[[32]byte]results.Reply

func fdrMemoKey(p results.Prompt) [32]byte {
	return sha256.Sum256([]byte(p.Model + "\x00" + p.System + "\x00" + p.User))
}

func (m fdrMemo) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		r, ok := m[fdrMemoKey(c.Prompt)]
		if !ok {
			r = results.Reply{Err: fmt.Errorf("not recorded")}
		}
		out[i] = r
	}
	return out
}

type fdrRecorder struct {
	a    results.Answerer
	memo fdrMemo
}

func (r fdrRecorder) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := r.a.Answer(ctx, calls)
	for i, c := range calls {
		r.memo[fdrMemoKey(c.Prompt)] = out[i]
	}
	return out
}

// BenchmarkFinDeepResearchFull times the analysis of the full-scale demo
// (64 companies, 17 systems, 247 items per report) from recorded replies
// ("run") against loading the inputs alone ("load"), the baseline.
func BenchmarkFinDeepResearchFull(b *testing.B) { fdrBenchmark(b, Full) }

// BenchmarkFinDeepResearchSmall does the same for the Small demo.
func BenchmarkFinDeepResearchSmall(b *testing.B) { fdrBenchmark(b, Small) }

func fdrBenchmark(b *testing.B, scale Scale) {
	bundle, o := fdrBuild(b, scale)
	memo := fdrMemo{}
	res, err := hisrubric.Benchmark{}.Run(context.Background(), analysis.Input{Bundle: bundle, Answer: fdrRecorder{&fdrOracleAnswerer{o: o}, memo}})
	if err != nil || res.Missing > 0 {
		b.Fatal(err, res.Missing)
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := hisrubric.Load(bundle.Inputs(hisrubric.Name)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			if _, err := (hisrubric.Benchmark{}).Run(context.Background(), analysis.Input{Bundle: bundle, Answer: memo}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFinDeepResearchFullNearPublished checks that the full-scale demo
// lands near the paper's market table: every method's overall within 2
// points of the published mean of its eight markets.
func TestFinDeepResearchFullNearPublished(t *testing.T) {
	if testing.Short() {
		t.Skip("full scale")
	}
	b, o := fdrBuild(t, Full)
	res, err := hisrubric.Benchmark{}.Run(context.Background(), analysis.Input{Bundle: b, Answer: &fdrOracleAnswerer{o: o}})
	if err != nil {
		t.Fatal(err)
	}
	targets, err := fdrTargets()
	if err != nil {
		t.Fatal(err)
	}
	mk := res.Table("markets")
	for _, row := range mk.Rows {
		tg, ok := targets[row[0].Text]
		if !ok {
			continue
		}
		want := 0.0
		for _, m := range fdrMarkets {
			want += 100 * tg[m.code] / float64(len(fdrMarkets))
		}
		got := row[mk.Col("overall")].Num
		t.Logf("%-32s published %5.1f demo %5.1f", row[0].Text, want, got)
		if math.Abs(got-want) > 2 {
			t.Errorf("%s: demo %.1f, published %.1f", row[0].Text, got, want)
		}
	}
	// The methods the paper names as best are best in the demo too.
	f, err := assets.Open("assets/published/findeepresearch/headline.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pub, err := results.ReadCSV(f, "headline.csv")
	if err != nil {
		t.Fatal(err)
	}
	best := map[string]string{}
	for _, row := range pub.Rows {
		best[row[0]] = row[1]
	}
	for _, row := range res.Table("headline").Rows {
		t.Logf("headline %-24s %-32s %5.1f", row[0].Text, row[1].Text, row[2].Num)
		if want := best[row[0].Text]; row[1].Text != want {
			t.Errorf("headline %s: %s, published %s", row[0].Text, row[1].Text, want)
		}
	}
}

// TestFinDeepResearchRecordReplay records the Small demo through the
// recorder and the sim provider, then replays it offline: every request
// must hit the cache and the result must equal the direct run's.
func TestFinDeepResearchRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("records a bundle")
	}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := Build(ctx, dir, Options{Scale: Small, Seed: 1}, []Generator{FinDeepResearch()}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The part's size as shipped: cache packs are compressed already,
	// inputs are compressed in the archive.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	for _, f := range b.Manifest.Files {
		if strings.HasPrefix(f.Path, results.CacheDir+"/") {
			size += f.Size
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		size += int64(len(enc.EncodeAll(data, nil)))
	}
	t.Logf("small demo bundle part: %d files, %d bytes compressed", len(b.Manifest.Files), size)
	if size > 1_200_000 {
		t.Errorf("small bundle part is %d bytes compressed, want well under 1.5 MB", size)
	}
	store, err := cache.Open(b.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	res, err := analysis.Run(ctx, FinDeepResearch().Benchmark(), analysis.Input{Bundle: b, Answer: replay.New(store, replay.Config{Mode: replay.Offline})})
	if err != nil {
		t.Fatal(err)
	}
	if res.Missing != 0 || !res.Synthetic {
		t.Fatalf("offline replay: %d missing, synthetic %v", res.Missing, res.Synthetic)
	}
	db, o := fdrBuild(t, Small)
	direct, err := hisrubric.Benchmark{}.Run(ctx, analysis.Input{Bundle: db, Answer: &fdrOracleAnswerer{o: o}})
	if err != nil {
		t.Fatal(err)
	}
	if fdrHash(t, res) != fdrHash(t, direct) {
		for i, tb := range res.Tables {
			if fmt.Sprint(tb.Rows) != fmt.Sprint(direct.Tables[i].Rows) {
				t.Errorf("table %s differs", tb.Name)
			}
		}
		t.Fatal("replayed result differs from the direct run")
	}
}
