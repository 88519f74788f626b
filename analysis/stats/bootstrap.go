package stats

import (
	"math"
	"math/rand/v2"
	"slices"
)

// NewRand returns the seeded random source every resampling in finrepro
// uses, so that a seed fixes every interval.
func NewRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// Bootstrap draws reps resamples of n units with replacement and returns
// the percentile interval [lo, hi] of stat at the given confidence level
// (0.95 for a 95% interval). stat receives the resampled unit indices
// (a unit may repeat) in a buffer it must not keep.
func Bootstrap(n, reps int, seed uint64, level float64, stat func(idx []int) float64) (lo, hi float64, err error) {
	if n < 2 {
		return 0, 0, undefined("fewer than 2 units to resample")
	}
	if reps < 1 {
		return 0, 0, undefined("no resamples")
	}
	r := NewRand(seed)
	idx := make([]int, n)
	vals := make([]float64, 0, reps)
	for range reps {
		for i := range idx {
			idx[i] = r.IntN(n)
		}
		if v := stat(idx); !math.IsNaN(v) {
			vals = append(vals, v)
		}
	}
	return Percentiles(vals, level)
}

// Percentiles sorts resampled values vals and returns their percentile
// interval [lo, hi] at the given confidence level, as Bootstrap does.
func Percentiles(vals []float64, level float64) (lo, hi float64, err error) {
	if len(vals) == 0 {
		return 0, 0, undefined("statistic undefined in every resample")
	}
	slices.Sort(vals)
	a := (1 - level) / 2
	return Quantile(vals, a), Quantile(vals, 1-a), nil
}

// Quantile returns the q-quantile of sorted values by linear
// interpolation between order statistics (type 7, as R and NumPy default).
func Quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	if i >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
