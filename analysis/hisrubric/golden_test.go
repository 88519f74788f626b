package hisrubric

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

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
	file := filepath.Join("testdata", "fixture.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got: %s\nwant: %s", i+1, g, w)
			}
		}
	}
}
