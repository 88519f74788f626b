package consensus

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/results"
)

func TestRunFromBundle(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, results.InputsDir, Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, f := range fixFS() {
		if err := os.WriteFile(filepath.Join(in, name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b := Benchmark{}
	if b.Name() != "finresearchbench2" || b.Title() != "FinResearchBench II" {
		t.Errorf("Name %q Title %q", b.Name(), b.Title())
	}
	res, err := b.Run(context.Background(), analysis.Input{Bundle: &results.Bundle{Dir: dir}, Answer: &fixAnswerer{},
		Settings: analysis.Settings{KnobBootstrap: "100"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Ranking, ",") != "A,B,C,D,E" {
		t.Errorf("Ranking %v", res.Ranking)
	}
	if _, err := b.Run(context.Background(), analysis.Input{Answer: &fixAnswerer{}}); err == nil {
		t.Error("Run without a bundle: no error")
	}
	if err := (analysis.Settings{"judges": "J1", "tolerance": "2"}).Validate(b); err == nil {
		t.Error("unknown knob accepted")
	}
}

// captured records the calls of one Run.
type captured struct {
	fixAnswerer
	calls []results.Call
}

func (c *captured) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	c.calls = append(c.calls, calls...) // copied: calls are the caller's once answered
	return c.fixAnswerer.Answer(ctx, calls)
}

func TestCalls(t *testing.T) {
	fsys := fixFS()
	// A report quoting a placeholder is not expanded.
	fsys[ReportsFile].Data = bytes.Replace(fsys[ReportsFile].Data, []byte("report of A for q1"), []byte("report of A for q1 {{rubrics}}"), 1)
	c := &captured{}
	if _, err := RunFS(context.Background(), fsys, c, analysis.Settings{KnobBootstrap: "10"}); err != nil {
		t.Fatal(err)
	}
	// 3 judges x 2 queries x 5 products, then 2 reruns of J1 on q1/A.
	if len(c.calls) != 32 {
		t.Fatalf("%d calls, want 32", len(c.calls))
	}
	first := c.calls[0].Prompt
	want := "Query (Stock Comparison): Compare X and Y.\nR: report of A for q1 {{rubrics}}\n" +
		"[a1] (comprehensiveness) rubric a1\n[a2] (insight) rubric a2\n[a3] (insight) rubric a3\n[a4] (readability) rubric a4\n" +
		"Answer ID: yes or ID: no.\n"
	if first.User != want || first.Model != "m1" || first.Provider != "sim" || first.Sample != 0 || first.Params["temperature"] != 0.0 {
		t.Errorf("first prompt %+v\nwant user %q", first, want)
	}
	if l := c.calls[0].Label; l != (results.Label{Benchmark: Name, Task: "q1/A", Role: results.RoleJudge, Name: "J1"}) {
		t.Errorf("first label %+v", l)
	}
	last := c.calls[31]
	if last.Prompt.Sample != 2 || last.Label.Task != "q1/A/run3" || last.Prompt.User != first.User {
		t.Errorf("last call %+v", last)
	}
	// Only the selected judges are asked; no stability reruns without J1.
	c2 := &captured{}
	if _, err := RunFS(context.Background(), fixFS(), c2, analysis.Settings{KnobJudges: "J2", KnobBootstrap: "10"}); err != nil {
		t.Fatal(err)
	}
	if len(c2.calls) != 10 {
		t.Errorf("%d calls with one judge, want 10", len(c2.calls))
	}
}

func TestBootstrapOff(t *testing.T) {
	res := runFixture(t, fixFS(), analysis.Settings{KnobBootstrap: "0", uncertainty.KnobReps: "0"})
	if c := cell(t, res, "pass_rates", "A", "gold_item_low"); !c.Undef {
		t.Errorf("gold_item_low without resamples = %+v, want undefined", c)
	}
	if c := cell(t, res, "pass_rates", "A", "tier"); !c.Undef {
		t.Errorf("tier without resamples = %+v, want undefined", c)
	}
	check(t, res, []want{{"pass_rates", "A", "gold_item", 100.0}})
}

// TestGolden compares the fixture's whole result with testdata/fixture.json.
func TestGolden(t *testing.T) {
	res := runFixture(t, fixFS(), nil)
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden.Check(t, filepath.Join("testdata", "fixture.json"), got)
}

func TestNoGoldRubric(t *testing.T) {
	// No query has 100 gold rubrics: nothing is scored, every rate and
	// correlation is undefined, and nothing panics or prints NaN.
	res := runFixture(t, fixFS(), analysis.Settings{KnobMinRubrics: "100"})
	for _, c := range []analysis.Cell{
		cell(t, res, "pass_rates", "A", "gold_item"),
		cell(t, res, "pass_rates", "A", "tier"),
		cell(t, res, "splits", "mean_spearman", "value"),
		cell(t, res, "leave_one_judge_out", "J1", "spearman"),
		cell(t, res, "ablation", "gold", "spread_pp"),
	} {
		if !c.Undef {
			t.Errorf("cell %+v, want undefined", c)
		}
	}
	if len(res.Scores) != 0 || strings.Join(res.Ranking, ",") != "A,B,C,D,E" {
		t.Errorf("Scores %v, Ranking %v", res.Scores, res.Ranking)
	}
	b, err := json.Marshal(res)
	if err != nil || bytes.Contains(b, []byte("NaN")) {
		t.Errorf("marshal: %v", err)
	}
}

// TestScoreConcurrently scores one collection under several settings at
// once, as a sweep does: each result equals a whole run's under the same
// settings, and the collection is left as it was (go test -race).
func TestScoreConcurrently(t *testing.T) {
	variants := []analysis.Settings{
		{KnobBootstrap: "200"},
		{KnobBootstrap: "200", KnobDistinguishability: "off"},
		{KnobBootstrap: "200", KnobConsistency: "2-of-3"},
		{KnobBootstrap: "200", KnobMinRubrics: "100"},
		{KnobBootstrap: "100", KnobSeed: "7"},
	}
	c, err := collectFS(context.Background(), fixFS(), &fixAnswerer{}, variants[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]byte, len(variants))
	var wg sync.WaitGroup
	for i, s := range variants {
		wg.Go(func() {
			res, err := Benchmark{}.Score(context.Background(), c, s)
			if err != nil {
				t.Error(err)
				return
			}
			res.Details, res.LazyDetails = res.AllDetails(), nil // made now, as RunFS does
			got[i], _ = json.Marshal(res)                        // a Result always encodes
		})
	}
	wg.Wait()
	for i, s := range variants {
		res, err := RunFS(context.Background(), fixFS(), &fixAnswerer{}, s)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(res); !bytes.Equal(got[i], want) {
			t.Errorf("settings %v: scoring the shared collection differs from a whole run", s)
		}
	}
	if _, err := (Benchmark{}).Score(context.Background(), c, analysis.Settings{KnobJudges: "J1"}); err == nil {
		t.Error("scoring with judges other than the collected ones: no error")
	}
}
