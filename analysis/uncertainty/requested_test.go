package uncertainty

import (
	"math"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// TestRequestedByHand checks a pair asked on request against a hand
// derivation. Three systems, four clusters of one item each:
// A = (3, 4, 5, 6), B = (2, 3, 4, 5), C = (2, 2, 2, 2), ranked A, B, C.
// A and C are not adjacent. A - C = (1, 2, 3, 4): mean 2.5, residuals
// (-1.5, -0.5, 0.5, 1.5), SE² = G/(G-1)·Σ r²/N² = 4/3·5/16 = 5/12,
// SE = 0.645497. Sign flips of the cluster sums (1, 2, 3, 4): of the
// 2^4 = 16 patterns only all plus and all minus reach |T| = 10, so
// p = 2/16 = 0.125, exact. C - A is the same with the sign of the
// difference reversed. Holm over the two requested pairs, both 0.125:
// 2·0.125 = 0.25 for each. Every resampled mean of the differences is a
// mean of values in [1, 4], so the interval lies within [1, 4].
func TestRequestedByHand(t *testing.T) {
	b := New([]string{"A", "B", "C"}, [][]float64{{3, 4, 5, 6}, {2, 3, 4, 5}, {2, 2, 2, 2}}, []int{0, 1, 2, 3},
		Config{Reps: 1000, Unit: "tasks", Decimals: 1, Points: "points", Requested: [][2]string{{"A", "C"}, {"C", "A"}}})
	ts := b.RequestedTable("bench")
	if len(ts) != 1 {
		t.Fatalf("RequestedTable: %d tables", len(ts))
	}
	tab := ts[0]
	if tab.Name != "requested_pairs" || len(tab.Rows) != 2 {
		t.Fatalf("table %q with %d rows", tab.Name, len(tab.Rows))
	}
	for i, want := range []struct {
		a, b string
		diff float64
	}{{"A", "C", 2.5}, {"C", "A", -2.5}} {
		r := tab.Rows[i]
		at := func(name string) analysis.Cell { return r[tab.Col(name)] }
		if at("system").Text != want.a || at("next").Text != want.b {
			t.Errorf("row %d: %s - %s, want %s - %s", i, at("system").Text, at("next").Text, want.a, want.b)
		}
		near(t, "difference", at("difference").Num, want.diff, 1e-12)
		near(t, "SE", at("se_cluster").Num, math.Sqrt(5.0/12), 1e-12)
		near(t, "p", at("p").Num, 0.125, 1e-12)
		near(t, "p Holm", at("p_holm").Num, 0.25, 1e-12)
		if at("p_method").Text != "exact" || at("resolved").Text != "no" || at("shared").Num != 4 || at("clusters").Num != 4 {
			t.Errorf("row %d: %v", i, r)
		}
		lo, hi := at("ci_lo").Num*math.Copysign(1, want.diff), at("ci_hi").Num*math.Copysign(1, want.diff)
		if lo > hi {
			lo, hi = hi, lo
		}
		if lo < 1 || hi > 4 || lo >= 2.5 || hi <= 2.5 {
			t.Errorf("row %d: interval [%g, %g] of |difference| not inside [1, 4] around 2.5", i, lo, hi)
		}
	}
}

// TestRequestedAdjacent: a requested pair of adjacent systems has the
// same numbers as its row of the pairs table (the same cluster draws and
// sign patterns), here with sampled sign flips (80 clusters) and missing
// items; only the Holm adjustment, over another family, differs.
func TestRequestedAdjacent(t *testing.T) {
	r := stats.NewRand(3)
	const G, per = 80, 3
	names := []string{"A", "B", "C", "D"}
	scores := make([][]float64, len(names))
	cluster := make([]int, G*per)
	for i := range cluster {
		cluster[i] = i / per
	}
	for s := range scores {
		scores[s] = make([]float64, G*per)
		for i := range scores[s] {
			scores[s][i] = float64(len(names)-s)*0.3 + r.Float64()*3
			if r.IntN(10) == 0 {
				scores[s][i] = math.NaN()
			}
		}
	}
	b := New(names, scores, cluster, Config{Reps: 2000, Unit: "tasks", Decimals: 2, Points: "points",
		Requested: [][2]string{{"A", "B"}, {"B", "C"}, {"C", "D"}}})
	pairs := b.PairTable("bench", "pairs")
	req := b.RequestedTable("bench")[0]
	for i, row := range pairs.Rows {
		if row[pairs.Col("p_method")].Text != "sampled" {
			t.Fatalf("pair %d: p method %q, want sampled", i, row[pairs.Col("p_method")].Text)
		}
		for _, col := range []string{"system", "next", "shared", "clusters", "difference", "ci_lo", "ci_hi", "se_cluster", "p", "p_method"} {
			if got, want := req.Rows[i][req.Col(col)], row[pairs.Col(col)]; got != want {
				t.Errorf("pair %d, %s: requested %v, adjacent %v", i, col, got, want)
			}
		}
	}
}

func TestRequestedErrors(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{1, 2}, {0, 1}}, []int{0, 1}, Config{Reps: 10, Requested: [][2]string{{"A", "Z"}}})
	ts := b.RequestedTable("bench")
	if r := ts[0].Rows[0]; r[0].Text != "A" || r[1].Text != "Z" || r[4].IsNum || len(b.Names) != 2 {
		t.Errorf("unranked pair: row %v, names %v", r, b.Names)
	}
	none := New([]string{"A", "B"}, [][]float64{{1, 2}, {0, 1}}, []int{0, 1}, Config{Reps: 10})
	if none.RequestedTable("bench") != nil {
		t.Error("nothing requested, a table returned")
	}
}

func TestParsePairs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want [][2]string
		err  string
	}{
		{"", nil, ""},
		{"A,B", [][2]string{{"A", "B"}}, ""},
		{" A , B ; C,D", [][2]string{{"A", "B"}, {"C", "D"}}, ""},
		{"A", nil, "bad pair"},
		{"A,B,C", nil, "bad pair"},
		{"A,", nil, "bad pair"},
		{"A,B;", nil, "bad pair"},
		{"A,A", nil, "itself"},
		{"A,B;A,B", nil, "twice"},
	} {
		got, err := ParsePairs("bench", analysis.Settings{KnobPairs: c.in})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "bench: knob pairs") {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || len(got) != len(c.want) {
			t.Errorf("%q: %v, %v", c.in, got, err)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: %v, want %v", c.in, got, c.want)
			}
		}
	}
}

// BenchmarkCompare measures one requested pair at FinDeepForecast's full
// scale (the clusters of forecastLike) with 10,000 resamples: a cluster
// bootstrap and a sampled sign-flip test of its own.
func BenchmarkCompare(b *testing.B) {
	names, scores, cluster := forecastLike()
	bd := New(names, scores, cluster, Config{Reps: DefaultReps, Unit: "tasks", Decimals: 1, Requested: [][2]string{{names[0], names[len(names)-1]}}})
	b.ResetTimer()
	for range b.N {
		bd.compare(0, len(names)-1)
	}
}
