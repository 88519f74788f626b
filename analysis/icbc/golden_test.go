package icbc

import (
	"fmt"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
)

// render prints every table, the ranking and the problems of a result.
func render(res *analysis.Result) string {
	var b strings.Builder
	for _, t := range res.Tables {
		fmt.Fprintf(&b, "== %s\n", t.Name)
		var h []string
		for _, c := range t.Columns {
			h = append(h, c.Name)
		}
		fmt.Fprintln(&b, strings.Join(h, " | "))
		for _, r := range t.Rows {
			var cells []string
			for i, c := range r {
				cells = append(cells, c.Format(t.Columns[i].Decimals+2))
			}
			fmt.Fprintln(&b, strings.Join(cells, " | "))
		}
		for _, ch := range t.Charts {
			fmt.Fprintf(&b, "chart %s %s x=%s y=%v\n", ch.ID, ch.Kind, ch.X, ch.Y)
		}
	}
	fmt.Fprintf(&b, "== ranking\n%s\n== problems\n%s\n", strings.Join(res.Ranking, "\n"), strings.Join(res.Problems, "\n"))
	fmt.Fprintf(&b, "== details %d, missing %d, synthetic %v\n", len(res.AllDetails()), res.Missing, res.Synthetic)
	return b.String()
}

// TestGolden compares the fixture's full result with
// testdata/fixture.golden (refresh with go test -update).
func TestGolden(t *testing.T) {
	got := render(runFixture(t, fixtureInputs(), nil))
	golden.Check(t, "testdata/fixture.golden", []byte(got))
}
