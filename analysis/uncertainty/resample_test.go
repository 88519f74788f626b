package uncertainty

import (
	"math"
	"testing"

	"github.com/finrepro/finrepro/analysis/stats"
)

// forecastLike returns 15 systems' 0/1 scores (in points) on 1,418 tasks,
// each its own cluster, the shape of the full-scale FinDeepForecast, with
// accuracies from 0.15 to 0.43 so that the tie groups need several
// leaders.
func forecastLike() (names []string, scores [][]float64, cluster []int) {
	const S, N = 15, 1418
	r := stats.NewRand(7)
	cluster = make([]int, N)
	for i := range cluster {
		cluster[i] = i
	}
	for s := range S {
		names = append(names, string(rune('A'+s)))
		y := make([]float64, N)
		acc := 0.43 - 0.02*float64(s)
		for i := range y {
			if r.Float64() < acc {
				y[i] = 100
			}
		}
		scores = append(scores, y)
	}
	return names, scores, cluster
}

// BenchmarkNew measures a board of the full-scale FinDeepForecast's shape
// at 10,000 resamples.
func BenchmarkNew(b *testing.B) {
	names, scores, cluster := forecastLike()
	for range b.N {
		New(names, scores, cluster, Config{Reps: DefaultReps, Unit: "tasks", Decimals: 1})
	}
}

// TestBootstrapTwoClusters checks the resampled intervals against the
// bootstrap distribution of two clusters, known exactly: a resample
// draws cluster 0 twice (mean m0, probability 1/4), each once (the
// pooled mean, 1/2) or cluster 1 twice (m1, 1/4). With m0 = 10 (items
// 10, 10) and m1 = 40 (one item), the 2.5 % and 97.5 % quantiles are
// 10 and 40. The paired difference A - B with B = 0 everywhere has the
// same distribution; the rank of A is 1 in every resample.
func TestBootstrapTwoClusters(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{10, 10, 40}, {0, 0, 0}}, []int{5, 5, 9}, Config{Reps: 4000})
	if b.Lo[0] != 10 || b.Hi[0] != 40 {
		t.Errorf("interval [%v, %v], want [10, 40]", b.Lo[0], b.Hi[0])
	}
	if p := b.Pairs[0]; p.Lo != 10 || p.Hi != 40 || p.Diff != 20 {
		t.Errorf("pair %+v, want difference 20 in [10, 40]", p)
	}
	if r := b.Ranks[0]; r != (stats.RankInterval{Rank: 1, Lo: 1, Hi: 1}) {
		t.Errorf("rank %+v", r)
	}
	if r := b.Ranks[1]; r != (stats.RankInterval{Rank: 2, Lo: 2, Hi: 2}) {
		t.Errorf("rank %+v", r)
	}
}

// TestSignFlipsSampled checks the sampled sign-flip p-values against
// known ones. With 100 clusters each favouring A by 1, every sign
// pattern but the observed one and its mirror gives |T| < 100, so
// p = (1 + 0)/(1 + reps) up to the patterns of 100 equal signs (2 in
// 2^100). A difference that is 0 in every cluster gives p = 1, and
// differences +1, -1 alternating give T = 0 observed, p = 1. A series of
// 3 clusters is enumerated: T = |1 + 1 + 1| is reached by 2 of 8
// patterns, p = 0.25, exact.
func TestSignFlipsSampled(t *testing.T) {
	ones, zeros, alt := make([]float64, 100), make([]float64, 100), make([]float64, 100)
	for g := range ones {
		ones[g] = 1
		alt[g] = float64(1 - 2*(g%2))
	}
	p, exact := signFlips([][]float64{ones, zeros, alt, {1, 1, 1}}, 999, 1)
	if p[0] != 0.001 || exact[0] {
		t.Errorf("one-sided series: p %v (exact %v), want 0.001 sampled", p[0], exact[0])
	}
	if p[1] != 1 || p[2] != 1 {
		t.Errorf("null series: p %v and %v, want 1", p[1], p[2])
	}
	if p[3] != 0.25 || !exact[3] {
		t.Errorf("3 clusters: p %v (exact %v), want 0.25 exact", p[3], exact[3])
	}
}

// TestSignFlipsUniformUnderNull draws 400 null data sets (symmetric
// cluster differences) and checks that about 5 % of the sampled p-values
// fall below 0.05, as a valid test's must (binomial 95 % range about
// 2.9-7.4 %, so the bounds 2-9 % fail only on a broken test).
func TestSignFlipsUniformUnderNull(t *testing.T) {
	r := stats.NewRand(3)
	var series [][]float64
	for range 400 {
		s := make([]float64, 30)
		for g := range s {
			s[g] = r.NormFloat64()
		}
		series = append(series, s)
	}
	p, _ := signFlips(series, 2000, 11)
	below := 0
	for _, v := range p {
		if v < 0.05 {
			below++
		}
	}
	if share := float64(below) / 400; share < 0.02 || share > 0.09 {
		t.Errorf("%.1f %% of null p-values below 0.05", 100*share)
	}
	if math.IsNaN(p[0]) {
		t.Error("NaN p-value")
	}
}

// TestCoverage draws clustered data with known means many times and
// checks that the board's 95 % cluster bootstrap intervals of a system's
// mean and of a paired difference cover the truth 91.5-97.5 % of the time:
// the percentile interval with 64 clusters covers about 93.5 % (docs/
// scores.md), and 1,000 draws estimate a coverage within about ±1.6
// points (two binomial standard errors). A bootstrap that resampled items
// instead of clusters would cover about 68 %.
// The data: 64 clusters of 2 to 12 items; A's items are 5 + u_c + e, B's
// 4 + u_c + v_c + e' with u, v, e, e' standard normal, so A's mean is 5,
// the intra-cluster correlation of A 0.5, and A - B has mean 1 with a
// cluster effect -v_c.
func TestCoverage(t *testing.T) {
	draws := 1000
	if testing.Short() {
		draws = 400
	}
	const G = 64
	r := stats.NewRand(21)
	var coverA, coverD int
	for range draws {
		var a, b []float64
		var cl []int
		for c := range G {
			u, v := r.NormFloat64(), r.NormFloat64()
			for range 2 + r.IntN(11) {
				a = append(a, 5+u+r.NormFloat64())
				b = append(b, 4+u+v+r.NormFloat64())
				cl = append(cl, c)
			}
		}
		bd := New([]string{"A", "B"}, [][]float64{a, b}, cl, Config{Reps: 1000})
		if bd.Lo[0] <= 5 && 5 <= bd.Hi[0] {
			coverA++
		}
		if p := bd.Pairs[0]; p.Lo <= 1 && 1 <= p.Hi {
			coverD++
		}
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"mean", coverA}, {"paired difference", coverD}} {
		cov := float64(c.n) / float64(draws)
		t.Logf("%s interval covers %.3f", c.name, cov)
		if cov < 0.915 || cov > 0.975 {
			t.Errorf("%s interval covers %.3f, want 0.915-0.975", c.name, cov)
		}
	}
}
