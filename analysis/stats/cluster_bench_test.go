package stats

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkClusterBootstrap is the cost of one system's 10,000-resample
// cluster bootstrap interval on a full-scale input (64 clusters of 247
// items, FinDeepResearch's size), grouping included.
func BenchmarkClusterBootstrap(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var y []float64
	var g []int
	for c := range 64 {
		for range 247 {
			y = append(y, r.Float64())
			g = append(g, c)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := ClusterBootstrap(y, g, 10000, 1, 0.95); err != nil {
			b.Fatal(err)
		}
	}
}
