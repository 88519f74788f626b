package stats

import "math"

// Wilson returns the Wilson (1927) score interval of a proportion of
// successes out of n at the given level (0.95): the proportions p whose
// score test |p̂ - p| / √(p(1-p)/n) does not reject, without continuity
// correction,
//
//	(p̂ + z²/2n ± z·√(p̂(1-p̂)/n + z²/4n²)) / (1 + z²/n),
//
// which, unlike the Wald interval p̂ ± z·√(p̂(1-p̂)/n), stays inside [0, 1]
// and does not collapse to a point at 0 or n successes (Newcombe 1998,
// method 3; Agresti and Coull 1998). It treats the n trials as
// independent.
func Wilson(successes, n int, level float64) (lo, hi float64, err error) {
	if n < 1 {
		return 0, 0, undefined("no trials")
	}
	if successes < 0 || successes > n {
		return 0, 0, undefined("successes outside 0..n")
	}
	z := NormalQuantile(1 - (1-level)/2)
	N := float64(n)
	p := float64(successes) / N
	z2 := z * z
	centre := p + z2/(2*N)
	half := z * math.Sqrt(p*(1-p)/N+z2/(4*N*N))
	den := 1 + z2/N
	lo, hi = (centre-half)/den, (centre+half)/den
	// at 0 and n successes the formula gives 0 and 1 up to rounding
	if successes == 0 {
		lo = 0
	}
	if successes == n {
		hi = 1
	}
	return lo, hi, nil
}
