package stats

import (
	"math"
	"slices"
)

// Ranks returns the rank of each value, 1 for the smallest, ties getting
// the average of the ranks they span.
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case x[a] < x[b]:
			return -1
		case x[a] > x[b]:
			return 1
		}
		return 0
	})
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i + 1
		for j < len(idx) && x[idx[j]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

// Pearson returns the Pearson correlation of x and y. It is undefined
// with fewer than 2 pairs, a NaN or infinite value, or a constant input;
// with 2 pairs it is +1 or -1, as in scipy.stats.pearsonr.
func Pearson(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		panic("stats: Pearson of unequal lengths")
	}
	if err := pairsDefined(x, y); err != nil {
		return 0, err
	}
	mx, my := Mean(x), Mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, undefined("constant input")
	}
	return sxy / math.Sqrt(sxx*syy), nil
}

// Spearman returns Spearman's rho: the Pearson correlation of the average
// ranks, which is the textbook definition with ties (scipy.stats.spearmanr).
// It is undefined as Pearson is: with a NaN in either input (scipy's
// default nan_policy="propagate" gives nan), fewer than 2 pairs or a
// constant input; 2 distinct pairs give +1 or -1.
func Spearman(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		panic("stats: Spearman of unequal lengths")
	}
	if err := pairsDefined(x, y); err != nil {
		return 0, err
	}
	return Pearson(Ranks(x), Ranks(y))
}

// pairsDefined says why a correlation of x and y is undefined before any
// arithmetic: too few pairs or a value that is not a finite number.
func pairsDefined(x, y []float64) error {
	if len(x) < 2 {
		return undefined("fewer than 2 pairs")
	}
	if !allFinite(x, y) {
		return undefined("a value is not a number")
	}
	return nil
}

// allFinite says whether every value of every slice is a finite number.
func allFinite(xs ...[]float64) bool {
	for _, x := range xs {
		for _, v := range x {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// KendallTauB returns Kendall's tau-b, which corrects for ties in either
// variable (scipy.stats.kendalltau). It is undefined with a NaN in either
// input, fewer than 2 pairs or a constant input; 2 distinct pairs give +1
// or -1.
func KendallTauB(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		panic("stats: KendallTauB of unequal lengths")
	}
	if err := pairsDefined(x, y); err != nil {
		return 0, err
	}
	n := len(x)
	var conc, disc, tx, ty float64
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			dx, dy := sign(x[i]-x[j]), sign(y[i]-y[j])
			switch {
			case dx == 0 && dy == 0:
				// tied in both: counts in neither term
			case dx == 0:
				tx++
			case dy == 0:
				ty++
			case dx == dy:
				conc++
			default:
				disc++
			}
		}
	}
	d := math.Sqrt((conc + disc + tx) * (conc + disc + ty))
	if d == 0 {
		return 0, undefined("constant input")
	}
	return (conc - disc) / d, nil
}

func sign(x float64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// Mean returns the arithmetic mean of x, 0 for no values and NaN when a
// value is NaN.
func Mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}
