package hisrubric

import (
	"math"

	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// board computes the clustered statistics of the accuracy ranking. The
// unit of sampling is the company: each of a system's complete reports
// contributes its grading items, each weighted (uncertainty.Weighted) so
// that the item mean is the mean of report accuracies, and items are
// clustered by company. With one report per company and system, the CR1
// error is the error over companies, the naive one that of items treated
// as independent, and their ratio squared the design effect of grading
// 247 items of one company.
func (r *run) board(ranking []string, per [][]*report) *uncertainty.Board {
	nItems, nCo := len(r.in.Items), len(r.in.Companies)
	w := make([]float64, nItems)
	for i := range r.in.Items {
		w[i] = r.opt.weights[r.in.Items[i].Capability]
	}
	cluster := make([]int, nCo*nItems)
	for ci := range nCo {
		for i := range nItems {
			cluster[ci*nItems+i] = ci
		}
	}
	index := map[string]int{}
	for si, s := range r.in.Config.Systems {
		index[s.Name] = si
	}
	// Each system's items are made when the board asks for them, in its
	// buffer: at 8x the full-scale demo, all systems' items at once held
	// 19 MB, and a report's weighted items apart from the buffer 6.5 MB
	// of garbage.
	scores := func(k int, y []float64) []float64 {
		for i := range y {
			y[i] = math.NaN()
		}
		for _, rep := range per[index[ranking[k]]] {
			uncertainty.Weighted(y[rep.ci*nItems:], r.itemScores(rep), w, 100)
		}
		return y
	}
	return uncertainty.NewFrom(ranking, scores, cluster, uncertainty.Config{Reps: r.opt.reps, Unit: "companies", Decimals: 1, Points: "points", Requested: r.opt.pairs})
}
