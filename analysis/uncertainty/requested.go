package uncertainty

import (
	"fmt"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// KnobPairs is the name of the knob every benchmark gives the pairs of
// systems to compare on request, besides the adjacent ones.
const KnobPairs = "pairs"

// PairsKnob is the knob of the pairs to compare on request: "A,B" pairs
// joined by ";", empty (the default) for none. It is never swept.
func PairsKnob() analysis.Knob {
	return analysis.Knob{Name: KnobPairs, Default: "",
		Doc: "pairs of systems to compare on request, \"A,B;C,D\": each gets a row of the requested_pairs table (paired difference A - B with its cluster bootstrap interval, CR1 error and sign-flip p-value, Holm-adjusted across the requested pairs)"}
}

// ParsePairs parses the KnobPairs knob of s: pairs "A,B" joined by ";",
// names trimmed of spaces. A pair of one system with itself, an empty name
// and a pair asked twice are errors.
func ParsePairs(benchmark string, s analysis.Settings) ([][2]string, error) {
	v := s.Get(KnobPairs, "")
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	var out [][2]string
	for _, p := range strings.Split(v, ";") {
		a, b, ok := strings.Cut(p, ",")
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !ok || a == "" || b == "" || strings.Contains(b, ",") {
			return nil, fmt.Errorf("%s: knob %s: bad pair %q (want SYSTEM_A,SYSTEM_B; pairs joined by ;)", benchmark, KnobPairs, p)
		}
		if a == b {
			return nil, fmt.Errorf("%s: knob %s: pair %q compares a system with itself", benchmark, KnobPairs, p)
		}
		k := [2]string{a, b}
		if slices.Contains(out, k) {
			return nil, fmt.Errorf("%s: knob %s: pair %q asked twice", benchmark, KnobPairs, p)
		}
		out = append(out, k)
	}
	return out, nil
}

// compare returns the paired comparison of systems i and j of the
// ranking (i - j, in either order) under the board's conventions: the
// CR1 error of the per-item differences, the bootstrap interval from the
// board's cluster draws and the sign-flip p-value from its sign patterns,
// so that an adjacent pair gets exactly its row of the pairs table. Holm
// is left 0. The board keeps the items it needs only when pairs were
// requested (Config.Requested).
func (b *Board) compare(i, j int) Pair {
	p := Pair{A: i, B: j}
	n := len(b.cluster)
	d := diffInto(nil, b.scores(i, make([]float64, n)), b.scores(j, make([]float64, n)))
	m, err := stats.NewClusterMean(d, b.cluster)
	p.Diff, p.Items, p.Clusters, p.SE, p.Err = m.Mean, m.Items, m.Clusters, m.SE, err
	if p.Err != nil {
		return p
	}
	switch {
	case b.cfg.Reps < 1:
		p.Err = &stats.UndefinedError{Reason: "no resamples"}
		return p
	case b.Clusters < 2:
		p.Err = &stats.UndefinedError{Reason: "fewer than 2 clusters to resample"}
		return p
	}
	s := sumsByLabel(stats.Group(d, b.cluster), b.labels)
	vals, _ := bootstrapPass([]sums{s}, 0, b.Clusters, b.cfg.Reps, b.cfg.Seed)
	if p.Lo, p.Hi, p.Err = interval(vals[0]); p.Err != nil {
		return p
	}
	ps, ex := signFlips([][]float64{s.sum}, b.cfg.Reps, b.cfg.Seed)
	p.P, p.Exact = ps[0], ex[0]
	return p
}

// RequestedTable returns the table requested_pairs of the pairs in
// cfg.Requested, in the order asked, Holm-adjusted across them; none
// when no pair was asked. A pair naming a system that is not in the
// ranking gets a row of undefined cells (reproduce refuses such a pair
// before writing anything).
func (b *Board) RequestedTable(benchmark string) []*analysis.Table {
	if len(b.cfg.Requested) == 0 {
		return nil
	}
	names := slices.Clone(b.Names)
	var pairs []Pair
	for _, r := range b.cfg.Requested {
		i, j := b.Index(r[0]), b.Index(r[1])
		if i < 0 || j < 0 {
			// named in the row, though not in the ranking
			if i < 0 {
				i, names = len(names), append(names, r[0])
			}
			if j < 0 {
				j, names = len(names), append(names, r[1])
			}
			pairs = append(pairs, Pair{A: i, B: j, Err: &stats.UndefinedError{Reason: "system not in the ranking"}})
			continue
		}
		pairs = append(pairs, b.compare(i, j))
	}
	holm(pairs)
	t := b.pairsTable(benchmark, "requested_pairs", "Paired comparisons on request",
		fmt.Sprintf("Each requested pair on the items both scored: mean paired difference (first - second) with its 95 %% paired cluster bootstrap interval and CR1 standard error (clustered by %s), two-sided p-value of the sign-flip permutation test over %s (seed %d), and the p-value Holm-adjusted across the requested pairs (not together with the adjacent pairs).", b.cfg.Unit, b.cfg.Unit, b.cfg.Seed),
		names, pairs, "Holm-adjusted across the requested pairs")
	t.Columns[0].Doc, t.Columns[1].Doc = "the first system of the pair", "the second system of the pair"
	return []*analysis.Table{t}
}

// holm sets the Holm-adjusted p-value of every pair that has one.
func holm(pairs []Pair) {
	var pv []float64
	for _, p := range pairs {
		if p.Err == nil {
			pv = append(pv, p.P)
		}
	}
	adj := stats.Holm(pv)
	k := 0
	for i := range pairs {
		if pairs[i].Err == nil {
			pairs[i].Holm = adj[k]
			k++
		}
	}
}
