package stats

import (
	"math"
	"testing"
)

// TestQuantile checks Quantile against known type-7 values. By hand, for
// sorted x = (1, 2, 3, 4, 10), h = q(n-1) = 4q and the value is
// x[floor h] + frac(h) (x[floor h + 1] - x[floor h]):
// q 0.1: h 0.4, 1 + 0.4*1 = 1.4; q 0.25: h 1, 2; q 0.9: h 3.6,
// 4 + 0.6*6 = 7.6; these are R's quantile(c(1, 2, 3, 4, 10),
// c(0, .1, .25, .5, .9, 1), type = 7): 1.0 1.4 2.0 3.0 7.6 10.0.
// NumPy's documentation gives np.percentile([[10, 7, 4], [3, 2, 1]], 50)
// = 3.5; q 0.75 gives h 3.75, 4 + 0.75*3 = 6.25.
func TestQuantile(t *testing.T) {
	tests := []struct {
		x    []float64
		q    float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 10}, 0, 1},
		{[]float64{1, 2, 3, 4, 10}, 0.1, 1.4},
		{[]float64{1, 2, 3, 4, 10}, 0.25, 2},
		{[]float64{1, 2, 3, 4, 10}, 0.5, 3},
		{[]float64{1, 2, 3, 4, 10}, 0.9, 7.6},
		{[]float64{1, 2, 3, 4, 10}, 1, 10},
		{[]float64{1, 2, 3, 4, 7, 10}, 0.5, 3.5},
		{[]float64{1, 2, 3, 4, 7, 10}, 0.75, 6.25},
		{[]float64{5}, 0.3, 5},
	}
	for _, tc := range tests {
		if got := Quantile(tc.x, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %v) = %v, want %v", tc.x, tc.q, got, tc.want)
		}
	}
	if got := Quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Quantile(nil) = %v, want NaN", got)
	}
}
