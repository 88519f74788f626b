package consensus

import (
	"math"
	"testing"
)

// TestBoardClustersByQuery checks that the gold item pass rate is
// clustered by query, against a hand derivation.
//
// Two scored queries with two gold rubrics each: product P passes both
// rubrics of query 0 and neither of query 1, product Q passes one of
// each. P's items are (100, 100, 0, 0), mean 50: by query the residual
// sums are +100 and -100, SE² = G/(G-1)·Σ r_g²/N² = 2·20000/16 = 2500,
// SE = 50; the naive error is √(833.33) = 28.868 (what clustering by
// rubric would give), design effect 3. Q's items (100, 0, 100, 0) have
// residual sums 0 and 0 by query: SE 0, although the naive error is
// again 28.868 (design effect 0). Query 1, with too few gold rubrics,
// is left out. The Wilson interval is checked in analysis/stats; here
// only the count it is given.
func TestBoardClustersByQuery(t *testing.T) {
	gold := newRateSet(3, 2)
	gold.n = []int{2, 5, 2} // query 1 is not scored
	gold.pass = []int{2, 1, 5, 5, 0, 1}
	a := &analyzer{np: 2, names: []string{"P", "Q"}, ranking: []int{0, 1},
		base: &selection{gold: gold, scored: []int{0, 2}}, cfg: &config{clusterReps: 100}}
	bd := a.board()
	p, q := bd.Means[0], bd.Means[1]
	if math.Abs(p.SE-50) > 1e-9 || math.Abs(p.NaiveSE-math.Sqrt(2500.0/3)) > 1e-9 || math.Abs(p.DesignEffect-3) > 1e-9 {
		t.Errorf("P: SE %v, naive %v, design effect %v; want 50, 28.868, 3", p.SE, p.NaiveSE, p.DesignEffect)
	}
	if q.SE > 1e-9 || math.Abs(q.NaiveSE-math.Sqrt(2500.0/3)) > 1e-9 {
		t.Errorf("Q: SE %v, naive %v; want 0, 28.868", q.SE, q.NaiveSE)
	}
	if bd.Clusters != 2 || p.Items != 4 {
		t.Errorf("%d clusters, %d items; want 2, 4", bd.Clusters, p.Items)
	}
	if pass, n := a.goldPasses(0); pass != 2 || n != 4 {
		t.Errorf("P passes %d of %d, want 2 of 4", pass, n)
	}
}
