package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// Verdicts of a published-table comparison, and of each cell compared.
const (
	Reproduced = "reproduced"
	// WithinTwice is a cell (or a table whose worst cell is) off by more
	// than its tolerance but no more than twice it.
	WithinTwice   = "within 2x tolerance"
	Differs       = "differs"
	NotComparable = "not comparable"
)

// A Comparison is the verdict on one published table.
type Comparison struct {
	Benchmark string
	Table     string // the published table's name (its file name without .csv)
	// Verdict is the worst verdict of a cell compared: Reproduced,
	// WithinTwice or Differs; or NotComparable.
	Verdict string
	// Reason says why a table is not comparable.
	Reason string
	// Compared counts the published cells compared; All lists them in
	// the published table's order, and Cells those not reproduced.
	Compared int
	All      []CellDiff
	Cells    []CellDiff
	// Absent lists the published rows (by key) that the computed table
	// does not have, such as systems the bundle does not hold: their
	// cells are not compared.
	Absent []string
	// Uncomputed lists the published columns with values that the
	// computed table lacks: their cells are not compared, so the table is
	// never Reproduced while there are any.
	Uncomputed []string
	// Header is the published header and Keys the number of its leading
	// columns that identify a row; Rows are every published row in the
	// published order, each cell with its computed value, so that the
	// table can be laid out as the paper prints it.
	Header []string
	Keys   int
	Rows   []ComparedRow
}

// NotComputed is the status of a published cell whose column or row the
// computed table lacks.
const NotComputed = "not computed"

// A ComparedRow is one published row: its key and every value cell after
// the key columns.
type ComparedRow struct {
	Key   []string
	Found bool // the computed table has the row
	Cells []ComparedCell
}

// A ComparedCell is one published value beside the computed one.
type ComparedCell struct {
	Published string
	// Status is the cell's verdict (Reproduced, WithinTwice or Differs)
	// when it was compared; else NotComputed, or "" for an empty
	// published cell.
	Status string
	// Cell is the cell's comparison, an element of Comparison.All; nil
	// when the cell was not compared.
	Cell *CellDiff
}

// A CellDiff is one published cell compared with the computed one.
type CellDiff struct {
	Row, Column string
	// Published and Computed are the cells as text; Computed is printed
	// at the published precision.
	Published, Computed string
	// Numeric cells carry their values, the signed difference
	// Computed - Published, and the number of decimals printed in the
	// published table.
	Numeric                    bool
	PubValue, CompValue, Delta float64
	Decimals                   int
	// Tolerance is the largest difference accepted for the cell.
	Tolerance float64
	// Verdict is Reproduced, WithinTwice or Differs.
	Verdict string
}

// Compare compares every non-empty cell of a published table with the
// computed table of the same name. Rows are matched on the published
// table's first column (with the next ones when the first does not
// identify a row alone), columns by name. A published row without a
// computed row (a system the bundle does not have) is listed in Absent and
// not compared. A numeric cell is reproduced when the computed value lies
// within tol of it, within 2x tolerance when it lies within twice that;
// tol < 0 means half a unit in the published value's last printed digit.
// Text cells must be equal. A published column with values that the
// computed table lacks is named in the reason ("not comparable: column X
// not computed"): the verdict is then the worst compared cell's if that
// is not reproduced, else NotComparable, never Reproduced. computed may be
// nil.
func Compare(benchmark string, pub *results.CSVTable, computed *Table, tol float64) Comparison {
	name := strings.TrimSuffix(pub.File[strings.LastIndex(pub.File, "/")+1:], ".csv")
	c := Comparison{Benchmark: benchmark, Table: name}
	notComparable := func(format string, args ...any) Comparison {
		c.Verdict, c.Reason = NotComparable, fmt.Sprintf(format, args...)
		return c
	}
	if len(pub.Header) < 2 {
		return notComparable("published table has no value columns")
	}
	nk := keyColumns(pub)
	c.Header, c.Keys = slices.Clone(pub.Header), nk
	for _, prow := range pub.Rows {
		r := ComparedRow{Key: slices.Clone(prow[:nk])}
		for i := nk; i < len(prow); i++ {
			cc := ComparedCell{Published: strings.TrimSpace(prow[i])}
			if cc.Published != "" {
				cc.Status = NotComputed
			}
			r.Cells = append(r.Cells, cc)
		}
		c.Rows = append(c.Rows, r)
	}
	if computed == nil {
		return notComparable("no computed table %q", name)
	}
	kcols := make([]int, nk)
	for i := range nk {
		if kcols[i] = computed.Col(pub.Header[i]); kcols[i] < 0 {
			return notComparable("computed table has no key column %q", pub.Header[i])
		}
	}
	rowKey := func(cells []string) string { return strings.Join(cells, "\x00") }
	rows := make(map[string][]Cell, len(computed.Rows))
	for _, r := range computed.Rows {
		var k []string
		for _, kc := range kcols {
			k = append(k, r[kc].Text)
		}
		rows[rowKey(k)] = r
	}
	cols := make([]int, len(pub.Header))
	shared := 0
	for i, h := range pub.Header {
		cols[i] = computed.Col(h)
		if i >= nk && cols[i] >= 0 {
			shared++
		}
		if i >= nk && cols[i] < 0 && slices.ContainsFunc(pub.Rows, func(r []string) bool { return strings.TrimSpace(r[i]) != "" }) {
			c.Uncomputed = append(c.Uncomputed, h)
		}
	}
	if shared == 0 {
		return notComparable("no published column (%s) is computed", strings.Join(pub.Header[nk:], ", "))
	}
	worst := Reproduced
	var at []*ComparedCell // the cell of each element of c.All
	for ri, prow := range pub.Rows {
		crow, ok := rows[rowKey(prow[:nk])]
		c.Rows[ri].Found = ok
		if !ok {
			c.Absent = append(c.Absent, strings.Join(prow[:nk], " / "))
			continue
		}
		for i := nk; i < len(prow); i++ {
			p := strings.TrimSpace(prow[i])
			if p == "" || cols[i] < 0 {
				continue
			}
			cc := &c.Rows[ri].Cells[i-nk]
			c.Compared++
			d := compareCell(p, crow[cols[i]], computed.Columns[cols[i]], tol)
			d.Row, d.Column = strings.Join(prow[:nk], " / "), pub.Header[i]
			c.All, at = append(c.All, d), append(at, cc)
			if d.Verdict != Reproduced {
				c.Cells = append(c.Cells, d)
			}
			if verdictRank(d.Verdict) > verdictRank(worst) {
				worst = d.Verdict
			}
			cc.Status = d.Verdict
		}
	}
	for k, cc := range at {
		cc.Cell = &c.All[k]
	}
	uncomputed := ""
	switch len(c.Uncomputed) {
	case 0:
	case 1:
		uncomputed = fmt.Sprintf("not comparable: column %s not computed", c.Uncomputed[0])
	default:
		uncomputed = fmt.Sprintf("not comparable: columns %s not computed", strings.Join(c.Uncomputed, ", "))
	}
	switch {
	case c.Compared == 0 && len(c.Absent) == len(pub.Rows) && len(c.Absent) > 0:
		return notComparable("none of the %d published rows is in the bundle", len(c.Absent))
	case c.Compared == 0:
		return notComparable("the published table has no values in computed columns")
	case worst != Reproduced:
		c.Verdict, c.Reason = worst, uncomputed
	case uncomputed != "":
		return notComparable("%s (the %d cells compared are reproduced)", uncomputed, c.Compared)
	default:
		c.Verdict = Reproduced
	}
	return c
}

// compareCell compares published text p with computed cell cell of
// column col.
func compareCell(p string, cell Cell, col Column, tol float64) CellDiff {
	d := CellDiff{Published: p, Verdict: Differs}
	pv, err := strconv.ParseFloat(p, 64)
	if err != nil || math.IsNaN(pv) || math.IsInf(pv, 0) {
		d.Computed = cell.Format(cell.DecimalsIn(col))
		if d.Computed == p {
			d.Verdict = Reproduced
		}
		return d
	}
	d.Tolerance = tol
	if tol < 0 {
		d.Tolerance = HalfUnit(p)
	}
	d.Decimals = decimalsOf(p)
	if !cell.IsNum {
		d.Computed = cell.Format(0)
		return d
	}
	d.Numeric, d.PubValue, d.CompValue, d.Delta = true, pv, cell.Num, cell.Num-pv
	d.Computed = cell.Format(d.Decimals)
	slack := 1e-9 * math.Max(1, math.Abs(pv))
	switch off := math.Abs(d.Delta); {
	case off <= d.Tolerance+slack:
		d.Verdict = Reproduced
	case off <= 2*d.Tolerance+slack:
		d.Verdict = WithinTwice
	}
	return d
}

// verdictRank orders cell verdicts from best to worst.
func verdictRank(v string) int {
	switch v {
	case Reproduced:
		return 0
	case WithinTwice:
		return 1
	}
	return 2
}

// keyColumns returns how many leading columns identify a published row:
// the first column, extended by the next ones until no two rows share a
// key (a tolerance table keyed by kind and applies_to, say).
func keyColumns(pub *results.CSVTable) int {
	for k := 1; k < len(pub.Header)-1; k++ {
		seen := map[string]bool{}
		unique := true
		for _, r := range pub.Rows {
			key := strings.Join(r[:k], "\x00")
			unique = unique && !seen[key]
			seen[key] = true
		}
		if unique {
			return k
		}
	}
	return max(1, len(pub.Header)-1)
}

// HalfUnit returns half a unit in the last printed digit of a decimal
// number: 0.005 for "58.58", 0.5 for "104".
func HalfUnit(s string) float64 { return 0.5 * math.Pow(10, -float64(decimalsOf(s))) }

func decimalsOf(s string) int {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// ComparisonTables renders comparisons as two tables: one verdict per
// published table (with the count of cells of each verdict and of the
// published rows the bundle lacks), and every compared cell with the
// published and computed values side by side at the published
// precision, their signed difference and its verdict.
func ComparisonTables(cs []Comparison) (verdicts, cells *Table) {
	verdicts = &Table{
		Benchmark: "comparison", Name: "verdicts", Title: "Published tables: reproduced or not",
		Caption: "Every published cell of a row the bundle has, compared with the computed one; tolerance half a unit in the last printed digit unless configured. A table's verdict is its worst cell's.",
		Columns: []Column{
			{Name: "benchmark"}, {Name: "table"}, {Name: "verdict"},
			{Name: "cells_compared", Title: "cells compared"},
			{Name: "cells_reproduced", Title: "reproduced"},
			{Name: "cells_within_2x", Title: "within 2x tolerance", Doc: "off by more than the tolerance but at most twice it"},
			{Name: "cells_differ", Title: "differing"},
			{Name: "rows_absent", Title: "rows not in bundle", Doc: "published rows (systems) the bundle does not have; not compared"},
			{Name: "reason"},
		},
	}
	cells = &Table{
		Benchmark: "comparison", Name: "cells", Title: "Published and computed cells",
		Caption: "Every compared cell: the published value, the computed one at the published precision, the signed difference computed - published, and the verdict (reproduced within the tolerance, within 2x tolerance, or differs).",
		Columns: []Column{
			{Name: "benchmark"}, {Name: "table"}, {Name: "row"}, {Name: "column"},
			{Name: "published"}, {Name: "computed"},
			{Name: "difference", Doc: "computed - published"},
			{Name: "tolerance", Decimals: 4}, {Name: "verdict"},
		},
	}
	for _, c := range cs {
		within := 0
		for _, d := range c.Cells {
			if d.Verdict == WithinTwice {
				within++
			}
		}
		verdicts.AddRow(Text(c.Benchmark), Text(c.Table), Text(c.Verdict), Int(c.Compared),
			Int(c.Compared-len(c.Cells)), Int(within), Int(len(c.Cells)-within), Int(len(c.Absent)), Text(c.Reason))
		for _, d := range c.All {
			pub, comp, diff, tol := Text(d.Published), Text(d.Computed), Text(""), Text("")
			if d.Numeric {
				pub, comp, diff = NumberDecimals(d.PubValue, d.Decimals), NumberDecimals(d.CompValue, d.Decimals), NumberDecimals(d.Delta, d.Decimals)
			}
			if d.Tolerance > 0 || d.Numeric {
				tol = NumberDecimals(d.Tolerance, min(d.Decimals+1, 15))
			}
			cells.AddRow(Text(c.Benchmark), Text(c.Table), Text(d.Row), Text(d.Column), pub, comp, diff, tol, Text(d.Verdict))
		}
	}
	return verdicts, cells
}
