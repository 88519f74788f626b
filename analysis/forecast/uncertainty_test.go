package forecast

import (
	"math"
	"testing"
)

// TestClusterKnob checks that the cluster knob picks the unit the
// clustered standard error resamples, against a hand derivation.
//
// Four tasks: t1 and t2 on company X in week 1, t3 and t4 on company Y in
// week 2, every task its own indicator. System S is right on X's tasks
// and wrong on Y's, R is wrong everywhere: S's items are (100, 100, 0,
// 0), mean 50.
//
// By company (or by week, the same grouping here): residual sums +100 and
// -100, SE² = G/(G-1)·Σ r_g²/N² = 2·20000/16 = 2500, SE = 50, design
// effect 3 (naive SE² = s²/4 = (10000/3)/4 = 833.33).
// By task or by indicator (every task alone): SE² = 4/3·4·2500/16 =
// 833.33, SE = 28.868, the naive error up to rounding, design effect 1.
// statsmodels agrees (analysis/uncertainty/testdata/cluster_ref.py).
func TestClusterKnob(t *testing.T) {
	in := &Inputs{Config: &Config{Systems: []System{{Name: "S"}, {Name: "R"}}}}
	for _, tk := range []Task{
		{ID: "t1", Entity: "X", Metric: "m1", Week: 1}, {ID: "t2", Entity: "X", Metric: "m2", Week: 1},
		{ID: "t3", Entity: "Y", Metric: "m3", Week: 2}, {ID: "t4", Entity: "Y", Week: 2},
	} {
		in.Tasks = append(in.Tasks, &tk)
	}
	out := [][]int8{{correct, correct, wrong, wrong}, {wrong, wrong, wrong, wrong}}
	for _, c := range []struct {
		cluster  string
		se, deff float64
		clusters int
	}{
		{ClusterTask, math.Sqrt(2500.0 / 3), 1, 4},
		{ClusterIndicator, math.Sqrt(2500.0 / 3), 1, 4}, // t4 has no metric: its own cluster
		{ClusterCompany, 50, 3, 2},
		{ClusterWeek, 50, 3, 2},
	} {
		t.Run(c.cluster, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Cluster, opt.ClusterReps = c.cluster, 200
			b := &board{in: in, opt: opt, out: out}
			bd := b.board([]int{0, 1})
			m := bd.Means[0]
			if math.Abs(m.SE-c.se) > 1e-9 || math.Abs(m.DesignEffect-c.deff) > 1e-9 || bd.Clusters != c.clusters {
				t.Errorf("SE %v, design effect %v, %d clusters; want %v, %v, %d", m.SE, m.DesignEffect, bd.Clusters, c.se, c.deff, c.clusters)
			}
		})
	}
}

func TestClusterKnobRejectsUnknown(t *testing.T) {
	if _, err := ParseOptions(map[string]string{KnobCluster: "market"}); err == nil {
		t.Error("cluster=market accepted")
	}
	if _, err := ParseOptions(map[string]string{KnobCluster: ClusterWeek, "cluster_bootstrap": "-1"}); err == nil {
		t.Error("cluster_bootstrap=-1 accepted")
	}
}
