package demo

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// fdrOracleAnswerer answers calls straight from an oracle, as the sim
// provider would, marking replies synthetic.
type fdrOracleAnswerer struct {
	o     replay.Oracle
	calls int
	bytes int
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
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestFinDeepResearchSmall(t *testing.T) {
	b, o := fdrBuild(t, Small)
	a := &fdrOracleAnswerer{o: o}
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
	t.Logf("%d exchanges, %d bytes of prompts and replies", a.calls, a.bytes)
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
	for _, row := range res.Table("accuracy").Rows {
		t.Logf("%-32s acc %s structure %s", row[0].Text, row[2].Format(1), row[6].Format(3))
	}
}
