package forecast

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
)

// render writes every table, the ranking, the problems and the details
// of res as plain text.
func render(res *analysis.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "ranking: %s\nmissing: %d synthetic: %v\n", strings.Join(res.Ranking, ", "), res.Missing, res.Synthetic)
	for _, t := range res.Tables {
		fmt.Fprintf(&b, "\n== %s: %s\n", t.Name, t.Title)
		var h []string
		for _, c := range t.Columns {
			h = append(h, c.Name)
		}
		b.WriteString(strings.Join(h, " | ") + "\n")
		for _, r := range t.Rows {
			var cells []string
			for i, c := range r {
				cells = append(cells, c.Format(t.Columns[i].Decimals))
			}
			b.WriteString(strings.Join(cells, " | ") + "\n")
		}
		for _, n := range t.Notes {
			b.WriteString("note: " + n + "\n")
		}
	}
	b.WriteString("\n== problems\n")
	for _, p := range res.Problems {
		b.WriteString(p + "\n")
	}
	b.WriteString("\n== details\n")
	for d := range res.EachDetail() {
		fmt.Fprintf(&b, "%s %s: %s: %s\n", d.Task, d.System, d.Score, d.Verdicts[0].Reasoning)
	}
	return b.String()
}

// TestGolden compares the fixture's whole result with
// testdata/fixture.golden; go test -update rewrites it.
func TestGolden(t *testing.T) {
	got := render(runFixture(t, nil))
	golden.Check(t, filepath.Join("testdata", "fixture.golden"), []byte(got))
}
