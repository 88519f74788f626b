package stats

import (
	"encoding/json"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"
)

// statsRef is testdata/stats_ref.json, made by testdata/stats_ref.py with
// statsmodels and scipy.
type statsRef struct {
	Cluster map[string]struct {
		Y        []float64 `json:"y"`
		Cluster  []int     `json:"cluster"`
		Mean     float64   `json:"mean"`
		SE       float64   `json:"se_cluster"`
		NaiveSE  float64   `json:"se_naive"`
		CINormal []float64 `json:"ci95_cluster_normal"`
		CIT      []float64 `json:"ci95_cluster_t"`
		DF       int       `json:"df"`
	} `json:"cluster"`
	TQuantiles []struct{ P, DF, Q float64 }   `json:"t_quantiles"`
	TCDF       []struct{ T, DF, CDF float64 } `json:"t_cdf"`
	NormalQ    []struct{ P, Q float64 }       `json:"normal_quantiles"`
	Wilson     []struct {
		X, N   int
		Lo, Hi float64
	} `json:"wilson"`
	Holm struct {
		P        []float64 `json:"p"`
		Adjusted []float64 `json:"adjusted"`
	} `json:"holm"`
}

func loadRef(t *testing.T) statsRef {
	t.Helper()
	b, err := os.ReadFile("testdata/stats_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var r statsRef
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cluster) == 0 || len(r.Wilson) == 0 {
		t.Fatal("empty reference file")
	}
	return r
}

func closeTo(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

// TestClusterMeanStatsmodels checks the CR1 standard error, the naive one
// and the t interval against statsmodels' OLS on a constant with
// cov_type="cluster".
func TestClusterMeanStatsmodels(t *testing.T) {
	for name, c := range loadRef(t).Cluster {
		t.Run(name, func(t *testing.T) {
			m, err := NewClusterMean(c.Y, c.Cluster)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := m.Interval(0.95)
			for _, v := range []struct {
				what      string
				got, want float64
			}{
				{"mean", m.Mean, c.Mean},
				{"cluster SE", m.SE, c.SE},
				{"naive SE", m.NaiveSE, c.NaiveSE},
				{"t interval lo", lo, c.CIT[0]},
				{"t interval hi", hi, c.CIT[1]},
				{"design effect", m.DesignEffect, (c.SE / c.NaiveSE) * (c.SE / c.NaiveSE)},
				{"clusters", float64(m.Clusters), float64(c.DF + 1)},
			} {
				if !closeTo(v.got, v.want, 1e-9) {
					t.Errorf("%s = %.12g, statsmodels %.12g", v.what, v.got, v.want)
				}
			}
		})
	}
}

// TestClusterMeanByHand is the "binary" case derived by hand: cluster
// sums 3, 1, 4, 1 of 4 items each, mean 9/16; residual sums 0.75, -1.25,
// 1.75, -1.25 with squares summing to 6.75; SE² = 4/3 · 6.75 / 16² = 9/256,
// SE = 3/16. Naive: s² = (9·(7/16)² + 7·(9/16)²)/15 = 63/240... = 0.2625,
// SE² = 0.2625/16. Equal cluster sizes make G* = 4.
func TestClusterMeanByHand(t *testing.T) {
	y := []float64{1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 0}
	g := []int{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4}
	m, err := NewClusterMean(y, g)
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(m.Mean, 9.0/16, 1e-12) || !closeTo(m.SE, 3.0/16, 1e-12) || !closeTo(m.NaiveSE, math.Sqrt(0.2625/16), 1e-12) {
		t.Errorf("got mean %v SE %v naive %v", m.Mean, m.SE, m.NaiveSE)
	}
	if m.EffectiveClusters != 4 || m.Items != 16 || m.Clusters != 4 {
		t.Errorf("G* %v items %d clusters %d", m.EffectiveClusters, m.Items, m.Clusters)
	}
	// one cluster of 4 and three of 1: G* = (16+3)² / (256+3) = 361/259
	m, err = NewClusterMean([]float64{1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(m.EffectiveClusters, 361.0/259, 1e-12) {
		t.Errorf("G* = %v, want 361/259", m.EffectiveClusters)
	}
}

// TestClusterMeanMissing checks that NaN items are skipped, as if absent,
// and that shuffling the items changes nothing.
func TestClusterMeanMissing(t *testing.T) {
	y := []float64{0.9, math.NaN(), 0.2, 0.3, math.NaN(), 0.6, 0.7, 0.1}
	g := []int{1, 1, 2, 2, 3, 3, 4, 4}
	a, err := NewClusterMean(y, g)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewClusterMean([]float64{0.7, 0.3, 0.6, 0.9, 0.1, 0.2}, []int{4, 2, 3, 1, 4, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !closeTo(a.Mean, b.Mean, 1e-12) || !closeTo(a.SE, b.SE, 1e-12) || !closeTo(a.NaiveSE, b.NaiveSE, 1e-12) || a.Items != 6 {
		t.Errorf("with NaN %+v, without %+v", a, b)
	}
	if _, err := NewClusterMean([]float64{1, 2, math.NaN()}, []int{1, 1, 2}); err == nil {
		t.Error("one cluster with items: want an undefined error")
	}
}

func TestDistributions(t *testing.T) {
	r := loadRef(t)
	// scipy's t.ppf (cephes stdtrit) is good to about 1e-9 only: at its
	// 1.9983405417722 for p = 0.975, df = 63, the CDF is 0.97499999995838
	// (StudentTCDF and mpmath at 40 digits agree), so quantiles are
	// compared at 1e-8 and the CDF at 1e-12
	for _, c := range r.TQuantiles {
		if got := StudentTQuantile(c.P, c.DF); !closeTo(got, c.Q, 1e-8) {
			t.Errorf("StudentTQuantile(%v, %v) = %.15g, scipy %.15g", c.P, c.DF, got, c.Q)
		}
	}
	for _, c := range r.TCDF {
		if got := StudentTCDF(c.T, c.DF); !closeTo(got, c.CDF, 1e-12) {
			t.Errorf("StudentTCDF(%v, %v) = %.15g, scipy %.15g", c.T, c.DF, got, c.CDF)
		}
	}
	for _, c := range r.NormalQ {
		if got := NormalQuantile(c.P); !closeTo(got, c.Q, 1e-12) {
			t.Errorf("NormalQuantile(%v) = %.15g, scipy %.15g", c.P, got, c.Q)
		}
	}
}

// TestWilsonPublished checks the Wilson interval against Newcombe (1998),
// "Two-sided confidence intervals for the single proportion: comparison
// of seven methods", Statistics in Medicine 17:857-872, Table II, method 3
// (score interval without continuity correction), printed to 4 decimals,
// and against statsmodels' proportion_confint(method="wilson").
func TestWilsonPublished(t *testing.T) {
	newcombe := []struct {
		x, n   int
		lo, hi float64
	}{
		{81, 263, 0.2553, 0.3662},
		{15, 148, 0.0624, 0.1605},
		{0, 20, 0, 0.1611},
		{1, 29, 0.0061, 0.1718},
	}
	for _, c := range newcombe {
		lo, hi, err := Wilson(c.x, c.n, 0.95)
		if err != nil || math.Abs(lo-c.lo) > 0.00005 || math.Abs(hi-c.hi) > 0.00005 {
			t.Errorf("Wilson(%d, %d) = %.5f, %.5f, %v; Newcombe %.4f, %.4f", c.x, c.n, lo, hi, err, c.lo, c.hi)
		}
	}
	for _, c := range loadRef(t).Wilson {
		lo, hi, err := Wilson(c.X, c.N, 0.95)
		if err != nil || !closeTo(lo, c.Lo, 1e-9) || !closeTo(hi, c.Hi, 1e-9) {
			t.Errorf("Wilson(%d, %d) = %.12f, %.12f, %v; statsmodels %.12f, %.12f", c.X, c.N, lo, hi, err, c.Lo, c.Hi)
		}
	}
	for _, c := range [][2]int{{0, 0}, {-1, 5}, {6, 5}} {
		if _, _, err := Wilson(c[0], c[1], 0.95); err == nil {
			t.Errorf("Wilson(%d, %d): want an undefined error", c[0], c[1])
		}
	}
}

func TestHolm(t *testing.T) {
	h := loadRef(t).Holm
	got := Holm(h.P)
	for i := range got {
		if !closeTo(got[i], h.Adjusted[i], 1e-12) {
			t.Fatalf("Holm(%v) = %v, statsmodels %v", h.P, got, h.Adjusted)
		}
	}
	// by hand: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 gives
	// 0.02, 0.03, 0.06, 0.04, made non-decreasing: 0.02, 0.03, 0.06, 0.06
	got = Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range got {
		if !closeTo(got[i], want[i], 1e-12) {
			t.Fatalf("Holm = %v, want %v", got, want)
		}
	}
}

func TestMinDetectable(t *testing.T) {
	// normal quantiles: 1.959964 + 0.841621 = 2.801585 standard errors
	if got := MinDetectable(1, 0, 0.05, 0.8); !closeTo(got, 2.8015852, 1e-7) {
		t.Errorf("MinDetectable(normal) = %v, want 2.8015852", got)
	}
	// t with 63 degrees of freedom: 1.998341 + 0.847364 (scipy t.ppf(0.975, 63)
	// and t.ppf(0.8, 63))
	if got := MinDetectable(2, 63, 0.05, 0.8); !closeTo(got, 2*(1.9983405417721956+0.8473639122361705), 1e-8) {
		t.Errorf("MinDetectable(t63) = %v", got)
	}
}

// TestClusterIndex checks the numbering on labels ranked by hand: a < b < c.
func TestClusterIndex(t *testing.T) {
	for _, tt := range []struct {
		labels []string
		want   []int
		n      int
	}{
		{nil, []int{}, 0},
		{[]string{"b", "a", "b", "c"}, []int{1, 0, 1, 2}, 3},
		{[]string{"z", "z"}, []int{0, 0}, 1},
	} {
		idx, n := ClusterIndex(tt.labels)
		if !slices.Equal(idx, tt.want) || n != tt.n {
			t.Errorf("ClusterIndex(%q) = %v, %d, want %v, %d", tt.labels, idx, n, tt.want, tt.n)
		}
	}
}

// TestGroup checks the clusters of items against hand sums: labels in
// order whatever the items' order, NaN items skipped, and each cluster
// summed in item order: 1e17 + 1 rounds to 1e17 (the spacing of doubles
// there is 16), so the cluster {1e17, 1, -1e17} sums to 0 in item order,
// where 1e17 - 1e17 + 1 would give 1.
func TestGroup(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		name    string
		y       []float64
		cluster []int
		labels  []int
		sum     []float64
		count   []int
	}{
		{"grouped", []float64{1, 2, nan, 4, 5}, []int{3, 3, 1, 1, 2}, []int{1, 2, 3}, []float64{4, 5, 3}, []int{1, 1, 2}},
		{"interleaved", []float64{1, 2, 3, 4}, []int{2, 1, 2, 1}, []int{1, 2}, []float64{6, 4}, []int{2, 2}},
		{"a cluster only missing", []float64{nan, nan, 7}, []int{5, 5, 6}, []int{6}, []float64{7}, []int{1}},
		{"all missing", []float64{nan}, []int{1}, nil, []float64{}, []int{}},
		{"item order", []float64{1e17, 1, -1e17, 2}, []int{0, 0, 0, 1}, []int{0, 1}, []float64{0, 2}, []int{3, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := Group(tt.y, tt.cluster)
			if !slices.Equal(c.Labels, tt.labels) || !slices.Equal(c.Sum, tt.sum) || !slices.Equal(c.Count, tt.count) {
				t.Errorf("Group = %v %v %v, want %v %v %v", c.Labels, c.Sum, c.Count, tt.labels, tt.sum, tt.count)
			}
		})
	}
}

// TestGroupMemory checks that Group of items grouped by cluster takes
// memory in the clusters: 1<<20 items in 64 clusters. A label per item
// would allocate at least 8 MB; the bound is 64 KB.
func TestGroupMemory(t *testing.T) {
	const N, G = 1 << 20, 64
	y, cluster := make([]float64, N), make([]int, N)
	for i := range y {
		y[i] = float64(i % 7)
		cluster[i] = i / (N / G)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := Group(y, cluster)
	runtime.ReadMemStats(&after)
	if len(c.Labels) != G {
		t.Fatalf("%d clusters, want %d", len(c.Labels), G)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("Group allocated %d bytes for %d clusters, want at most 64 KB", got, G)
	}
}
