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

// TestPairedShift checks a constant paired difference: every shared item
// differs by 0.1, so the difference is 0.1 with no uncertainty, whatever
// the items' own spread, and items answered by one system only are left
// out.
func TestPairedShift(t *testing.T) {
	var a, b []float64
	var g []int
	for c := range 8 {
		for i := range 5 {
			v := float64(c) + float64(i)*0.37
			a = append(a, v+0.1)
			b = append(b, v)
			g = append(g, c)
		}
	}
	a = append(a, 100)
	b = append(b, math.NaN())
	g = append(g, 3)
	p, err := NewPaired(a, b, g, 1000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(p.Diff, 0.1, 1e-9) || p.SE > 1e-9 || !closeTo(p.Lo, 0.1, 1e-9) || !closeTo(p.Hi, 0.1, 1e-9) || p.Items != 40 || p.Clusters != 8 {
		t.Errorf("paired = %+v", p)
	}
	// 8 clusters, all positive: exact p = 2/256
	if !p.Exact || !closeTo(p.P, 2.0/256, 1e-12) {
		t.Errorf("p = %v exact %v, want 2/256", p.P, p.Exact)
	}
}

// TestCoverage draws clustered data with a known mean many times and
// checks that the 95 % cluster bootstrap and analytic CR1 intervals cover
// it 93-97 % of the time, while the naive interval, which treats the
// items as independent, covers it visibly less. The data: 64 clusters of
// 2 to 12 items, a cluster effect and an item noise of equal variance
// (intra-cluster correlation 0.5, design effect about 4), so the naive
// interval should cover about P(|Z| < 1.96/√4) ≈ 0.68.
func TestCoverage(t *testing.T) {
	draws, reps := 1000, 1000
	if testing.Short() {
		draws = 400
	}
	const mean, G = 5.0, 64
	r := rand.New(rand.NewPCG(11, 12))
	var boot, analytic, naive int
	for d := range draws {
		var y []float64
		var g []int
		for c := range G {
			u := r.NormFloat64()
			for range 2 + r.IntN(11) {
				y = append(y, mean+u+r.NormFloat64())
				g = append(g, c)
			}
		}
		lo, hi, err := ClusterBootstrap(y, g, reps, uint64(d), 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if lo <= mean && mean <= hi {
			boot++
		}
		m, err := NewClusterMean(y, g)
		if err != nil {
			t.Fatal(err)
		}
		if lo, hi := m.Interval(0.95); lo <= mean && mean <= hi {
			analytic++
		}
		if z := NormalQuantile(0.975) * m.NaiveSE; math.Abs(m.Mean-mean) <= z {
			naive++
		}
	}
	cov := func(n int) float64 { return float64(n) / float64(draws) }
	t.Logf("coverage over %d draws: cluster bootstrap %.3f, CR1 t %.3f, naive %.3f", draws, cov(boot), cov(analytic), cov(naive))
	for _, c := range []struct {
		name string
		n    int
	}{{"cluster bootstrap", boot}, {"CR1 t", analytic}} {
		if cov(c.n) < 0.93 || cov(c.n) > 0.97 {
			t.Errorf("%s interval covers %.3f, want 0.93-0.97", c.name, cov(c.n))
		}
	}
	if cov(naive) > 0.85 {
		t.Errorf("naive interval covers %.3f, want visibly less than 0.95", cov(naive))
	}
}

func TestRankIntervals(t *testing.T) {
	// B is 0.0001 above A in every cluster (their ±0.01 noise cancels
	// within a cluster), C is far below both
	var a, b, c []float64
	var g []int
	for k := range 30 {
		for i := range 3 {
			v := float64(k%5) * 0.1
			e := 0.01 * float64((k*3+i)%3-1)
			a = append(a, v+e)
			b = append(b, v-e+0.0001)
			c = append(c, v-1)
			g = append(g, k)
		}
	}
	// D answers nothing in clusters 0-27, so it ranks last there
	d := make([]float64, len(a))
	for i := range d {
		d[i] = math.NaN()
		if g[i] >= 28 {
			d[i] = 10
		}
	}
	ri, err := RankIntervals([][]float64{a, b, c, d}, g, 2000, 1, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	// D is best on the full data (mean 10) and in any resample that draws
	// cluster 28 or 29 (1-(28/30)^30 ≈ 87 %), last otherwise
	if ri[3].Rank != 1 || ri[3].Lo != 1 || ri[3].Hi != 4 {
		t.Errorf("D: %+v, want rank 1 in [1, 4]", ri[3])
	}
	if ri[2].Lo != 3 || ri[2].Hi != 4 || ri[2].Rank != 4 {
		t.Errorf("C: %+v, want rank 4 in [3, 4]", ri[2])
	}
	// B is second when D is present, first when not; A one below
	if ri[0] != (RankInterval{3, 2, 3}) || ri[1] != (RankInterval{2, 1, 2}) {
		t.Errorf("A %+v, B %+v: want 3 in [2, 3] and 2 in [1, 2]", ri[0], ri[1])
	}
	// E and F differ by +0.02 in even clusters and -0.02 in odd ones:
	// equal on the full data, either ahead in about half the resamples
	var e, f []float64
	for k := range g {
		s := 0.01 * float64(1-2*(g[k]%2))
		e = append(e, a[k]+s)
		f = append(f, a[k]-s)
	}
	ri, err = RankIntervals([][]float64{e, f}, g, 2000, 1, 0.95)
	if err != nil || ri[0] != (RankInterval{1, 1, 2}) || ri[1] != ri[0] {
		t.Errorf("E and F: %+v %v, want both 1 in [1, 2]", ri, err)
	}
	// equal means share the better rank
	ri, err = RankIntervals([][]float64{a, a}, g, 100, 1, 0.95)
	if err != nil || ri[0] != (RankInterval{1, 1, 1}) || ri[1] != ri[0] {
		t.Errorf("equal systems: %+v %v", ri, err)
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
