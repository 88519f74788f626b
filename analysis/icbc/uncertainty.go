package icbc

import (
	"math"
	"slices"

	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// A ratio is one part of the overall score: weight × Σa / Σb over the
// tasks, with a[i] and b[i] task i's parts (0 for a task outside it).
type ratio struct {
	weight float64
	a, b   []float64
}

// linearize returns pseudo-values of n items whose item mean is theta and
// whose residuals are the items' linearised influence on Σ_k w_k·A_k/B_k:
// item i gets theta + n·Σ_k w_k·(a_ki - R_k·b_ki)/B_k, R_k = A_k/B_k.
// Their CR1 standard error is the delta-method (Taylor-linearised)
// cluster-robust error of the ratio estimator, the survey-sampling
// standard for a ratio of totals; a part with B_k = 0 adds nothing.
func linearize(theta float64, parts []ratio, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = theta
	}
	for _, p := range parts {
		var A, B float64
		for i := range p.a {
			A += p.a[i]
			B += p.b[i]
		}
		if B == 0 {
			continue
		}
		R := A / B
		for i := range p.a {
			v[i] += float64(n) * p.weight * (p.a[i] - R*p.b[i]) / B
		}
	}
	return v
}

// clusters labels the tasks, objective ones first (in r.obj order), then
// subjective ones: a task's kind and ID, so that the English and Chinese
// versions of a task that has both (the same ID in both tracks) form one
// cluster and are resampled together. In the public set no ID is in both
// tracks, so every task is its own cluster.
func (r *run) clusters() []int {
	var labels []string
	for _, o := range r.obj {
		labels = append(labels, "objective/"+o.ID)
	}
	for _, s := range r.sub {
		labels = append(labels, "subjective/"+s.ID)
	}
	out, _ := stats.ClusterIndex(labels)
	return out
}

// board computes the clustered statistics of the overall ranking. The
// overall score is the mean of the tracks' (objective + subjective) / 2,
// a weighted sum of ratios of task sums (objective accuracy, expert,
// citation and source averages per track, see finish), so each task's
// item is its linearised influence (linearize) and tasks are clustered by
// clusters. theta holds each ranked system's overall score.
func (r *run) board(ranking []string, theta map[string]float64) *uncertainty.Board {
	no, n := len(r.obj), len(r.obj)+len(r.sub)
	w := r.o.weights
	scores := make([][]float64, len(ranking))
	for k, name := range ranking {
		si := slices.IndexFunc(r.systems, func(s System) bool { return s.Name == name })
		sys := &r.systems[si]
		var parts []ratio
		for _, l := range langs {
			part := func(weight float64) ratio {
				return ratio{weight: weight / 4, a: make([]float64, n), b: make([]float64, n)}
			}
			obj, ex, cit, src := part(100), part(w.Expert), part(100*w.Citation), part(100*w.Source)
			for i, o := range r.obj {
				if o.Language == l {
					obj.a[i], obj.b[i] = r.objCells[si][i].c, r.objCells[si][i].n
				}
			}
			for i, s := range r.sub {
				if s.Language != l {
					continue
				}
				x := &r.subCells[si][i]
				ex.a[no+i], ex.b[no+i], cit.a[no+i], cit.b[no+i] = r.chosen(x)
				src.a[no+i], src.b[no+i] = x.src, x.sN
			}
			parts = append(parts, obj, ex)
			if sys.Citation {
				parts = append(parts, cit)
			}
			if sys.Source {
				parts = append(parts, src)
			}
		}
		scores[k] = linearize(theta[name], parts, n)
		if math.IsNaN(theta[name]) {
			for i := range scores[k] {
				scores[k][i] = math.NaN()
			}
		}
	}
	return uncertainty.New(ranking, scores, r.clusters(), uncertainty.Config{Reps: r.o.clusterReps, Unit: "tasks", Decimals: 2, Points: "points", Requested: r.o.pairs})
}

// objCounts returns system si's correct and scored objective tasks in
// track l.
func (r *run) objCounts(si int, l string) (correct, n int) {
	for i, o := range r.obj {
		if o.Language == l {
			correct += int(r.objCells[si][i].c)
			n += int(r.objCells[si][i].n)
		}
	}
	return correct, n
}
