package icbc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// Knob names.
const (
	KnobBeta            = "beta"
	KnobBinning         = "binning"
	KnobECEBins         = "ece_bins"
	KnobExpertAverage   = "expert_average"
	KnobCitationAverage = "citation_average"
	KnobAlpha           = "alpha"
	KnobWeights         = "weights"
	KnobTiers           = "tiers"
	KnobTie             = "par_tie"
	KnobBootstrap       = "bootstrap"
	KnobSeed            = "seed"
)

var knobs = []analysis.Knob{
	{Name: KnobBeta, Default: "10", Sweep: []string{"100"}, Doc: "calibration error bin size: 10 reproduces the paper's table (its errors exceed what one bin of 80 allows); HLE uses 100"},
	{Name: KnobBinning, Default: "all", Doc: "calibration bins: all (the authors' code: every bin, one bin when n < beta) or hle (the original HLE code, which skips the last bin)"},
	{Name: KnobECEBins, Default: "10", Doc: "equal-width bins of the ECE and the reliability diagram"},
	{Name: KnobExpertAverage, Default: "positive", Sweep: []string{"all"}, Doc: "expert score average: positive (over tasks scoring above 0, the authors' code) or all (over all scored tasks)"},
	{Name: KnobCitationAverage, Default: "task", Sweep: []string{"pooled"}, Doc: "citation consistency: task (mean of per-task shares, tasks without citations 0, the authors') or pooled (all claims together, DeepResearch Bench)"},
	{Name: KnobAlpha, Default: "", Sweep: []string{"0.001", "0.004"}, Doc: "source age decay per day; empty: the configuration's (0.002 in the paper)"},
	{Name: KnobWeights, Default: "", Sweep: []string{"1,0,0", "0.6,0.2,0.2"}, Doc: "subjective weights expert,citation,source; empty: the configuration's (0.8,0.1,0.1)"},
	{Name: KnobTiers, Default: "", Sweep: []string{"1,1,1,1"}, Doc: "authority of tiers 1-4; empty: the configuration's (1,0.85,0.7,0.2)"},
	{Name: KnobTie, Default: "0", Doc: "score difference within which two reports tie in the pairwise agreement rate"},
	{Name: KnobBootstrap, Default: "1000", Doc: "bootstrap resamples of tasks for intervals", Resamples: true},
	{Name: KnobSeed, Default: "1", Doc: "bootstrap seed"},
	uncertainty.Knob(),
	uncertainty.PairsKnob(),
}

// settings are the parsed knob values.
type settings struct {
	beta     int
	skipLast bool
	eceBins  int
	positive bool
	pooled   bool
	alpha    float64
	weights  Weights
	tiers    []float64
	tie      float64
	reps     int
	seed     uint64
	// clusterReps are the resamples of the clustered statistics.
	clusterReps int
	// pairs are the pairs of systems compared on request.
	pairs [][2]string
}

func parseSettings(s analysis.Settings, c *Config) (*settings, error) {
	o := &settings{alpha: c.Alpha, weights: c.Weights, tiers: c.Tiers}
	bad := func(k, v string) error { return analysis.BadSetting(k, v, "") }
	var err error
	v := s.Get(KnobBeta, "10")
	if o.beta, err = strconv.Atoi(v); err != nil || o.beta < 1 {
		return nil, bad(KnobBeta, v)
	}
	switch v = s.Get(KnobBinning, "all"); v {
	case "all":
	case "hle":
		o.skipLast = true
	default:
		return nil, bad(KnobBinning, v)
	}
	v = s.Get(KnobECEBins, "10")
	if o.eceBins, err = strconv.Atoi(v); err != nil || o.eceBins < 1 || o.eceBins > 100 {
		return nil, bad(KnobECEBins, v)
	}
	switch v = s.Get(KnobExpertAverage, "positive"); v {
	case "positive":
		o.positive = true
	case "all":
	default:
		return nil, bad(KnobExpertAverage, v)
	}
	switch v = s.Get(KnobCitationAverage, "task"); v {
	case "task":
	case "pooled":
		o.pooled = true
	default:
		return nil, bad(KnobCitationAverage, v)
	}
	if v = s.Get(KnobAlpha, ""); v != "" {
		if o.alpha, err = strconv.ParseFloat(v, 64); err != nil || o.alpha < 0 {
			return nil, bad(KnobAlpha, v)
		}
	}
	if v = s.Get(KnobWeights, ""); v != "" {
		f, err := floats(v, 3)
		if err != nil {
			return nil, bad(KnobWeights, v)
		}
		o.weights = Weights{Expert: f[0], Citation: f[1], Source: f[2]}
	}
	if v = s.Get(KnobTiers, ""); v != "" {
		if o.tiers, err = floats(v, 4); err != nil {
			return nil, bad(KnobTiers, v)
		}
	}
	v = s.Get(KnobTie, "0")
	if o.tie, err = strconv.ParseFloat(v, 64); err != nil || o.tie < 0 {
		return nil, bad(KnobTie, v)
	}
	v = s.Get(KnobBootstrap, "1000")
	if o.reps, err = strconv.Atoi(v); err != nil || o.reps < 0 || o.reps > 100000 {
		return nil, bad(KnobBootstrap, v)
	}
	v = s.Get(KnobSeed, "1")
	if o.seed, err = strconv.ParseUint(v, 10, 64); err != nil {
		return nil, bad(KnobSeed, v)
	}
	if o.clusterReps, err = uncertainty.Reps(Name, s); err != nil {
		return nil, err
	}
	if o.pairs, err = uncertainty.ParsePairs(Name, s); err != nil {
		return nil, err
	}
	return o, nil
}

func floats(s string, n int) ([]float64, error) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, fmt.Errorf("want %d values", n)
	}
	out := make([]float64, n)
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f < 0 {
			return nil, fmt.Errorf("bad value %q", p)
		}
		out[i] = f
	}
	return out, nil
}
