package site

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis"
)

// matrixAlpha is the level below which a Holm-adjusted p-value marks a
// cell of a pairwise matrix.
const matrixAlpha = 0.05

// maxMatrix is the most systems a pairwise matrix shows; a larger table
// has its rows only.
const maxMatrix = 40

// A matrixView is a table of paired comparisons (pairs, requested_pairs)
// laid out as systems by systems: the cell of row A and column B holds
// the mean difference A - B, marked when its Holm-adjusted p-value is
// below 0.05, with the interval and the p-values in its tooltip.
type matrixView struct {
	Systems []string
	Rows    []matrixRow
}

type matrixRow struct {
	System string
	Cells  []matrixCell
}

type matrixCell struct {
	Text  string // signed difference, "" for no comparison
	Title string // tooltip: the pair, interval and p-values
	Sig   bool   // p Holm < 0.05
	Self  bool   // the diagonal
}

// pairMatrix lays out a table of paired comparisons as a matrix, or
// returns nil when t is not such a table or has too many systems. Each
// row of t fills two cells: (system, next) with the difference and
// (next, system) with its negation and the interval reversed.
func pairMatrix(t *analysis.Table) *matrixView {
	if t.Name != "pairs" && t.Name != "requested_pairs" {
		return nil
	}
	col := map[string]int{}
	for _, n := range []string{"system", "next", "difference", "ci_lo", "ci_hi", "p", "p_holm"} {
		if col[n] = t.Col(n); col[n] < 0 {
			return nil
		}
	}
	d := t.Columns[col["difference"]].Decimals
	idx := map[string]int{}
	var systems []string
	add := func(s string) int {
		i, ok := idx[s]
		if !ok {
			i = len(systems)
			idx[s] = i
			systems = append(systems, s)
		}
		return i
	}
	type entry struct {
		a, b int
		r    []analysis.Cell
	}
	var entries []entry
	for _, r := range t.Rows {
		a, b := r[col["system"]].Format(0), r[col["next"]].Format(0)
		if a == b {
			continue
		}
		entries = append(entries, entry{add(a), add(b), r})
	}
	if len(systems) < 2 || len(systems) > maxMatrix {
		return nil
	}
	m := &matrixView{Systems: systems}
	for i, s := range systems {
		row := matrixRow{System: s, Cells: make([]matrixCell, len(systems))}
		row.Cells[i] = matrixCell{Text: "—", Self: true}
		m.Rows = append(m.Rows, row)
	}
	signed := func(x float64) string {
		x = round(x, d)
		if x > 0 {
			return "+" + fmt.Sprintf("%.*f", d, x)
		}
		return fmt.Sprintf("%.*f", d, x)
	}
	for _, e := range entries {
		r := e.r
		diff, lo, hi := r[col["difference"]], r[col["ci_lo"]], r[col["ci_hi"]]
		p, ph := r[col["p"]], r[col["p_holm"]]
		for _, dir := range []int{1, -1} {
			a, b := e.a, e.b
			if dir < 0 {
				a, b = b, a
			}
			c := matrixCell{}
			if !isNum(diff) {
				c.Text = "n/a"
				c.Title = fmt.Sprintf("%s − %s: %s", systems[a], systems[b], diff.Text)
			} else {
				iv := "interval n/a"
				if isNum(lo) && isNum(hi) {
					l, h := lo.Num, hi.Num
					if dir < 0 {
						l, h = -hi.Num, -lo.Num
					}
					iv = fmt.Sprintf("95%% interval [%s, %s]", signed(l), signed(h))
				}
				c.Text = signed(float64(dir) * diff.Num)
				c.Title = fmt.Sprintf("%s − %s = %s, %s, p = %s, p Holm = %s",
					systems[a], systems[b], c.Text, iv, pText(p), pText(ph))
				c.Sig = isNum(ph) && ph.Num < matrixAlpha
				if c.Sig {
					c.Title += " (resolved)"
				}
			}
			m.Rows[a].Cells[b] = c
		}
	}
	return m
}

// pText prints a p-value to 4 decimals, or n/a.
func pText(c analysis.Cell) string {
	if !isNum(c) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", c.Num)
}
