package icbc

import (
	"math"
	"testing"
)

// TestLinearize checks the linearised items against a hand derivation.
// Objective EN tasks e1, e2 and ZH tasks z1, z2, all answered, e1 and z1
// right: the overall's objective part is ¼·100·(EN accuracy) +
// ¼·100·(ZH accuracy) = 12.5 + 12.5 = 25. Item i gets
// 25 + 4·25·(c_i - 0.5)/2 = 25 ± 25: (50, 0, 50, 0), whose mean is 25.
func TestLinearize(t *testing.T) {
	v := linearize(25, []ratio{
		{weight: 25, a: []float64{1, 0, 0, 0}, b: []float64{1, 1, 0, 0}},
		{weight: 25, a: []float64{0, 0, 1, 0}, b: []float64{0, 0, 1, 1}},
		{weight: 7, a: []float64{0, 0, 0, 0}, b: []float64{0, 0, 0, 0}}, // empty: adds nothing
	}, 4)
	for i, want := range []float64{50, 0, 50, 0} {
		if math.Abs(v[i]-want) > 1e-12 {
			t.Errorf("item %d = %v, want %v", i, v[i], want)
		}
	}
}

// TestBoardKeepsLanguagePairs checks that the English and Chinese
// versions of a task are one cluster. With the items of TestLinearize,
// where a task's two versions score alike:
//
//   - paired (EN and ZH tasks share IDs 1 and 2): clusters {e1, z1} and
//     {e2, z2} have residual sums +50 and -50, SE² = 2/1·5000/16 = 625,
//     SE = 25, design effect 625/208.33 = 3. Directly: the overall is
//     12.5·Σ correct, so cluster totals are 25 and 0 and the CR1 variance
//     of their sum is G/(G-1)·Σ(T_g - T̄)² = 2·(12.5² + 12.5²) = 625.
//   - unpaired (IDs 1, 2 in English, 3, 4 in Chinese): four clusters,
//     SE² = 4/3·(4·625)/16 = 208.33, SE = 14.434, design effect 1.
//
// statsmodels agrees (analysis/uncertainty/testdata/cluster_ref.py).
func TestBoardKeepsLanguagePairs(t *testing.T) {
	for _, c := range []struct {
		name     string
		zhIDs    [2]string
		se, deff float64
		clusters int
	}{
		{"paired", [2]string{"1", "2"}, 25, 3, 2},
		{"unpaired", [2]string{"3", "4"}, math.Sqrt(625.0 / 3), 1, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &run{collection: &collection{
				obj: []*Objective{{ID: "1", Language: "en"}, {ID: "2", Language: "en"},
					{ID: c.zhIDs[0], Language: "zh"}, {ID: c.zhIDs[1], Language: "zh"}},
				systems: []System{{Model: Model{Name: "S"}}, {Model: Model{Name: "T"}}},
			}, o: &settings{weights: Weights{Expert: 0.8, Citation: 0.1, Source: 0.1}, clusterReps: 100}}
			r.objCells = [][]objCell{
				{{n: 1, c: 1}, {n: 1}, {n: 1, c: 1}, {n: 1}},
				{{n: 1}, {n: 1}, {n: 1}, {n: 1}},
			}
			bd := r.board([]string{"S", "T"}, map[string]float64{"S": 25, "T": 0})
			m := bd.Means[0]
			if math.Abs(m.Mean-25) > 1e-12 || math.Abs(m.SE-c.se) > 1e-9 || math.Abs(m.DesignEffect-c.deff) > 1e-9 || bd.Clusters != c.clusters {
				t.Errorf("mean %v, SE %v, design effect %v, %d clusters; want 25, %v, %v, %d", m.Mean, m.SE, m.DesignEffect, bd.Clusters, c.se, c.deff, c.clusters)
			}
			if c, n := r.objCounts(0, "zh"); c != 1 || n != 2 {
				t.Errorf("ZH objective %d of %d, want 1 of 2", c, n)
			}
		})
	}
}
