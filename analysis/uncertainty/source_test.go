package uncertainty

import (
	"math"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

// filling returns a Source that copies scores into the buffer it is
// handed, never returning a slice of its own, and the set of buffers
// (by their first element) it was handed.
func filling(scores [][]float64) (Source, map[*float64]bool) {
	bufs := map[*float64]bool{}
	return func(s int, buf []float64) []float64 {
		bufs[&buf[0]] = true
		copy(buf, scores[s])
		return buf
	}, bufs
}

// TestNewFromByHand checks NewFrom, with a source that fills the
// buffers it is handed, against hand derivations.
//
// "one item per cluster": A = (3, 4, 5, 6), B = A - 1, C = 2, each item
// its own cluster. A's mean is 4.5, residuals ±1.5, ±0.5, squares
// summing to 5: SE² = 4/3·5/16 = 5/12. A - B is 1 everywhere: SE 0, 4
// nonzero cluster sums, 2 of the 16 sign patterns reach |T| = 4, p =
// 0.125. B - C = (0, 1, 2, 3), mean 1.5: 3 nonzero sums, 2 of 8 patterns
// reach 6, p = 0.25. Nothing is resolved, one tier.
//
// "labels with gaps": clusters 7, 7, 9, 9, 12, 12; A = (4, 2, 6, 6, -, -),
// B = (1, 1, 2, 2, 3, 3), C = (-, -, 0, 0, 1, 1). A: mean 18/4 = 4.5 over
// 2 clusters. A - B = (3, 1, 4, 4): mean 3, cluster residual sums -2 and
// +2, SE² = 2/1·8/4² = 1; cluster sums 4 and 8, p = 2/4 = 0.5. B - C =
// 2 on the 4 shared items: mean 2, SE 0, p = 0.5. A and C share one
// cluster, too few to compare: one tier. 3 clusters hold a score.
func TestNewFromByHand(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		name     string
		scores   [][]float64
		cluster  []int
		clusters int
		mean, se []float64 // of each system
		diff     []float64 // of each adjacent pair
		pairSE   []float64
		p        []float64
	}{
		{"one item per cluster", [][]float64{{3, 4, 5, 6}, {2, 3, 4, 5}, {2, 2, 2, 2}}, []int{0, 1, 2, 3}, 4,
			[]float64{4.5, 3.5, 2}, []float64{math.Sqrt(5.0 / 12), math.Sqrt(5.0 / 12), 0},
			[]float64{1, 1.5}, []float64{0, math.Sqrt(5.0 / 12)}, []float64{0.125, 0.25}},
		{"labels with gaps", [][]float64{{4, 2, 6, 6, nan, nan}, {1, 1, 2, 2, 3, 3}, {nan, nan, 0, 0, 1, 1}}, []int{7, 7, 9, 9, 12, 12}, 3,
			[]float64{4.5, 2, 0.5}, nil,
			[]float64{3, 2}, []float64{1, 0}, []float64{0.5, 0.5}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src, bufs := filling(tt.scores)
			b := NewFrom([]string{"A", "B", "C"}, src, tt.cluster, Config{Reps: 1000})
			if b.Clusters != tt.clusters {
				t.Errorf("clusters %d, want %d", b.Clusters, tt.clusters)
			}
			for s, m := range b.Means {
				near(t, "mean", m.Mean, tt.mean[s], 1e-12)
				if tt.se != nil {
					near(t, "SE", m.SE, tt.se[s], 1e-12)
				}
			}
			for i, p := range b.Pairs {
				if p.Err != nil {
					t.Fatalf("pair %d: %v", i, p.Err)
				}
				near(t, "difference", p.Diff, tt.diff[i], 1e-12)
				near(t, "pair SE", p.SE, tt.pairSE[i], 1e-12)
				near(t, "p", p.P, tt.p[i], 1e-12)
				if !p.Exact {
					t.Errorf("pair %d: sampled, want exact", i)
				}
			}
			if !slices.Equal(b.Groups, []int{1, 1, 1}) {
				t.Errorf("groups %v, want one tier", b.Groups)
			}
			// every call fills one of two buffers
			if len(bufs) > 2 {
				t.Errorf("the calls filled %d buffers, want at most 2", len(bufs))
			}
		})
	}
}

// TestNewFromSameAsNew checks that a board does not depend on how its
// scores are given: from a source that fills the buffers NewFrom reuses
// it is New's board of the scores in memory, to the last bit, on 15
// systems with missing items, sampled sign flips, tie groups that need
// several leaders and requested pairs.
func TestNewFromSameAsNew(t *testing.T) {
	names, scores, cluster := forecastLike()
	for s := range scores {
		for i := s; i < len(cluster); i += 13 {
			scores[s][i] = math.NaN()
		}
	}
	cfg := Config{Reps: 500, Unit: "tasks", Requested: [][2]string{{names[0], names[9]}, {names[3], names[2]}}}
	want := New(names, scores, cluster, cfg)
	src, _ := filling(scores)
	got := NewFrom(names, src, cluster, cfg)
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"means", got.Means, want.Means}, {"lo", got.Lo, want.Lo}, {"hi", got.Hi, want.Hi},
		{"ranks", got.Ranks, want.Ranks}, {"groups", got.Groups, want.Groups}, {"pairs", got.Pairs, want.Pairs},
		{"requested", got.RequestedTable("x")[0].Rows, want.RequestedTable("x")[0].Rows},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: from a source %v, from memory %v", c.what, c.got, c.want)
		}
	}
	if len(want.Groups) == 0 || slices.Max(want.Groups) < 3 {
		t.Errorf("groups %v: want several tiers", want.Groups)
	}
}

// TestNewFromMemory checks that NewFrom holds a few systems' items, not
// all: 20 systems of 1<<17 items (1 MB each) in 256 clusters. All
// systems at once would allocate 20 MB, and a cluster label per scored
// item another 20 MB; the bound is 8 MB.
func TestNewFromMemory(t *testing.T) {
	const S, N, G = 20, 1 << 17, 256
	names := make([]string, S)
	for s := range names {
		names[s] = string(rune('A' + s))
	}
	cluster := make([]int, N)
	for i := range cluster {
		cluster[i] = i / (N / G)
	}
	src := func(s int, buf []float64) []float64 {
		for i := range buf {
			buf[i] = float64((i*(s+3))%11) - 0.1*float64(s)
		}
		return buf
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := NewFrom(names, src, cluster, Config{Reps: 20})
	runtime.ReadMemStats(&after)
	if b.Clusters != G || len(b.Groups) != S {
		t.Fatalf("%d clusters, %d groups", b.Clusters, len(b.Groups))
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("NewFrom allocated %.1f MB for %d systems of %d items, want at most 8 MB", float64(got)/(1<<20), S, N)
	}
}
