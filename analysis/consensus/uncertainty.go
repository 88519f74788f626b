package consensus

import (
	"math"

	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// board computes the clustered statistics of the gold item pass rate
// ranking. The unit of sampling is the query: each scored query's gold
// rubrics are its items, 1 (100 %) where a product passes and 0 where it
// fails, clustered by query. Every statistic of uncertainty.New depends
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
	scores := make([][]float64, len(a.ranking))
	for k, p := range a.ranking {
		names[k] = a.names[p]
		y := make([]float64, 0, len(cluster))
		for _, q := range a.base.scored {
			pass := gold.pass[q*gold.np+p]
			for i := range gold.n[q] {
				y = append(y, 100*b2f(i < pass))
			}
		}
		scores[k] = y
	}
	if len(cluster) == 0 {
		for k := range scores {
			scores[k] = []float64{math.NaN()}
		}
		cluster = []int{0}
	}
	return uncertainty.New(names, scores, cluster, uncertainty.Config{Reps: a.cfg.clusterReps, Unit: "queries", Decimals: 2, Points: "percentage points", Requested: a.cfg.pairs})
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
