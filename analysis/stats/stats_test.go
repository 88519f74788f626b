package stats

import (
	"errors"
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRanks(t *testing.T) {
	got := Ranks([]float64{10, 20, 20, 5, 20})
	want := []float64{2, 4, 4, 1, 4} // 20s span ranks 3..5 -> 4
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranks = %v, want %v", got, want)
		}
	}
}

func TestCorrelations(t *testing.T) {
	tests := []struct {
		name     string
		x, y     []float64
		rho, tau float64
		undefRho bool
		undefTau bool
	}{
		// Perfect agreement and perfect reversal.
		{name: "same", x: []float64{1, 2, 3, 4}, y: []float64{10, 20, 30, 40}, rho: 1, tau: 1},
		{name: "reversed", x: []float64{1, 2, 3, 4}, y: []float64{4, 3, 2, 1}, rho: -1, tau: -1},
		// One adjacent swap among 10: rho = 1 - 6*2/(10*99) = 0.98787...,
		// the 0.988 FinResearchBench II reports; tau = (44-1)/45.
		{name: "swap10", x: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y: []float64{1, 2, 3, 4, 5, 6, 7, 8, 10, 9},
			rho: 1 - 12.0/990, tau: 43.0 / 45},
		// Ties: x ranks (1, 2.5, 2.5, 4), y ranks (1,2,3,4).
		// Pearson of those: mean 2.5; dx = (-1.5,0,0,1.5), dy = (-1.5,-.5,.5,1.5);
		// sxy = 4.5, sxx = 4.5, syy = 5 -> rho = 4.5/sqrt(22.5) = 0.948683.
		// tau-b: pairs 6, one tied in x only; conc 5, disc 0; tau = 5/sqrt(5*6) = 0.912871.
		{name: "ties", x: []float64{1, 2, 2, 3}, y: []float64{1, 2, 3, 4}, rho: 4.5 / math.Sqrt(22.5), tau: 5 / math.Sqrt(30)},
		{name: "constant", x: []float64{1, 1, 1}, y: []float64{1, 2, 3}, undefRho: true, undefTau: true},
		// n = 2 as scipy: spearmanr([1,2],[1,2]) = 1, ([1,2],[2,1]) = -1
		// (printed -0.9999999999999999), kendalltau likewise.
		{name: "two", x: []float64{1, 2}, y: []float64{1, 2}, rho: 1, tau: 1},
		{name: "two reversed", x: []float64{1, 2}, y: []float64{2, 1}, rho: -1, tau: -1},
		{name: "two tied", x: []float64{1, 1}, y: []float64{1, 2}, undefRho: true, undefTau: true},
		{name: "one", x: []float64{1}, y: []float64{1}, undefRho: true, undefTau: true},
		// NaN is undefined (scipy's default nan_policy "propagate" gives nan).
		{name: "nan", x: []float64{1, 2, math.NaN(), 4}, y: []float64{1, 2, 3, 4}, undefRho: true, undefTau: true},
		{name: "nan y", x: []float64{1, 2, 3, 4}, y: []float64{1, math.NaN(), 3, 4}, undefRho: true, undefTau: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rho, err := Spearman(tc.x, tc.y)
			var ue *UndefinedError
			if tc.undefRho != errors.As(err, &ue) || (!tc.undefRho && !near(rho, tc.rho)) {
				t.Errorf("Spearman = %v, %v; want %v (undefined %v)", rho, err, tc.rho, tc.undefRho)
			}
			tau, err := KendallTauB(tc.x, tc.y)
			if tc.undefTau != errors.As(err, &ue) || (!tc.undefTau && !near(tau, tc.tau)) {
				t.Errorf("KendallTauB = %v, %v; want %v (undefined %v)", tau, err, tc.tau, tc.undefTau)
			}
		})
	}
}

func TestCohenKappa(t *testing.T) {
	// Textbook example (Wikipedia, "Cohen's kappa"): 50 items, both yes 20,
	// A yes B no 5, A no B yes 10, both no 15. po = 0.7, pe = 0.5*0.6 +
	// 0.5*0.4 = 0.5, kappa = 0.4.
	var a, b []bool
	add := func(n int, x, y bool) {
		for range n {
			a, b = append(a, x), append(b, y)
		}
	}
	add(20, true, true)
	add(5, true, false)
	add(10, false, true)
	add(15, false, false)
	k, err := CohenKappa(a, b)
	if err != nil || !near(k, 0.4) {
		t.Fatalf("CohenKappa = %v, %v; want 0.4", k, err)
	}
	if _, err := CohenKappa([]bool{true, true}, []bool{true, true}); err == nil {
		t.Fatal("CohenKappa of constant identical labels: want undefined")
	}
	var none Agreement[string]
	if _, err := none.Kappa(); err == nil {
		t.Fatal("Kappa of no items: want undefined")
	}
	// Three labels, one the second rater never uses, counted item by item
	// in both orders: (x,x) 4, (x,y) 1, (y,y) 3, (z,y) 2; n = 10, po =
	// 0.7; marginals A x 5, y 3, z 2 and B x 4, y 6, z 0, so pe = 0.5*0.4
	// + 0.3*0.6 + 0.2*0 = 0.38 and kappa = 0.32 / 0.62.
	items := [][2]string{{"x", "x"}, {"x", "x"}, {"x", "x"}, {"x", "x"}, {"x", "y"}, {"y", "y"}, {"y", "y"}, {"y", "y"}, {"z", "y"}, {"z", "y"}}
	for _, reversed := range []bool{false, true} {
		var k Agreement[string]
		for i := range items {
			if reversed {
				i = len(items) - 1 - i
			}
			k.Add(items[i][0], items[i][1])
		}
		if got, err := k.Kappa(); err != nil || !near(got, 0.32/0.62) {
			t.Errorf("Kappa (reversed %v) = %v, %v; want %v", reversed, got, err, 0.32/0.62)
		}
	}
}

func TestBootstrapDeterministic(t *testing.T) {
	x := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	mean := func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += x[i]
		}
		return s / float64(len(idx))
	}
	lo1, hi1, err := Bootstrap(len(x), 2000, 7, 0.95, mean)
	if err != nil {
		t.Fatal(err)
	}
	lo2, hi2, _ := Bootstrap(len(x), 2000, 7, 0.95, mean)
	if lo1 != lo2 || hi1 != hi2 {
		t.Fatalf("same seed gave [%v,%v] and [%v,%v]", lo1, hi1, lo2, hi2)
	}
	// The mean is 5.5 and its standard error about 0.87: the interval must
	// hold 5.5 and be roughly 2 x 1.96 x 0.87 = 3.4 wide.
	if !(lo1 < 5.5 && 5.5 < hi1) || hi1-lo1 < 2.5 || hi1-lo1 > 4.5 {
		t.Fatalf("interval [%v,%v] implausible for the mean of 1..10", lo1, hi1)
	}
}
