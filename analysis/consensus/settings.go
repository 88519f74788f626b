package consensus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// Knob names and defaults.
const (
	KnobJudges             = "judges"
	KnobConsistency        = "consistency"
	KnobDistinguishability = "distinguishability"
	KnobMinRubrics         = "min_rubrics"
	KnobBootstrap          = "bootstrap"
	KnobSeed               = "seed"

	defaultBootstrap = 10000
	defaultSeed      = 1
)

// knobs lists the settings Collect and Score read; only the judges knob
// changes which calls are made.
func knobs() []analysis.Knob {
	return []analysis.Knob{
		{Name: KnobJudges, Default: "all", Doc: "comma-separated non-empty subset of the panel's judges, or all", Calls: true},
		{Name: KnobConsistency, Default: "unanimous", Doc: "consistency rule: unanimous, or k-of-n (k judges of the n selected agree on every report; k more than half of n)"},
		{Name: KnobDistinguishability, Default: "on", Doc: "distinguishability rule: on (at least one majority-yes and one majority-no report), off, or min-K (at least K of each)", Sweep: []string{"off"}},
		{Name: KnobMinRubrics, Default: "1", Doc: "queries with fewer gold rubrics are left out of every pass rate"},
		{Name: KnobBootstrap, Default: strconv.Itoa(defaultBootstrap), Doc: "bootstrap resamples of queries for the 95% intervals", Resamples: true},
		{Name: KnobSeed, Default: strconv.Itoa(defaultSeed), Doc: "seed of the bootstrap"},
		uncertainty.Knob(),
		uncertainty.PairsKnob(),
	}
}

// A config is the parsed settings.
type config struct {
	judges []int // selected judge indices, in panel order
	k      int   // judges that must agree on a report
	dist   int   // reports needed on each side; 0 turns the filter off
	minR   int
	reps   int
	seed   uint64
	// clusterReps are the resamples of the clustered statistics.
	clusterReps int
	// pairs are the pairs of products compared on request.
	pairs [][2]string
	// label describes the settings for notes.
	label string
}

// parseJudges reads the judges knob: the selected judges' panel indices,
// in panel order whatever the knob's order.
func parseJudges(s analysis.Settings, in *Inputs) ([]int, error) {
	var judges []int
	js := s.Get(KnobJudges, "all")
	if js == "all" {
		for i := range in.Panel.Judges {
			judges = append(judges, i)
		}
		return judges, nil
	}
	seen := map[int]bool{}
	for _, name := range strings.Split(js, ",") {
		i, ok := in.judgeIdx[strings.TrimSpace(name)]
		if !ok {
			return nil, analysis.BadSetting(KnobJudges, js, fmt.Sprintf("all, or a comma-separated subset of the panel's judges (%s); %q is not one", judgeNames(in), strings.TrimSpace(name)))
		}
		if seen[i] {
			return nil, analysis.BadSetting(KnobJudges, js, fmt.Sprintf("each judge once (%q is repeated)", strings.TrimSpace(name)))
		}
		seen[i] = true
	}
	for i := range in.Panel.Judges {
		if seen[i] {
			judges = append(judges, i)
		}
	}
	return judges, nil
}

func parseSettings(s analysis.Settings, in *Inputs) (*config, error) {
	c := &config{}
	var err error
	if c.judges, err = parseJudges(s, in); err != nil {
		return nil, err
	}
	n := len(c.judges)
	switch cs := s.Get(KnobConsistency, "unanimous"); cs {
	case "unanimous":
		c.k = n
	default:
		var k, nn int
		if _, err := fmt.Sscanf(cs, "%d-of-%d", &k, &nn); err != nil || fmt.Sprintf("%d-of-%d", k, nn) != cs {
			return nil, analysis.BadSetting(KnobConsistency, cs, "unanimous or k-of-n")
		}
		if nn != n {
			return nil, analysis.BadSetting(KnobConsistency, cs, fmt.Sprintf("k-of-%d: %d judges are selected", n, n))
		}
		if k > n || 2*k <= n {
			return nil, analysis.BadSetting(KnobConsistency, cs, "k-of-n with k more than half of n and at most n")
		}
		c.k = k
	}
	switch ds := s.Get(KnobDistinguishability, "on"); {
	case ds == "on":
		c.dist = 1
	case ds == "off":
		c.dist = 0
	case strings.HasPrefix(ds, "min-"):
		d, err := strconv.Atoi(strings.TrimPrefix(ds, "min-"))
		if err != nil || d < 1 || d > len(in.Panel.Products)/2 {
			return nil, analysis.BadSetting(KnobDistinguishability, ds, fmt.Sprintf("min-K with K from 1 to %d", len(in.Panel.Products)/2))
		}
		c.dist = d
	default:
		return nil, analysis.BadSetting(KnobDistinguishability, ds, "on, off or min-K")
	}
	if c.minR, err = intKnob(s, KnobMinRubrics, "1", 0, 1<<20); err != nil {
		return nil, err
	}
	if c.reps, err = intKnob(s, KnobBootstrap, strconv.Itoa(defaultBootstrap), 0, 1_000_000); err != nil {
		return nil, err
	}
	seed, err := intKnob(s, KnobSeed, strconv.Itoa(defaultSeed), 0, 1<<62)
	if err != nil {
		return nil, err
	}
	c.seed = uint64(seed)
	if c.clusterReps, err = uncertainty.Reps(Name, s); err != nil {
		return nil, err
	}
	if c.pairs, err = uncertainty.ParsePairs(Name, s); err != nil {
		return nil, err
	}
	var names []string
	for _, j := range c.judges {
		names = append(names, in.Panel.Judges[j].Name)
	}
	c.label = fmt.Sprintf("judges %s; consistency %d-of-%d; distinguishability %s; min_rubrics %d",
		strings.Join(names, ", "), c.k, n, s.Get(KnobDistinguishability, "on"), c.minR)
	return c, nil
}

func intKnob(s analysis.Settings, name, def string, lo, hi int) (int, error) {
	v := s.Get(name, def)
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, analysis.BadSetting(name, v, fmt.Sprintf("an integer from %d to %d", lo, hi))
	}
	return n, nil
}

// judgeNames lists the panel's judges, comma-separated.
func judgeNames(in *Inputs) string {
	var names []string
	for _, j := range in.Panel.Judges {
		names = append(names, j.Name)
	}
	return strings.Join(names, ", ")
}
