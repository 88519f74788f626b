package stats

import (
	"math"
	"slices"
)

// A Paired is the comparison of two systems on the items both answered:
// the mean of the item differences a - b with its clustered statistics.
type Paired struct {
	// Diff is the mean paired difference over Items shared items in
	// Clusters clusters.
	Diff            float64
	Items, Clusters int
	// SE is the CR1 cluster-robust standard error of Diff (see
	// ClusterMean).
	SE float64
	// Lo and Hi are the cluster bootstrap percentile interval of Diff.
	Lo, Hi float64
	// P is the two-sided p-value of the paired sign-flip permutation test
	// at the cluster level (see SignFlip); Exact says every sign pattern
	// was enumerated rather than sampled.
	P     float64
	Exact bool
}

// SignFlip returns the two-sided p-value of the paired sign-flip
// permutation test of the cluster sums of paired differences sums: under
// the null that the two systems are exchangeable within each cluster,
// every cluster's difference is as likely negated, so the statistic
// T = |Σ_g s_g·sums[g]| over sign patterns s ∈ {-1, 1}^G is referred to
// its permutation distribution. With 2^G <= reps every pattern is
// enumerated and p is the exact share of patterns with T at least the
// observed one (the observed pattern among them); otherwise reps patterns
// are drawn from the seed and p = (1 + count)/(1 + reps), which is never
// 0. Ties are counted with a relative tolerance of 1e-9, so rounding
// cannot turn a tie into a miss.
func SignFlip(sums []float64, reps int, seed uint64) (p float64, exact bool) {
	G := len(sums)
	var obs, scale float64
	for _, s := range sums {
		obs += s
		scale += math.Abs(s)
	}
	obs = math.Abs(obs)
	if obs == 0 {
		return 1, true
	}
	limit := obs - 1e-9*scale
	if G < 63 && 1<<G <= reps {
		var count int
		for mask := range 1 << G {
			var t float64
			for g, s := range sums {
				if mask>>g&1 == 1 {
					t -= s
				} else {
					t += s
				}
			}
			if math.Abs(t) >= limit {
				count++
			}
		}
		return float64(count) / float64(int(1)<<G), true
	}
	r := NewRand(seed)
	var count int
	for range reps {
		var t float64
		for g := 0; g < G; g += 64 {
			bits := r.Uint64()
			for k := g; k < G && k < g+64; k++ {
				if bits>>(k-g)&1 == 1 {
					t -= sums[k]
				} else {
					t += sums[k]
				}
			}
		}
		if math.Abs(t) >= limit {
			count++
		}
	}
	return float64(1+count) / float64(1+reps), false
}

// Holm returns Holm's (1979) step-down adjusted p-values of p, in p's
// order: the k-th smallest of m is multiplied by m-k+1, made
// non-decreasing in that order, and capped at 1. Rejecting the adjusted
// values below α controls the family-wise error rate at α.
func Holm(p []float64) []float64 {
	m := len(p)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case p[a] < p[b]:
			return -1
		case p[a] > p[b]:
			return 1
		}
		return 0
	})
	adj := make([]float64, m)
	run := 0.0
	for k, i := range idx {
		v := math.Min(1, float64(m-k)*p[i])
		run = math.Max(run, v)
		adj[i] = run
	}
	return adj
}

// TieGroups groups a ranking (n systems, best first) into tie groups:
// walking down the ranking, a system joins the current group when its
// difference from the group's first (best) system is not significant,
// p(leader, system) >= alpha, and otherwise starts the next group as its
// leader. Groups are therefore contiguous runs of the ranking; the result
// holds group numbers from 1.
func TieGroups(n int, p func(leader, i int) float64, alpha float64) []int {
	g := make([]int, n)
	leader := 0
	for i := range n {
		switch {
		case i == 0:
			g[i] = 1
		case p(leader, i) >= alpha:
			g[i] = g[leader]
		default:
			leader = i
			g[i] = g[i-1] + 1
		}
	}
	return g
}
