package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestSignFlipExact(t *testing.T) {
	tests := []struct {
		name string
		sums []float64
		p    float64
	}{
		// 10 positive cluster differences: only the observed pattern and
		// its negation reach |T|, so p = 2/2^10
		{"all positive", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2.0 / 1024},
		// sums 3, -1, 2, |T| = 4: the 8 patterns give |T| = 4, 2, 6, 0, 0,
		// 6, 2, 4, of which 4 reach 4
		{"by hand", []float64{3, -1, 2}, 0.5},
		// no difference at all
		{"zero", []float64{0, 0, 0}, 1},
		// ties reached up to rounding: 0.1+0.2 against 0.3
		{"rounding", []float64{0.1, 0.2, -0.3}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, exact := SignFlip(tc.sums, 10000, 1)
			if !exact || !closeTo(p, tc.p, 1e-12) {
				t.Errorf("SignFlip = %v (exact %v), want %v", p, exact, tc.p)
			}
		})
	}
}

// TestSignFlipSampled checks the sampled test on 16 clusters (2^16 >
// reps): it is close to the exact p of the same sums, is never 0, and is
// the same for the same seed.
func TestSignFlipSampled(t *testing.T) {
	sums := []float64{1.5, 0.2, -0.4, 2.1, 0.9, -1.1, 0.3, 1.2, 0.8, -0.2, 1.0, 0.6, -0.7, 1.4, 0.1, 0.5}
	exact, ok := SignFlip(sums, 1<<16, 1)
	if !ok {
		t.Fatal("2^16 patterns not enumerated")
	}
	p, ok := SignFlip(sums, 20000, 7)
	if ok {
		t.Fatal("sampled test says exact")
	}
	if math.Abs(p-exact) > 4*math.Sqrt(exact*(1-exact)/20000) {
		t.Errorf("sampled p %v, exact %v", p, exact)
	}
	if q, _ := SignFlip(sums, 20000, 7); q != p {
		t.Errorf("same seed gave %v then %v", p, q)
	}
	all := make([]float64, 40)
	for i := range all {
		all[i] = 1
	}
	if p, _ := SignFlip(all, 999, 1); p != 1.0/1000 {
		t.Errorf("40 positive clusters: p = %v, want 1/1000", p)
	}
}

// TestSignFlipNull checks that under the null (cluster differences
// symmetric about 0) the test rejects at 5 % about 5 % of the time.
func TestSignFlipNull(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const draws = 1000
	rejected := 0
	for d := range draws {
		sums := make([]float64, 20)
		for g := range sums {
			sums[g] = r.NormFloat64() * float64(1+g%3)
		}
		if p, _ := SignFlip(sums, 999, uint64(d)); p < 0.05 {
			rejected++
		}
	}
	if rate := float64(rejected) / draws; rate < 0.03 || rate > 0.07 {
		t.Errorf("rejection rate under the null %v, want about 0.05", rate)
	}
}

func TestTieGroups(t *testing.T) {
	// p-values against each possible leader: 0 and 1 tie, 2 differs from
	// 0 (new group led by 2), 3 ties with 2, 4 differs from 2 though it
	// would tie with 3
	p := map[[2]int]float64{{0, 1}: 0.3, {0, 2}: 0.01, {2, 3}: 0.2, {2, 4}: 0.04, {3, 4}: 0.5}
	got := TieGroups(5, func(l, i int) float64 { return p[[2]int{l, i}] }, 0.05)
	want := []int{1, 1, 2, 2, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("TieGroups = %v, want %v", got, want)
		}
	}
}

// TestMinDetectablePower checks MinDetectable by simulation: paired
// differences in 30 clusters with a true mean equal to the minimum
// detectable difference for their standard error are resolved by the
// sign-flip test at 0.05 about 80 % of the time.
func TestMinDetectablePower(t *testing.T) {
	const G, sigma, draws = 30, 1.0, 1000
	delta := MinDetectable(sigma/math.Sqrt(G), G-1, 0.05, 0.8)
	r := rand.New(rand.NewPCG(5, 6))
	resolved := 0
	sums := make([]float64, G)
	for d := range draws {
		for g := range sums {
			sums[g] = delta + sigma*r.NormFloat64()
		}
		if p, _ := SignFlip(sums, 499, uint64(d)); p < 0.05 {
			resolved++
		}
	}
	rate := float64(resolved) / draws
	t.Logf("power at the minimum detectable difference %.3f: %.3f", delta, rate)
	if rate < 0.75 || rate > 0.85 {
		t.Errorf("power at the minimum detectable difference %.3f: %.3f, want about 0.80", delta, rate)
	}
}
