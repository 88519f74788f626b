package stats

// CohenKappa returns Cohen's kappa between two raters' labels of the same
// items: (po - pe) / (1 - pe), with pe from each rater's marginal label
// frequencies. It is undefined for no items and when pe = 1 (both raters
// use a single, identical label throughout).
func CohenKappa[L comparable](a, b []L) (float64, error) {
	if len(a) != len(b) {
		panic("stats: CohenKappa of unequal lengths")
	}
	var k Agreement[L]
	for i := range a {
		k.Add(a[i], b[i])
	}
	return k.Kappa()
}

// Agreement counts two raters' labels item by item, for Cohen's kappa
// (CohenKappa) without keeping the labels: its memory is one count per
// label. The zero value is ready to use.
type Agreement[L comparable] struct {
	labels []L // in the order first seen, so that pe is summed in a fixed order
	at     map[L]int
	ca, cb []float64 // each rater's count of each label
	agree  float64
	n      float64
}

// Add counts an item labelled a by the first rater and b by the second.
func (k *Agreement[L]) Add(a, b L) {
	k.ca[k.index(a)]++
	k.cb[k.index(b)]++
	if a == b {
		k.agree++
	}
	k.n++
}

func (k *Agreement[L]) index(l L) int {
	if k.at == nil {
		k.at = map[L]int{}
	}
	i, ok := k.at[l]
	if !ok {
		i = len(k.labels)
		k.at[l], k.labels = i, append(k.labels, l)
		k.ca, k.cb = append(k.ca, 0), append(k.cb, 0)
	}
	return i
}

// Kappa returns Cohen's kappa of the items counted (see CohenKappa).
func (k *Agreement[L]) Kappa() (float64, error) {
	if k.n == 0 {
		return 0, undefined("no items")
	}
	po := k.agree / k.n
	pe := 0.0
	for i := range k.labels {
		pe += (k.ca[i] / k.n) * (k.cb[i] / k.n)
	}
	if 1-pe < 1e-12 {
		return 0, undefined("chance agreement is 1")
	}
	return (po - pe) / (1 - pe), nil
}
