package stats_test

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis/stats"
)

// Four clusters of four 0/1 items with 3, 1, 4 and 1 successes: the mean
// is 9/16, the CR1 standard error 3/16 (see TestClusterMeanByHand), and
// clustering inflates the variance by a design effect of 2.14.
func ExampleNewClusterMean() {
	y := []float64{1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0}
	g := []int{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}
	m, err := stats.NewClusterMean(y, g)
	if err != nil {
		panic(err)
	}
	lo, hi := m.Interval(0.95)
	fmt.Printf("mean %.4f, SE %.4f (naive %.4f), design effect %.2f, G* %.0f\n", m.Mean, m.SE, m.NaiveSE, m.DesignEffect, m.EffectiveClusters)
	fmt.Printf("95%% CR1 t interval [%.4f, %.4f]\n", lo, hi)
	// Output:
	// mean 0.5625, SE 0.1875 (naive 0.1281), design effect 2.14, G* 4
	// 95% CR1 t interval [-0.0342, 1.1592]
}

// Newcombe (1998), example (d): 1 success in 29 trials.
func ExampleWilson() {
	lo, hi, err := stats.Wilson(1, 29, 0.95)
	if err != nil {
		panic(err)
	}
	fmt.Printf("[%.4f, %.4f]\n", lo, hi)
	// Output: [0.0061, 0.1718]
}

// Three adjacent pairs of a ranking: Holm multiplies the smallest p-value
// by 3, the next by 2 and the largest by 1, keeping the order.
func ExampleHolm() {
	fmt.Printf("%.3f\n", stats.Holm([]float64{0.02, 0.01, 0.04}))
	// Output: [0.040 0.030 0.040]
}
