package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/finrepro/finrepro/analysis/stats"
)

// refBootstrap is board.bootstrap as it was before it packed the counts,
// kept as the reference TestBootstrapMatchesRef compares it with.
func refBootstrap(b *board) (lo, hi []float64, ok []bool) {
	ns := b.nsys()
	vals := make([][]float64, ns)
	stats.Bootstrap(len(b.in.Tasks), bootReps, bootSeed, bootLevel, func(idx []int) float64 {
		for s := range ns {
			o := b.out[s]
			var c, n int
			for _, i := range idx {
				if o[i] != notScored {
					n++
					if o[i] == correct {
						c++
					}
				}
			}
			if n > 0 {
				vals[s] = append(vals[s], 100*float64(c)/float64(n))
			}
		}
		return 0
	})
	lo, hi, ok = make([]float64, ns), make([]float64, ns), make([]bool, ns)
	a := (1 - bootLevel) / 2
	for s, v := range vals {
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		lo[s], hi[s], ok[s] = stats.Quantile(v, a), stats.Quantile(v, 1-a), true
	}
	return lo, hi, ok
}

func TestBootstrapMatchesRef(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, narrow := range []int{narrowTasks, 0} {
		for _, shape := range [][2]int{{1, 2}, {3, 5}, {14, 300}, {5, 40}} {
			ns, nt := shape[0], shape[1]
			b := &board{in: &Inputs{Config: &Config{Systems: make([]System, ns)}, Tasks: make([]*Task, nt)}}
			b.out = make([][]int8, ns)
			for s := range ns {
				b.out[s] = make([]int8, nt)
				for i := range nt {
					if s != 1 { // system 1 is never scored
						b.out[s][i] = int8(r.IntN(3) - 1)
					} else {
						b.out[s][i] = notScored
					}
				}
			}
			old := narrowTasks
			narrowTasks = narrow
			lo, hi, ok := b.bootstrap()
			narrowTasks = old
			rlo, rhi, rok := refBootstrap(b)
			for s := range ns {
				if ok[s] != rok[s] || math.Float64bits(lo[s]) != math.Float64bits(rlo[s]) || math.Float64bits(hi[s]) != math.Float64bits(rhi[s]) {
					t.Fatalf("narrow %d, %d systems, %d tasks, system %d: %v %v %v, want %v %v %v", narrow, ns, nt, s, lo[s], hi[s], ok[s], rlo[s], rhi[s], rok[s])
				}
			}
		}
	}
}
