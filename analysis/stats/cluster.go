package stats

import (
	"math"
	"slices"
)

// A ClusterMean is the mean of items grouped in clusters (grading items
// within companies, rubrics within queries, language versions within a
// task) with the standard errors that do and do not account for the
// grouping.
//
// SE is the analytic cluster-robust standard error of the mean, CR1: the
// sandwich estimator of an intercept-only OLS regression with the
// small-sample factor G/(G-1)·(N-1)/(N-K), K = 1, which is Stata's
// "vce(cluster)" and statsmodels' OLS fit(cov_type="cluster") with its
// default use_correction=True:
//
//	SE² = G/(G-1) · Σ_g (Σ_{i∈g} (y_i - ȳ))² / N²
//
// NaiveSE is the standard error that treats the N items as independent,
// s/√N with the sample standard deviation s (divisor N-1), the OLS
// non-robust one. DesignEffect is (SE/NaiveSE)², the factor by which the
// clustering inflates the variance (1 when both are 0). EffectiveItems is
// N/DesignEffect, the number of independent items the data are worth.
// EffectiveClusters is G* of Carter, Schnepel and Steigerwald (2017,
// "Asymptotic behavior of a t-test robust to cluster heterogeneity",
// Review of Economics and Statistics 99(4)) with intra-cluster
// correlation 1, the bound that needs no estimate of it:
// G* = (Σ_g n_g²)² / Σ_g n_g⁴, which is G when the clusters have equal
// sizes and falls towards 1 as one cluster dominates.
type ClusterMean struct {
	Mean              float64
	Items, Clusters   int
	SE, NaiveSE       float64
	DesignEffect      float64
	EffectiveItems    float64
	EffectiveClusters float64
}

// Interval returns the analytic interval Mean ± t·SE at the given level,
// with t the quantile of Student's t with Clusters-1 degrees of freedom
// (Stata's convention for clustered errors).
func (m ClusterMean) Interval(level float64) (lo, hi float64) {
	t := StudentTQuantile(1-(1-level)/2, float64(m.Clusters-1))
	return m.Mean - t*m.SE, m.Mean + t*m.SE
}

// Clusters groups item values by cluster label: the per-cluster sums and
// counts every clustered statistic works from. Clusters are in order of
// label, so the result does not depend on the items' order beyond
// floating-point rounding within a cluster.
type Clusters struct {
	Labels []int
	Sum    []float64
	Count  []int
}

// Group returns the clusters of y, where cluster[i] labels item i. It
// skips NaN values (missing items). It takes memory in the number of
// runs of equal labels, so items grouped by cluster cost only their
// clusters.
func Group(y []float64, cluster []int) Clusters {
	if len(y) != len(cluster) {
		panic("stats: Group of unequal lengths")
	}
	var c Clusters
	// A label only when it differs from the last one kept: at 8x the
	// full-scale demo, a label per item held 21 MB.
	for i, v := range y {
		if !math.IsNaN(v) && (len(c.Labels) == 0 || c.Labels[len(c.Labels)-1] != cluster[i]) {
			c.Labels = append(c.Labels, cluster[i])
		}
	}
	slices.Sort(c.Labels)
	c.Labels = slices.Compact(c.Labels)
	c.Sum = make([]float64, len(c.Labels))
	c.Count = make([]int, len(c.Labels))
	for i, v := range y {
		if math.IsNaN(v) {
			continue
		}
		g, _ := slices.BinarySearch(c.Labels, cluster[i])
		c.Sum[g] += v
		c.Count[g]++
	}
	return c
}

// Mean returns the item mean over the clusters at idx (a resample, a
// cluster may repeat), NaN when they hold no item.
func (c Clusters) Mean(idx []int) float64 {
	var s float64
	var n int
	for _, g := range idx {
		s += c.Sum[g]
		n += c.Count[g]
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// NewClusterMean returns the clustered mean of the non-NaN values of y,
// where cluster[i] labels item i's cluster. It needs at least 2 clusters.
func NewClusterMean(y []float64, cluster []int) (ClusterMean, error) {
	c := Group(y, cluster)
	G := len(c.Labels)
	if G < 2 {
		return ClusterMean{}, undefined("fewer than 2 clusters")
	}
	var m ClusterMean
	m.Clusters = G
	for _, n := range c.Count {
		m.Items += n
	}
	N := float64(m.Items)
	var s float64
	for _, v := range c.Sum {
		s += v
	}
	m.Mean = s / N
	// residual sums by cluster, and the residual sum of squares, from the
	// items (two passes, so a large mean costs no precision)
	res := make([]float64, G)
	var ss float64
	for i, v := range y {
		if math.IsNaN(v) {
			continue
		}
		e := v - m.Mean
		g, _ := slices.BinarySearch(c.Labels, cluster[i])
		res[g] += e
		ss += e * e
	}
	var meat float64
	for _, r := range res {
		meat += r * r
	}
	m.SE = math.Sqrt(float64(G) / float64(G-1) * meat / (N * N))
	m.NaiveSE = math.Sqrt(ss / (N - 1) / N)
	m.DesignEffect = 1
	if m.NaiveSE > 0 {
		m.DesignEffect = (m.SE / m.NaiveSE) * (m.SE / m.NaiveSE)
	}
	m.EffectiveItems = N / m.DesignEffect
	if m.DesignEffect == 0 {
		m.EffectiveItems = N
	}
	var s2, s4 float64
	for _, n := range c.Count {
		n2 := float64(n) * float64(n)
		s2 += n2
		s4 += n2 * n2
	}
	m.EffectiveClusters = s2 * s2 / s4
	return m, nil
}

// ClusterIndex numbers the cluster labels in sorted order: idx[i] is
// the rank of labels[i] among the n distinct labels.
func ClusterIndex(labels []string) (idx []int, n int) {
	u := slices.Clone(labels)
	slices.Sort(u)
	u = slices.Compact(u)
	idx = make([]int, len(labels))
	for i, l := range labels {
		idx[i], _ = slices.BinarySearch(u, l)
	}
	return idx, len(u)
}
