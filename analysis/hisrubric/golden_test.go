package hisrubric

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/finrepro/finrepro/analysis"
)

// render writes every table of res as text, then the problems.
func render(res *analysis.Result) string {
	var b strings.Builder
	for _, t := range res.Tables {
		b.WriteString("## " + t.Name + "\n")
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
		b.WriteString("\n")
	}
	b.WriteString("## problems\n" + strings.Join(res.Problems, "\n") + "\n")
	return b.String()
}

func TestFixtureGolden(t *testing.T) {
	res, _ := runFixture(t, nil, false)
	got := render(res)
	golden.Check(t, filepath.Join("testdata", "fixture.golden"), []byte(got))
}
