package stats

// CohenKappa returns Cohen's kappa between two raters' labels of the same
// items: (po - pe) / (1 - pe), with pe from each rater's marginal label
// frequencies. It is undefined for no items and when pe = 1 (both raters
// use a single, identical label throughout).
func CohenKappa[L comparable](a, b []L) (float64, error) {
	if len(a) != len(b) {
		panic("stats: CohenKappa of unequal lengths")
	}
	n := float64(len(a))
	if n == 0 {
		return 0, undefined("no items")
	}
	ca, cb := map[L]float64{}, map[L]float64{}
	agree := 0.0
	for i := range a {
		ca[a[i]]++
		cb[b[i]]++
		if a[i] == b[i] {
			agree++
		}
	}
	po := agree / n
	pe := 0.0
	for l, x := range ca {
		pe += (x / n) * (cb[l] / n) // sum order does not reach outputs beyond float rounding of equal terms
	}
	if 1-pe < 1e-12 {
		return 0, undefined("chance agreement is 1")
	}
	return (po - pe) / (1 - pe), nil
}
