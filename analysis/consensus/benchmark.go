package consensus

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// Name is the benchmark's machine name, also its bundle folder name.
const Name = "finresearchbench2"

// Benchmark is FinResearchBench II; it implements analysis.Benchmark.
type Benchmark struct{}

var _ analysis.Benchmark = Benchmark{}

// Name returns "finresearchbench2".
func (Benchmark) Name() string { return Name }

// Title returns "FinResearchBench II".
func (Benchmark) Title() string { return "FinResearchBench II" }

// Knobs lists the settings Run understands.
func (Benchmark) Knobs() []analysis.Knob { return knobs() }

// Run loads the inputs from the bundle and analyses them; see RunFS.
func (b Benchmark) run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	if in.Bundle == nil {
		return nil, fmt.Errorf("%s: no bundle", Name)
	}
	return RunFS(ctx, in.Bundle.Inputs(Name), in.Answer, in.Settings)
}

// RunFS is Run over an inputs folder given as a file system: it loads and
// checks the inputs, asks every judge about every report in one batch of
// calls (plus the stability reruns), parses the verdicts and builds every
// table.
func RunFS(ctx context.Context, fsys fs.FS, ans results.Answerer, s analysis.Settings) (*analysis.Result, error) {
	in, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	cfg, err := parseSettings(s, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	calls, slots := buildCalls(in, cfg)
	replies := ans.Answer(ctx, calls)
	if len(replies) < len(calls) {
		return nil, fmt.Errorf("%s: answerer gave %d replies for %d calls", Name, len(replies), len(calls))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	a := newAnalysis(in, cfg)
	a.read(calls, slots, replies)
	return a.result(), nil
}

// A slot says where a call's labels go: judge position, query, product
// and run (0 is the main run).
type slot struct{ j, q, p, run int }

// buildCalls makes the judge calls in a fixed order: main runs by judge,
// query and product, then the stability reruns.
func buildCalls(in *Inputs, cfg *config) ([]results.Call, []slot) {
	var calls []results.Call
	var slots []slot
	users := make([][]string, len(in.Queries))
	for q := range in.Queries {
		users[q] = make([]string, len(in.Panel.Products))
		list := renderRubrics(in.Rubrics[q])
		for p := range in.Panel.Products {
			users[q][p] = in.render(q, p, list)
		}
	}
	mk := func(j, q, p, run int) {
		jd := in.Panel.Judges[cfg.judges[j]]
		task := in.Queries[q].ID + "/" + in.Panel.Products[p].Name
		if run > 0 {
			task += fmt.Sprintf("/run%d", run+1)
		}
		calls = append(calls, results.Call{
			Prompt: results.Prompt{Provider: jd.Provider, Model: jd.Model, System: in.Panel.System,
				User: users[q][p], Params: jd.Params, Sample: run},
			Label: results.Label{Benchmark: Name, Task: task, Role: results.RoleJudge, Name: jd.Name},
		})
		slots = append(slots, slot{j, q, p, run})
	}
	for j := range cfg.judges {
		for q := range in.Queries {
			for p := range in.Panel.Products {
				mk(j, q, p, 0)
			}
		}
	}
	for _, j := range stabilityJudges(in, cfg) {
		for _, it := range in.Panel.Stability.Items {
			for run := 1; run < in.Panel.Stability.Runs; run++ {
				mk(j, in.queryIdx[it.Query], in.prodIdx[it.Product], run)
			}
		}
	}
	return calls, slots
}

// stabilityJudges returns the positions in cfg.judges of the selected
// stability judges.
func stabilityJudges(in *Inputs, cfg *config) []int {
	var out []int
	if in.Panel.Stability == nil {
		return nil
	}
	for pos, j := range cfg.judges {
		if slices.Contains(in.Panel.Stability.Judges, in.Panel.Judges[j].Name) {
			out = append(out, pos)
		}
	}
	return out
}

// renderRubrics lists rubrics one a line as "[ID] (dimension) text".
func renderRubrics(rs []Rubric) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "[%s] (%s) %s\n", r.ID, oneLine(r.Dimension), oneLine(r.Text))
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// render fills the prompt template for query q and product p.
func (in *Inputs) render(q, p int, rubrics string) string {
	return strings.NewReplacer(
		PlaceQuery, in.Queries[q].Text,
		PlaceCategory, in.Queries[q].Category,
		PlaceReport, in.Reports[q][p],
		PlaceRubrics, rubrics,
	).Replace(in.Prompt)
}

// Collect is, for now, a whole run whose result is dropped; it keeps in
// for Score, which runs again.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if _, err := b.run(ctx, in); err != nil {
		return nil, err
	}
	return in, nil
}

// Score runs the benchmark over the kept input under s.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	in := c.(analysis.Input)
	in.Settings = s
	return b.run(ctx, in)
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}
