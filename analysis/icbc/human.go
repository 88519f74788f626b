package icbc

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// consistency accumulates one comparison's per-group means.
type consistency struct{ rho, par, mae []float64 }

func (c *consistency) add(x, y []float64, tie float64) {
	if v, err := stats.Spearman(x, y); err == nil {
		c.rho = append(c.rho, v)
	}
	if v, err := stats.PairwiseAgreement(x, y, tie); err == nil {
		c.par = append(c.par, v)
	}
	if v, err := stats.MAE(x, y); err == nil {
		c.mae = append(c.mae, v)
	}
}

// A humanGroup is one task of the human comparison: its reports
// (systems) scored by the experts who scored all of them and by every
// rubric judge.
type humanGroup struct {
	expert [][]float64 // [system][expert]
	llm    [][]float64 // [system][judge]
}

// humanGroups finds the groups of the human comparison. A group is one
// task: its reports scored by the experts who scored all of them and by
// every rubric judge. Groups whose experts' ICC(2,1) is below 0 are
// excluded, and so are groups where it is undefined (a constant matrix
// of scores has no variance to agree on), each with a problem saying why.
func (c *collection) humanGroups() {
	byTask := map[string]map[string]map[string]float64{} // task -> system -> expert -> score
	for _, h := range c.in.Human {
		if byTask[h.Task] == nil {
			byTask[h.Task] = map[string]map[string]float64{}
		}
		if byTask[h.Task][h.System] == nil {
			byTask[h.Task][h.System] = map[string]float64{}
		}
		byTask[h.Task][h.System][h.Expert] = h.Score
	}
	tasks := slices.SortedFunc(maps.Keys(byTask), idLess)
	for _, task := range tasks {
		var systems []string
		for s := range byTask[task] {
			if l := c.llmScores[[2]string{task, s}]; l != nil && !slices.ContainsFunc(l, math.IsNaN) {
				systems = append(systems, s)
			}
		}
		slices.Sort(systems)
		// Experts who scored every one of these reports.
		var experts []string
		if len(systems) > 0 {
			for e := range byTask[task][systems[0]] {
				all := true
				for _, s := range systems {
					_, ok := byTask[task][s][e]
					all = all && ok
				}
				if all {
					experts = append(experts, e)
				}
			}
		}
		slices.Sort(experts)
		if len(systems) < 2 || len(experts) < 2 {
			c.humanSkips++
			c.problem("human consistency: task %s: fewer than 2 reports or 2 experts with complete scores; excluded", task)
			continue
		}
		g := humanGroup{expert: make([][]float64, len(systems)), llm: make([][]float64, len(systems))}
		for i, s := range systems {
			for _, e := range experts {
				g.expert[i] = append(g.expert[i], byTask[task][s][e])
			}
			g.llm[i] = c.llmScores[[2]string{task, s}]
		}
		icc, err := stats.ICC21(g.expert)
		if err != nil || icc < 0 {
			c.humanSkips++
			c.problem("human consistency: task %s: expert ICC(2,1) %s; excluded", task, iccText(icc, err))
			continue
		}
		c.humanKept++
		c.human = append(c.human, g)
	}
}

// humanConsistency compares expert and LLM-judge scores on the groups of
// the human sample. Within a group, every pair of experts (inter-expert),
// every pair of LLM judges (inter-llm) and the experts' mean against each
// LLM judge (expert-llm) give a Spearman rho, a pairwise agreement rate
// and an MAE over the group's reports; the table shows the means over
// pairs and groups.
func (r *run) humanConsistency() *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "human_consistency", Title: "Human consistency",
		Caption: "Spearman rho and pairwise agreement rate (higher is better) and MAE in points (lower is better) between experts and LLM judges, over report groups (one task each) whose expert ICC(2,1) is at least 0; a group whose ICC is undefined (every expert gives every report the same score, say) is excluded too and listed among the problems.",
		Columns: []analysis.Column{{Name: "comparison", Title: "Comparison"},
			{Name: "spearman", Title: "Spearman rho", Decimals: 3}, {Name: "par", Title: "PAR", Decimals: 3},
			{Name: "mae", Title: "MAE", Unit: "pts", Decimals: 2},
			{Name: "values", Title: "Values", Doc: "pairs x groups averaged"}}}
	var ee, ll, el consistency
	nj := len(r.in.Config.RubricJudges)
	for _, g := range r.human {
		col := func(f func(i int) float64) []float64 {
			out := make([]float64, len(g.expert))
			for i := range out {
				out[i] = f(i)
			}
			return out
		}
		expert := func(j int) []float64 { return col(func(i int) float64 { return g.expert[i][j] }) }
		llm := func(j int) []float64 { return col(func(i int) float64 { return g.llm[i][j] }) }
		meanExpert := col(func(i int) float64 { return stats.Mean(g.expert[i]) })
		ne := len(g.expert[0])
		for a := range ne {
			for b := a + 1; b < ne; b++ {
				ee.add(expert(a), expert(b), r.o.tie)
			}
		}
		for a := range nj {
			for b := a + 1; b < nj; b++ {
				ll.add(llm(a), llm(b), r.o.tie)
			}
			el.add(meanExpert, llm(a), r.o.tie)
		}
	}
	for _, c := range []struct {
		name string
		c    *consistency
	}{{"inter-expert", &ee}, {"inter-llm", &ll}, {"expert-llm", &el}} {
		cell := func(x []float64) analysis.Cell {
			if len(x) == 0 {
				return analysis.Undefined("no comparable pairs")
			}
			return analysis.Number(stats.Mean(x))
		}
		t.AddRow(analysis.Text(c.name), cell(c.c.rho), cell(c.c.par), cell(c.c.mae), analysis.Int(len(c.c.mae)))
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d groups kept, %d excluded (expert ICC(2,1) < 0 or incomplete scores); %d LLM judges.", r.humanKept, r.humanSkips, nj))
	return t
}

func iccText(icc float64, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprintf("%.3f < 0", icc)
}
