package uncertainty

// This file is the one hand-tuned part of the package: every resampled
// statistic of a board in two passes, with each resample's cluster draw
// shared by all systems and pairs and each sign pattern shared by all
// pairs. Profile: reproduce of the full-scale demo (finrepro demo
// --scale full) spent 4.1 of 6.6 CPU-seconds here when New resampled
// each system and pair on its own (a bootstrap per system and per pair,
// a rank bootstrap, a sign-flip test per pair): FinDeepForecast has 1,418 task clusters, and
// at 10,000 resamples each sign-flip test took 80 ms, each bootstrap
// 61 ms and the rank intervals 225 ms. BenchmarkNew in
// resample_test.go measures the passes. The estimators are those of
// analysis/stats (docs/scores.md): the ratio mean of the clusters drawn,
// percentile intervals by stats.Quantile, ranks by 1 + the number of
// strictly better means, the sign-flip p-value (1 + count)/(1 + reps);
// a pair with few enough clusters for every sign pattern is handed to
// stats.SignFlip, which enumerates them.

import (
	"math"
	"slices"

	"github.com/finrepro/finrepro/analysis/stats"
)

// sums are one series' item sums and counts by cluster.
type sums struct{ sum, cnt []float64 }

// clustersOf returns the number of clusters holding an item.
func (s sums) clusters() int {
	n := 0
	for _, c := range s.cnt {
		if c > 0 {
			n++
		}
	}
	return n
}

// bootstrapPass draws reps resamples of the G clusters with replacement,
// the same draw for every series, and returns each series' resampled
// ratio means Σ sum / Σ cnt over the clusters drawn (NaN ones left out,
// sorted), and for the first nRank series the counts[s][r-1] of
// resamples in which series s ranks r.
func bootstrapPass(series []sums, nRank, G, reps int, seed uint64) (vals [][]float64, counts [][]int) {
	K := len(series)
	// Series often share their counts (systems that answered the same
	// items): each distinct count vector is summed once.
	var cnts [][]float64
	cntOf := make([]int, K)
	for k, s := range series {
		c := slices.IndexFunc(cnts, func(x []float64) bool { return slices.Equal(x, s.cnt) })
		if c < 0 {
			c = len(cnts)
			cnts = append(cnts, s.cnt)
		}
		cntOf[k] = c
	}
	W := K + len(cnts)
	rows := make([]float64, G*W) // by cluster: every series' sum, then the distinct counts
	for g := range G {
		for k, s := range series {
			rows[g*W+k] = s.sum[g]
		}
		for c, x := range cnts {
			rows[g*W+K+c] = x[g]
		}
	}
	vals = make([][]float64, K)
	for k := range vals {
		vals[k] = make([]float64, 0, reps)
	}
	counts = make([][]int, nRank)
	for s := range counts {
		counts[s] = make([]int, nRank)
	}
	r := stats.NewRand(seed)
	acc := make([]float64, W)
	means := make([]float64, K)
	for range reps {
		clear(acc)
		for range G {
			g := r.IntN(G)
			row := rows[g*W : (g+1)*W]
			a := acc[:len(row)]
			for j, x := range row {
				a[j] += x
			}
		}
		for k := range K {
			means[k] = math.NaN()
			if n := acc[K+cntOf[k]]; n > 0 {
				means[k] = acc[k] / n
				vals[k] = append(vals[k], means[k])
			}
		}
		for s := range nRank {
			rank := 1
			for t := range nRank {
				if stats.Above(means[t], means[s]) {
					rank++
				}
			}
			counts[s][rank-1]++
		}
	}
	for k := range vals {
		slices.Sort(vals[k])
	}
	return vals, counts
}

// interval is the percentile interval of sorted resampled values.
func interval(sorted []float64) (lo, hi float64, err error) {
	if len(sorted) == 0 {
		return 0, 0, &stats.UndefinedError{Reason: "statistic undefined in every resample"}
	}
	a := (1 - Level) / 2
	return stats.Quantile(sorted, a), stats.Quantile(sorted, 1-a), nil
}

// signFlips returns the two-sided sign-flip p-value of each series of
// cluster sums of paired differences, and whether it is exact. A series
// with G' nonzero clusters and 2^G' <= reps goes to stats.SignFlip, which
// enumerates every pattern; the others share reps sign patterns drawn
// from seed (64 clusters per draw, as stats.SignFlip draws them), each
// getting p = (1 + count)/(1 + reps) with ties counted within a relative
// 1e-9.
func signFlips(series [][]float64, reps int, seed uint64) (p []float64, exact []bool) {
	p, exact = make([]float64, len(series)), make([]bool, len(series))
	var sampled []int
	for k, s := range series {
		var nz []float64
		for _, v := range s {
			if v != 0 {
				nz = append(nz, v)
			}
		}
		if len(nz) < 63 && 1<<len(nz) <= reps {
			p[k], exact[k] = stats.SignFlip(nz, reps, seed)
			continue
		}
		sampled = append(sampled, k)
	}
	if len(sampled) == 0 {
		return p, exact
	}
	K, G := len(sampled), len(series[sampled[0]])
	// Blocks of 4 clusters: table[(b*16+m)*K+j] is series j's sum over
	// block b with the signs of nibble m (bit set: negated), so that a
	// pattern costs G/4 row additions.
	nb := (G + 3) / 4
	table := make([]float64, nb*16*K)
	limit := make([]float64, K)
	for j, k := range sampled {
		var obs, scale float64
		for _, v := range series[k] {
			obs += v
			scale += math.Abs(v)
		}
		limit[j] = math.Abs(obs) - 1e-9*scale
		for blk := range nb {
			for m := range 16 {
				var t float64
				for q := range 4 {
					if g := 4*blk + q; g < G {
						if m>>q&1 == 1 {
							t -= series[k][g]
						} else {
							t += series[k][g]
						}
					}
				}
				table[(blk*16+m)*K+j] = t
			}
		}
	}
	r := stats.NewRand(seed)
	t := make([]float64, K)
	count := make([]int, K)
	for range reps {
		clear(t)
		for b0 := 0; b0 < nb; b0 += 16 { // 16 blocks, 64 clusters, per draw
			bits := r.Uint64()
			for blk := b0; blk < nb && blk < b0+16; blk++ {
				m := int(bits >> (4 * (blk - b0)) & 15)
				row := table[(blk*16+m)*K : (blk*16+m+1)*K]
				tt := t[:len(row)]
				for j, x := range row {
					tt[j] += x
				}
			}
		}
		for j := range K {
			if math.Abs(t[j]) >= limit[j] {
				count[j]++
			}
		}
	}
	for j, k := range sampled {
		p[k] = float64(1+count[j]) / float64(1+reps)
	}
	return p, exact
}
