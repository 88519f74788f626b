package scores

import (
	"fmt"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// requestedTable compares the requested pairs of systems (first minus
// second, in the order asked) like the adjacent ones, Holm-adjusted
// across the requested pairs. A name that is not a system of m, a pair of
// one system with itself and a pair asked twice are errors.
func requestedTable(m *Matrix, sys []*systemStats, pair func(i, j int) pairResult, dec int, requested [][2]string) (*analysis.Table, error) {
	index := func(name string) int {
		return slices.IndexFunc(sys, func(st *systemStats) bool { return st.name == name })
	}
	var idx [][2]int
	for _, r := range requested {
		i, j := index(r[0]), index(r[1])
		for k, name := range r {
			if []int{i, j}[k] < 0 {
				return nil, fmt.Errorf("%s: pair %s,%s: no system %q (systems: %s)", m.File, r[0], r[1], name, strings.Join(m.Systems, ", "))
			}
		}
		if i == j {
			return nil, fmt.Errorf("%s: pair %s,%s compares a system with itself", m.File, r[0], r[1])
		}
		if slices.Contains(idx, [2]int{i, j}) {
			return nil, fmt.Errorf("%s: pair %s,%s asked twice", m.File, r[0], r[1])
		}
		idx = append(idx, [2]int{i, j})
	}
	t, _, _ := pairsTable("requested_pairs", "Paired comparisons on request",
		"Each requested pair on the tasks both answered: mean paired difference (first - second) with its 95 % cluster bootstrap interval and CR1 standard error, two-sided p-value of the cluster-level sign-flip permutation test, and the p-value Holm-adjusted across the requested pairs (not together with the adjacent pairs).",
		"Holm-adjusted across the requested pairs", sys, idx, pair, dec)
	t.Columns[0].Doc, t.Columns[1].Doc = "the first system of the pair", "the second system of the pair"
	return t, nil
}
