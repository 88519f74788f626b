package demo

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/results"
)

// TestFactor checks that Options.Factor multiplies every benchmark's
// tasks at Full scale, with new ids, and is ignored at Small scale.
func TestFactor(t *testing.T) {
	if testing.Short() {
		t.Skip("generates full-scale inputs")
	}
	for _, tc := range []struct {
		gen   Generator
		tasks func(fs.FS) ([]string, error) // the task-like ids
	}{
		{FinResearchBench2(), func(f fs.FS) ([]string, error) {
			in, err := consensus.Load(f)
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, q := range in.Queries {
				ids = append(ids, q.ID)
			}
			return ids, nil
		}},
		{FinDeepForecast(), func(f fs.FS) ([]string, error) {
			in, err := forecast.LoadInputs(f)
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, t := range in.Tasks {
				ids = append(ids, t.ID)
			}
			return ids, nil
		}},
		{FinDeepResearch(), func(f fs.FS) ([]string, error) {
			in, err := hisrubric.Load(f)
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, c := range in.Companies {
				ids = append(ids, c.ID)
			}
			return ids, nil
		}},
		{ICBCBench(), func(f fs.FS) ([]string, error) {
			in, err := icbc.Load(f)
			if err != nil {
				return nil, err
			}
			var ids []string
			for _, o := range in.Objectives {
				ids = append(ids, "objective/"+o.ID)
			}
			for _, s := range in.Subjectives {
				ids = append(ids, "subjective/"+s.ID)
			}
			return ids, nil
		}},
	} {
		name := tc.gen.Benchmark().Name()
		t.Run(name, func(t *testing.T) {
			count := func(opt Options) []string {
				dir := t.TempDir()
				o, err := tc.gen.Generate(dir, opt)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := o.Respond(results.Prompt{Model: "nobody", User: "x"}); err == nil {
					t.Error("oracle answered an unknown model")
				}
				ids, err := tc.tasks(os.DirFS(dir))
				if err != nil {
					t.Fatal(err)
				}
				return ids
			}
			one := count(Options{Scale: Full, Seed: 1})
			two := count(Options{Scale: Full, Seed: 1, Factor: 2})
			if len(one) == 0 || len(two) != 2*len(one) {
				t.Errorf("factor 2: %d tasks, want twice %d", len(two), len(one))
			}
			seen := map[string]bool{}
			for _, id := range two {
				if seen[id] {
					t.Errorf("factor 2: repeated id %s", id)
				}
				seen[id] = true
			}
			small := count(Options{Scale: Small, Seed: 1})
			if got := count(Options{Scale: Small, Seed: 1, Factor: 3}); strings.Join(got, " ") != strings.Join(small, " ") {
				t.Errorf("factor at small scale changed the tasks: %d, want %d", len(got), len(small))
			}
		})
	}
}
