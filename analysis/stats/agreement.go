package stats

import "math"

// MAE returns the mean absolute difference between paired scores; it is
// undefined for no pairs or a value that is not a finite number.
func MAE(x, y []float64) (float64, error) {
	if len(x) != len(y) {
		panic("stats: MAE of unequal lengths")
	}
	if len(x) == 0 {
		return 0, undefined("no pairs")
	}
	if !allFinite(x, y) {
		return 0, undefined("a value is not a number")
	}
	s := 0.0
	for i := range x {
		s += math.Abs(x[i] - y[i])
	}
	return s / float64(len(x)), nil
}

// PairwiseAgreement returns the pairwise agreement rate of two raters'
// scores of the same items: over all item pairs, the share whose order
// (win, tie or loss) is the same for both raters. Two scores within tie
// of each other are a tie. It is undefined for fewer than 2 items or a
// value that is not a finite number.
func PairwiseAgreement(x, y []float64, tie float64) (float64, error) {
	if len(x) != len(y) {
		panic("stats: PairwiseAgreement of unequal lengths")
	}
	if len(x) < 2 {
		return 0, undefined("fewer than 2 items")
	}
	if !allFinite(x, y) {
		return 0, undefined("a value is not a number")
	}
	agree, pairs := 0, 0
	for i := range x {
		for j := i + 1; j < len(x); j++ {
			pairs++
			if order(x[i]-x[j], tie) == order(y[i]-y[j], tie) {
				agree++
			}
		}
	}
	return float64(agree) / float64(pairs), nil
}

func order(d, tie float64) int {
	switch {
	case d > tie:
		return 1
	case d < -tie:
		return -1
	}
	return 0
}
