package scores

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// fullScale returns a synthetic matrix of FinDeepResearch's full size: 64
// companies (clusters) of 247 grading items, 14 systems, a company effect
// and about 2 % of cells missing.
func fullScale() *Matrix {
	const clusters, items, systems = 64, 247, 14
	r := rand.New(rand.NewPCG(64, 247))
	m := &Matrix{File: "full-scale-synthetic.csv"}
	for s := range systems {
		m.Systems = append(m.Systems, fmt.Sprintf("System-%02d (synthetic)", s))
		m.Scores = append(m.Scores, nil)
	}
	for c := range clusters {
		u := r.NormFloat64() * 0.15
		for i := range items {
			m.Tasks = append(m.Tasks, fmt.Sprintf("synthetic-%02d-%03d", c, i))
			m.Cluster = append(m.Cluster, fmt.Sprintf("company-%02d", c))
			for s := range systems {
				v := math.Max(0, math.Min(1, 0.3+0.02*float64(s)+u+r.NormFloat64()*0.2))
				if r.IntN(50) == 0 {
					v = math.NaN()
				}
				m.Scores[s] = append(m.Scores[s], v)
			}
		}
	}
	return m
}

// BenchmarkAnalyseFullScale is the cost of every table of Analyse with
// 10,000 cluster-bootstrap resamples on a full-scale input (64 clusters x
// 247 items x 14 systems): 14 leaderboard intervals, the rank intervals,
// the 13 adjacent pairs (bootstrap and sign-flip test each) and the tie
// groups' pairs.
func BenchmarkAnalyseFullScale(b *testing.B) {
	m := fullScale()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyse(m, Config{Reps: 10000, Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
