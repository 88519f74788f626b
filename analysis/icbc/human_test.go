package icbc

import (
	"math"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestHumanConsistency derives every number by hand. Task 1: experts E1
// (10, 20, 30) and E2 (20, 20, 40) on systems S1-S3, ICC(2,1) = 0.75;
// LLM judges J1 (15, 25, 35) and J2 (10, 30, 20). Task 2: experts who
// order the reports oppositely (ICC < 0): excluded.
//   - inter-expert: rho of (1,2,3) and (1.5,1.5,3) = 1.5/sqrt(2 x 1.5) =
//     0.866025; PAR: S1-S2 loss vs tie, the others agree: 2/3; MAE
//     (10+0+10)/3.
//   - inter-llm: rho 1 - 6 x 2/(3 x 8) = 0.5; PAR 2/3; MAE (5+5+15)/3.
//   - expert-llm: expert mean (15, 20, 35); against J1 rho 1, PAR 1, MAE
//     5/3; against J2 rho 0.5, PAR 2/3, MAE 10. Means 0.75, 5/6, 35/6.
func TestHumanConsistency(t *testing.T) {
	c := &collection{in: &Inputs{Config: Config{RubricJudges: []Model{{Name: "J1"}, {Name: "J2"}}}}}
	r := &run{collection: c, o: &settings{}, res: &analysis.Result{}}
	add := func(task, sys, expert string, score float64) {
		r.in.Human = append(r.in.Human, HumanScore{Task: task, System: sys, Expert: expert, Score: score})
	}
	r.llmScores = map[[2]string][]float64{}
	for i, s := range []string{"S1", "S2", "S3"} {
		add("1", s, "E1", []float64{10, 20, 30}[i])
		add("1", s, "E2", []float64{20, 20, 40}[i])
		add("2", s, "E1", []float64{10, 20, 30}[i])
		add("2", s, "E2", []float64{30, 20, 10}[i])
		r.llmScores[[2]string{"1", s}] = []float64{[]float64{15, 25, 35}[i], []float64{10, 30, 20}[i]}
		r.llmScores[[2]string{"2", s}] = []float64{1, 2}
	}
	c.humanGroups()
	tb := r.humanConsistency()
	want := map[string][3]float64{
		"inter-expert": {1.5 / math.Sqrt(3), 2.0 / 3, 20.0 / 3},
		"inter-llm":    {0.5, 2.0 / 3, 25.0 / 3},
		"expert-llm":   {0.75, 5.0 / 6, 35.0 / 6},
	}
	for _, row := range tb.Rows {
		w := want[row[0].Text]
		for i, col := range []string{"spearman", "par", "mae"} {
			if c := row[tb.Col(col)]; !c.IsNum || math.Abs(c.Num-w[i]) > 1e-9 {
				t.Errorf("%s %s = %+v, want %v", row[0].Text, col, c, w[i])
			}
		}
	}
	if !strings.Contains(strings.Join(c.problems, "\n"), "task 2: expert ICC(2,1) -") {
		t.Errorf("task 2 not excluded: %q", c.problems)
	}
}

// TestHumanConstantICC: two experts who give all three reports 33.3 points
// have no variance, so ICC(2,1) is undefined (0/0), not a number that
// passes the ICC >= 0 rule (rounding in the mean squares made it 1 here):
// the group is excluded and the problem says so.
func TestHumanConstantICC(t *testing.T) {
	c := &collection{in: &Inputs{Config: Config{RubricJudges: []Model{{Name: "J1"}}}}}
	c.llmScores = map[[2]string][]float64{}
	for i, s := range []string{"S1", "S2", "S3"} {
		for _, e := range []string{"E1", "E2"} {
			c.in.Human = append(c.in.Human, HumanScore{Task: "1", System: s, Expert: e, Score: 33.3})
		}
		c.llmScores[[2]string{"1", s}] = []float64{float64(10 * (i + 1))}
	}
	c.humanGroups()
	if c.humanKept != 0 || c.humanSkips != 1 {
		t.Fatalf("kept %d, skipped %d groups; want 0 and 1", c.humanKept, c.humanSkips)
	}
	if !strings.Contains(strings.Join(c.problems, "\n"), "task 1: expert ICC(2,1) undefined: no variance") {
		t.Errorf("problems = %q, want the undefined ICC named", c.problems)
	}
}
