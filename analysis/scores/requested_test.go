package scores

import (
	"math"
	"strings"
	"testing"
)

// TestRequestedByHand checks a pair asked on request against a hand
// derivation. Four tasks in two clusters (x: t1, t2; y: t3, t4):
//
//	task  A  B  C
//	t1    4  3  1
//	t2    4  3  1
//	t3    2  2  1
//	t4    2  2  NA
//
// Means: A 3, B 2.5, C 1, so C is not adjacent to A. A - C on the three
// shared tasks: (3, 3, 1), mean 7/3; residuals (2/3, 2/3, -4/3), cluster
// sums 4/3 (x) and -4/3 (y); SE² = G/(G-1)·Σ r²/N² = 2·(32/9)/9 = 64/81,
// SE = 8/9. Sign flips of the cluster sums of differences (6, 1): the 4
// patterns give |T| = 7, 5, 5, 7, so p = 2/4 = 0.5, exact. C - A is the
// same with the difference negated; Holm over the two: min(1, 2·0.5) = 1.
func TestRequestedByHand(t *testing.T) {
	const in = "task,cluster,A,B,C\nt1,x,4,3,1\nt2,x,4,3,1\nt3,y,2,2,1\nt4,y,2,2,NA\n"
	m, err := Parse("hand.csv", strings.NewReader(in), Options{TaskCol: "task", ClusterCol: "cluster"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyse(m, Config{Reps: 1000, Seed: 1, Pairs: [][2]string{{"A", "C"}, {"C", "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	tab := res.Table("requested_pairs")
	if tab == nil || len(tab.Rows) != 2 {
		t.Fatalf("requested_pairs: %v", tab)
	}
	for i, sign := range []float64{1, -1} {
		if got := cell(t, tab, i, "shared").Num; got != 3 {
			t.Errorf("row %d: shared %g, want 3", i, got)
		}
		for _, c := range []struct {
			col  string
			want float64
		}{{"difference", sign * 7 / 3}, {"se_cluster", 8.0 / 9}, {"p", 0.5}, {"p_holm", 1}, {"clusters", 2}} {
			if got := cell(t, tab, i, c.col).Num; math.Abs(got-c.want) > 1e-12 {
				t.Errorf("row %d: %s = %g, want %g", i, c.col, got, c.want)
			}
		}
		if cell(t, tab, i, "p_method").Text != "exact" || cell(t, tab, i, "resolved").Text != "no" {
			t.Errorf("row %d: %v", i, tab.Rows[i])
		}
	}
	if tab.Rows[0][0].Text != "A" || tab.Rows[0][1].Text != "C" || tab.Rows[1][0].Text != "C" {
		t.Errorf("rows not in the order asked: %v", tab.Rows)
	}
	// the terminal narrows it like the adjacent pairs
	found := false
	for _, tt := range Terminal(res) {
		if tt.Name == "pairs_compact" && tt.Title == "Paired comparisons on request" && tt.Rows[0][0].Text == "A - C" {
			found = true
		}
	}
	if !found {
		t.Error("no compact requested pairs on the terminal")
	}
	for _, c := range []struct {
		pairs [][2]string
		want  string
	}{
		{[][2]string{{"A", "Z"}}, `hand.csv: pair A,Z: no system "Z"`},
		{[][2]string{{"A", "A"}}, "itself"},
		{[][2]string{{"A", "B"}, {"A", "B"}}, "twice"},
	} {
		if _, err := Analyse(m, Config{Reps: 10, Pairs: c.pairs}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.pairs, err, c.want)
		}
	}
}
