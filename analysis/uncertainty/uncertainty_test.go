package uncertainty

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f", what, got, want)
	}
}

func TestWeighted(t *testing.T) {
	// x = (1, 0, 0.5) with weights (1, 1, 2): the weighted mean is
	// (1 + 0 + 1)/4 = 0.5, 50 points; the items are 3·w·x/4·100 =
	// (75, 0, 75), whose mean is 50.
	y := Weighted(nil, []float64{1, 0, 0.5}, []float64{1, 1, 2}, 100)
	for i, want := range []float64{75, 0, 75} {
		near(t, "item", y[i], want, 1e-12)
	}
	// Weighted writes the same items at the start of a longer dst
	// and leaves the rest alone.
	dst := []float64{-1, -1, -1, -1}
	if got := Weighted(dst, []float64{1, 0, 0.5}, []float64{1, 1, 2}, 100); !slices.Equal(got, []float64{75, 0, 75}) || dst[3] != -1 {
		t.Errorf("Weighted = %v, dst %v, want 75 0 75 in dst, -1 after", got, dst)
	}
}

// TestBoardByHand checks every statistic of a board against a hand
// derivation. A scores 100 on both items of cluster 0 and 0 on both of
// cluster 1, B scores 0 everywhere.
//
// A: mean 50; cluster residual sums +100 and -100, so
// SE² = G/(G-1)·Σ r_g²/N² = 2·20000/16 = 2500, SE = 50. Naive: s² =
// 4·2500/3, SE² = s²/4 = 833.33, SE = 28.868; design effect 2500/833.33 =
// 3; G* = (2²+2²)²/(2⁴+2⁴) = 2. Treating the 4 items as 4 clusters would
// give SE² = 4/3·4·2500/16 = 833.33, the naive one: the cluster is the
// unit.
//
// A - B: the differences are A's scores, so SE 50; the sign-flip test
// of cluster sums (200, 0) has all 4 patterns with |T| = 200: p = 1,
// exact, so A and B share tier 1. Minimum detectable difference:
// (t_{0.975,1} + t_{0.8,1})·50 = (12.7062 + 1.3764)·50 = 704.13.
func TestBoardByHand(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{100, 100, 0, 0}, {0, 0, 0, 0}}, []int{0, 0, 1, 1},
		Config{Reps: 1000, Unit: "companies", Decimals: 1, Points: "points"})
	m := b.Means[0]
	near(t, "mean", m.Mean, 50, 1e-12)
	near(t, "SE", m.SE, 50, 1e-9)
	near(t, "naive SE", m.NaiveSE, math.Sqrt(2500.0/3), 1e-9)
	near(t, "design effect", m.DesignEffect, 3, 1e-9)
	near(t, "effective clusters", m.EffectiveClusters, 2, 1e-12)
	p := b.Pairs[0]
	if p.Err != nil || p.P != 1 || !p.Exact || p.Holm != 1 {
		t.Errorf("pair %+v", p)
	}
	near(t, "pair SE", p.SE, 50, 1e-9)
	if b.Groups[0] != 1 || b.Groups[1] != 1 {
		t.Errorf("groups %v, want 1 1", b.Groups)
	}
	mdd, ok := b.mdd, b.mddOK
	near(t, "minimum detectable difference", mdd, 704.13, 0.01)
	if !ok || !strings.Contains(b.PowerNote(), "differences below 704.1 points are not resolvable with 2 companies") {
		t.Errorf("power note %q", b.PowerNote())
	}
	cells := b.Cells("A")
	cols := b.Columns()
	if len(cells) != len(cols) {
		t.Fatalf("%d cells, %d columns", len(cells), len(cols))
	}
	for i, c := range cols {
		if c.Name == "se_cluster" && cells[i].Num != m.SE {
			t.Errorf("se_cluster cell %+v", cells[i])
		}
	}
	if c := b.Tier("nobody"); !c.Undef {
		t.Errorf("tier of an unknown system %+v", c)
	}
	pt := b.PairTable("x", "pairs")
	if len(pt.Rows) != 1 || pt.Rows[0][pt.Col("resolved")].Text != "no" {
		t.Errorf("pair table rows %v", pt.Rows)
	}
}

func TestNoResamples(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{1, 0, 1}, {0, 0, 1}}, []int{0, 1, 2}, Config{Reps: 0, Unit: "tasks"})
	if c := b.Tier("A"); !c.Undef {
		t.Errorf("tier without resamples %+v", c)
	}
	if b.Means[0].SE == 0 {
		t.Error("the analytic error needs no resample")
	}
	if pt := b.PairTable("x", "pairs"); !pt.Rows[0][pt.Col("p")].Undef {
		t.Errorf("p without resamples %+v", pt.Rows[0])
	}
}

func TestProportionCells(t *testing.T) {
	// Wald 2 of 4: 0.5 ± 1.959964·√(0.25/4) = 0.5 ± 0.489991.
	c := ProportionCells(2, 4, true)
	near(t, "Wald lo", c[2].Num, 1.0009, 1e-4)
	near(t, "Wald hi", c[3].Num, 98.9991, 1e-4)
	// Wilson 0 of 10: (0, 0.2775), Newcombe (1998) Table I, example (d).
	c = ProportionCells(0, 10, false)
	near(t, "Wilson lo", c[0].Num, 0, 0)
	near(t, "Wilson hi", c[1].Num, 27.75, 0.01)
	if c := ProportionCells(0, 0, true); !c[0].Undef || !c[2].Undef {
		t.Errorf("no trials %+v", c)
	}
}

func TestTerminal(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{100, 100, 0, 0}, {0, 0, 0, 0}}, []int{0, 0, 1, 1}, Config{Reps: 200, Unit: "companies", Decimals: 1})
	tb := &analysis.Table{Name: "h", Columns: append([]analysis.Column{{Name: "system"}, {Name: "score"}}, b.Columns()...)}
	for _, n := range []string{"B", "A"} {
		score := 0.0
		if n == "A" {
			score = 50
		}
		tb.AddRow(append([]analysis.Cell{analysis.Text(n), analysis.Number(score)}, b.Cells(n)...)...)
	}
	res := &analysis.Result{Headline: "h", Tables: []*analysis.Table{tb}, Ranking: []string{"A", "B"}, Scores: map[string]float64{"A": 50, "B": 0}}
	out := Terminal(res)
	if out.Columns[0].Header() != "rank (95%)" || out.Col("rank_lo") >= 0 || out.Col("se_naive") >= 0 || out.Col("se_cluster") < 0 {
		t.Fatalf("columns %v", out.Columns)
	}
	// The rows follow the ranking (the table listed B first), and the
	// score and its cluster interval come right after the system.
	if a, b := out.Rows[0][1].Text, out.Rows[1][1].Text; a != "A" || b != "B" {
		t.Errorf("rows %s, %s; want A, B", a, b)
	}
	if got := []string{out.Columns[1].Name, out.Columns[2].Name, out.Columns[3].Name}; !slices.Equal(got, []string{"system", "score", "cluster_lo"}) {
		t.Errorf("first columns %v", got)
	}
	// A ranks first in every resample but those drawing cluster 1 twice,
	// where both score 0 and share rank 1: A is 1 (1-1); B is 2 and ties
	// A in about a quarter of the resamples, so its interval is 1-2.
	if got := out.Rows[0][0].Text; got != "1 (1-1)" {
		t.Errorf("A %q", got)
	}
	if got := out.Rows[1][0].Text; got != "2 (1-2)" {
		t.Errorf("B %q", got)
	}
}

// TestSmallBoards checks the edges: no system, one system, no scored
// item and one cluster give boards whose cells say why they are empty.
func TestSmallBoards(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name    string
		names   []string
		scores  [][]float64
		cluster []int
	}{
		{"no system", nil, nil, []int{0, 1}},
		{"one system", []string{"A"}, [][]float64{{1, 2, 3}}, []int{0, 1, 2}},
		{"nothing scored", []string{"A", "B"}, [][]float64{{nan, nan}, {nan, nan}}, []int{0, 1}},
		{"one cluster", []string{"A", "B"}, [][]float64{{1, 2}, {0, 1}}, []int{4, 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := New(c.names, c.scores, c.cluster, Config{Reps: 100, Unit: "tasks"})
			for _, n := range c.names {
				cells := b.Cells(n)
				if len(cells) != len(b.Columns()) {
					t.Fatalf("%d cells", len(cells))
				}
			}
			b.PairTable("x", "pairs")
			if len(c.names) > 1 && c.name != "one system" {
				if tier := b.Tier("A"); c.name == "nothing scored" && !tier.Undef {
					t.Errorf("tier %+v, want undefined", tier)
				}
				if c.name == "one cluster" && !b.Cells("A")[2].Undef {
					t.Errorf("interval of one cluster %+v, want undefined", b.Cells("A")[2])
				}
			}
		})
	}
}

// TestTerminalSharedRank checks that exactly tied systems show their
// shared rank as "=1" next to the interval, as every other output does.
func TestTerminalSharedRank(t *testing.T) {
	b := New([]string{"A", "B"}, [][]float64{{100, 0}, {0, 100}}, []int{0, 1}, Config{Reps: 50, Unit: "companies", Decimals: 1})
	tb := &analysis.Table{Name: "h", Columns: append([]analysis.Column{{Name: "system"}, {Name: "score"}}, b.Columns()...)}
	for _, n := range []string{"A", "B"} {
		tb.AddRow(append([]analysis.Cell{analysis.Text(n), analysis.Number(50)}, b.Cells(n)...)...)
	}
	res := &analysis.Result{Headline: "h", Tables: []*analysis.Table{tb}, Ranking: []string{"A", "B"}, Scores: map[string]float64{"A": 50, "B": 50}}
	out := Terminal(res)
	for i, r := range out.Rows {
		if !strings.HasPrefix(r[0].Text, "=1") {
			t.Errorf("row %d rank %q, want the shared rank =1", i, r[0].Text)
		}
	}
}

// TestPairedShift: in each of 8 clusters of 5 items, A is B plus 0.1, so
// the paired difference is 0.1 with no uncertainty whatever the items'
// own spread, and an item B did not answer is left out of the pair. The
// 8 cluster sums are all positive: of the 2^8 sign patterns only the
// observed one and its negation reach |T|, an exact p of 2/256.
func TestPairedShift(t *testing.T) {
	var a, b []float64
	var g []int
	for c := range 8 {
		for i := range 5 {
			v := float64(c) + float64(i)*0.37
			a, b, g = append(a, v+0.1), append(b, v), append(g, c)
		}
	}
	a, b, g = append(a, 100), append(b, math.NaN()), append(g, 3)
	p := New([]string{"A", "B"}, [][]float64{a, b}, g, Config{Reps: 1000}).Pairs[0]
	if p.Err != nil {
		t.Fatal(p.Err)
	}
	near(t, "difference", p.Diff, 0.1, 1e-9)
	near(t, "SE", p.SE, 0, 1e-9)
	near(t, "lo", p.Lo, 0.1, 1e-9)
	near(t, "hi", p.Hi, 0.1, 1e-9)
	near(t, "p", p.P, 2.0/256, 1e-12)
	if p.Items != 40 || p.Clusters != 8 || !p.Exact {
		t.Errorf("pair %+v, want 40 items in 8 clusters, exact", p)
	}
}

// TestRankIntervals checks the rank intervals where the bootstrap's
// answer is known. In 30 clusters of 3 items, B is 0.0001 above A in
// every cluster (their ±0.01 noise cancels within a cluster) and C is far
// below both; D answers only in clusters 28 and 29 (score 10), so it is
// best in every resample that draws one of them (1-(28/30)^30 ≈ 87 %)
// and last in the others.
func TestRankIntervals(t *testing.T) {
	var a, b, c []float64
	var g []int
	for k := range 30 {
		for i := range 3 {
			v := float64(k%5) * 0.1
			e := 0.01 * float64((k*3+i)%3-1)
			a, b, c, g = append(a, v+e), append(b, v-e+0.0001), append(c, v-1), append(g, k)
		}
	}
	d := make([]float64, len(a))
	for i := range d {
		d[i] = math.NaN()
		if g[i] >= 28 {
			d[i] = 10
		}
	}
	ranks := func(scores ...[]float64) []stats.RankInterval {
		names := make([]string, len(scores))
		for i := range names {
			names[i] = string(rune('A' + i))
		}
		return New(names, scores, g, Config{Reps: 2000}).Ranks
	}
	got := ranks(a, b, c, d)
	want := []stats.RankInterval{{Rank: 3, Lo: 2, Hi: 3}, {Rank: 2, Lo: 1, Hi: 2}, {Rank: 4, Lo: 3, Hi: 4}, {Rank: 1, Lo: 1, Hi: 4}}
	if !slices.Equal(got, want) {
		t.Errorf("A, B, C, D: %+v, want %+v", got, want)
	}
	// E and F differ by +0.02 in even clusters and -0.02 in odd ones:
	// equal on the full data, either ahead in about half the resamples
	var e, f []float64
	for k := range g {
		s := 0.01 * float64(1-2*(g[k]%2))
		e, f = append(e, a[k]+s), append(f, a[k]-s)
	}
	if got, tie := ranks(e, f), (stats.RankInterval{Rank: 1, Lo: 1, Hi: 2}); got[0] != tie || got[1] != tie {
		t.Errorf("E and F: %+v, want both %+v", got, tie)
	}
	// equal means share the better rank
	if got, one := ranks(a, a), (stats.RankInterval{Rank: 1, Lo: 1, Hi: 1}); got[0] != one || got[1] != one {
		t.Errorf("equal systems: %+v", got)
	}
}

// TestCell checks the reason an undefined cell gives: a statistic's
// UndefinedError gives its reason, also when wrapped, another error its
// text, and no error the number.
func TestCell(t *testing.T) {
	u := &stats.UndefinedError{Reason: "fewer than 2 clusters"}
	for _, c := range []struct {
		err  error
		want analysis.Cell
	}{
		{nil, analysis.Number(1.5)},
		{u, analysis.Undefined("fewer than 2 clusters")},
		{fmt.Errorf("pair A - B: %w", u), analysis.Undefined("fewer than 2 clusters")},
		{errors.New("no task answered by every system"), analysis.Undefined("no task answered by every system")},
	} {
		if got := Cell(1.5, c.err); got != c.want {
			t.Errorf("Cell(1.5, %v) = %+v, want %+v", c.err, got, c.want)
		}
	}
}
