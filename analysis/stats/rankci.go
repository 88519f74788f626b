package stats

import (
	"math"
	"slices"
)

// A RankInterval is a system's rank (1 the best) with the interval its
// rank takes in the bootstrap.
type RankInterval struct {
	Rank   int
	Lo, Hi int
}

// RankIntervals returns each system's rank interval from the cluster
// bootstrap of the ranking. scores[s][i] is system s's score on item i
// (higher is better, NaN where s did not answer) and cluster[i] item i's
// cluster. Each of reps resamples draws clusters with replacement (the
// same draw for every system, seeded), takes each system's mean over its
// answered items in the clusters drawn, and ranks the systems: a system's
// rank is 1 plus the number of systems with a strictly higher mean, so
// equal means share the better rank, and a system with no answered item
// in a resample ranks last. Lo and Hi are the lower and upper
// (1-level)/2 quantiles of the resampled ranks, by the inverse of their
// empirical distribution (so they are ranks that occurred). Rank is the
// rank on the full data, by the same rule.
func RankIntervals(scores [][]float64, cluster []int, reps int, seed uint64, level float64) ([]RankInterval, error) {
	S := len(scores)
	groups := make([]Clusters, S)
	labels := slices.Clone(cluster)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	G := len(labels)
	if G < 2 {
		return nil, undefined("fewer than 2 clusters to resample")
	}
	if reps < 1 {
		return nil, undefined("no resamples")
	}
	// every system's clusters over the same labels, so that one draw of
	// cluster indices resamples every system alike
	for s, y := range scores {
		sum := make([]float64, G)
		cnt := make([]int, G)
		for i, v := range y {
			if math.IsNaN(v) {
				continue
			}
			g, _ := slices.BinarySearch(labels, cluster[i])
			sum[g] += v
			cnt[g]++
		}
		groups[s] = Clusters{Labels: labels, Sum: sum, Count: cnt}
	}
	all := make([]int, G)
	for i := range all {
		all[i] = i
	}
	means := make([]float64, S)
	order := make([]int, S)
	// rank sorts the systems by mean, best first, and gives each the rank
	// of the first system with its mean: O(S log S) per resample
	rank := func(idx []int, out []int) {
		for s := range groups {
			means[s] = groups[s].Mean(idx)
			order[s] = s
		}
		slices.SortFunc(order, func(x, y int) int {
			switch {
			case Above(means[x], means[y]):
				return -1
			case Above(means[y], means[x]):
				return 1
			}
			return 0
		})
		for k, s := range order {
			if k > 0 && !Above(means[order[k-1]], means[s]) {
				out[s] = out[order[k-1]]
			} else {
				out[s] = k + 1
			}
		}
	}
	res := make([]RankInterval, S)
	full := make([]int, S)
	rank(all, full)
	counts := make([][]int, S) // counts[s][r-1]: resamples with s at rank r
	for s := range counts {
		counts[s] = make([]int, S)
	}
	r := NewRand(seed)
	idx := make([]int, G)
	out := make([]int, S)
	for range reps {
		for i := range idx {
			idx[i] = r.IntN(G)
		}
		rank(idx, out)
		for s, k := range out {
			counts[s][k-1]++
		}
	}
	a := (1 - level) / 2
	for s := range res {
		res[s] = RankInterval{Rank: full[s], Lo: RankQuantile(counts[s], reps, a), Hi: RankQuantile(counts[s], reps, 1-a)}
	}
	return res, nil
}

// Above says whether mean x ranks strictly above mean y; NaN ranks below
// everything.
func Above(x, y float64) bool {
	switch {
	case math.IsNaN(x):
		return false
	case math.IsNaN(y):
		return true
	}
	return x > y
}

// RankQuantile returns the smallest rank whose empirical cumulative share
// reaches q, counts[k] being how many of n draws gave rank k+1 (the
// inverse empirical distribution, type 1).
func RankQuantile(counts []int, n int, q float64) int {
	need := q * float64(n)
	cum := 0
	for k, c := range counts {
		cum += c
		if float64(cum) >= need-1e-9 && cum > 0 {
			return k + 1
		}
	}
	return len(counts)
}
