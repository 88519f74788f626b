package consensus

import (
	"math"

	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// board computes the clustered statistics of the gold item pass rate
// ranking. The unit of sampling is the query: each scored query's gold
// rubrics are its items, 1 (100 %) where a product passes and 0 where it
// fails, clustered by query. Every statistic of uncertainty.NewFrom depends
// on a product's items only through its passes and rubric count per query
// (the paired ones through the per-query differences of passes), so the
// items are written with a product's passes first; which rubrics they
// were does not change any figure.
func (a *analyzer) board() *uncertainty.Board {
	gold := a.base.gold
	var cluster []int
	for _, q := range a.base.scored {
		for range gold.n[q] {
			cluster = append(cluster, q)
		}
	}
	names := make([]string, len(a.ranking))
	for k, p := range a.ranking {
		names[k] = a.names[p]
	}
	// A product's items are written when the board asks for them, in
	// its buffer (at 8x the full-scale demo, all products' items at once
	// held 3 MB); without an item, each product has one missing.
	empty := len(cluster) == 0
	if empty {
		cluster = []int{0}
	}
	scores := func(k int, y []float64) []float64 {
		if empty {
			y[0] = math.NaN()
			return y
		}
		p := a.ranking[k]
		y = y[:0]
		for _, q := range a.base.scored {
			pass := gold.pass[q*gold.np+p]
			for i := range gold.n[q] {
				y = append(y, 100*b2f(i < pass))
			}
		}
		return y
	}
	return uncertainty.NewFrom(names, scores, cluster, uncertainty.Config{Reps: a.cfg.clusterReps, Unit: "queries", Decimals: 2, Points: "percentage points", Requested: a.cfg.pairs})
}

// goldPasses returns product p's gold rubric passes and rubrics over the
// scored queries.
func (a *analyzer) goldPasses(p int) (pass, n int) {
	gold := a.base.gold
	for _, q := range a.base.scored {
		pass += gold.pass[q*gold.np+p]
		n += gold.n[q]
	}
	return pass, n
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
