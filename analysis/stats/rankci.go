package stats

import (
	"math"
)

// A RankInterval is a system's rank (1 the best) with the interval its
// rank takes in the bootstrap.
type RankInterval struct {
	Rank   int
	Lo, Hi int
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
