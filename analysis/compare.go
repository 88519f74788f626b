package analysis

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// Verdicts of a published-table comparison.
const (
	Reproduced    = "reproduced"
	Differs       = "differs"
	NotComparable = "not comparable"
)

// A Comparison is the verdict on one published table.
type Comparison struct {
	Benchmark string
	Table     string // the published table's name (its file name without .csv)
	Verdict   string
	// Reason says why a table is not comparable.
	Reason string
	// Compared counts the published cells compared; Cells lists those
	// that differ.
	Compared int
	Cells    []CellDiff
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
	// Computed is the computed value at the published precision (text
	// cells as they are); "" when not computed.
	Computed string
	// Diff is computed minus published, NaN unless both are numbers.
	Diff      float64
	Tolerance float64
	// Status is Reproduced, Differs, NotComputed, or "" for an empty
	// published cell.
	Status string
}

// A CellDiff is one published cell that the computed table does not
// reproduce.
type CellDiff struct {
	Row, Column         string
	Published, Computed string
	// Tolerance is the largest difference accepted for the cell.
	Tolerance float64
}

// Compare compares every non-empty cell of a published table with the
// computed table of the same name. Rows are matched on the published
// table's first column (with the next ones when the first does not
// identify a row alone), columns by name. A numeric cell is reproduced
// when the computed value lies within tol of it; tol < 0 means half a unit
// in the published value's last printed digit. Text cells must be equal.
// A published column with values that the computed table lacks is named
// in the reason ("not comparable: column X not computed"): the verdict is
// then Differs if a compared cell differs, else NotComparable, never
// Reproduced. computed may be nil.
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
			cc := ComparedCell{Published: strings.TrimSpace(prow[i]), Diff: math.NaN()}
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
	for ri, prow := range pub.Rows {
		crow, ok := rows[rowKey(prow[:nk])]
		c.Rows[ri].Found = ok
		for i := nk; i < len(prow); i++ {
			p := strings.TrimSpace(prow[i])
			if p == "" || cols[i] < 0 {
				continue
			}
			cc := &c.Rows[ri].Cells[i-nk]
			c.Compared++
			d := CellDiff{Row: strings.Join(prow[:nk], " / "), Column: pub.Header[i], Published: p}
			if !ok {
				d.Computed = "(no row)"
				c.Cells = append(c.Cells, d)
				continue
			}
			cell := crow[cols[i]]
			cc.Status = Differs
			pv, err := strconv.ParseFloat(p, 64)
			if err != nil {
				d.Computed = cell.Text
				if cell.IsNum {
					d.Computed = cell.Format(computed.Columns[cols[i]].Decimals)
				}
				cc.Computed = d.Computed
				if d.Computed != p {
					c.Cells = append(c.Cells, d)
				} else {
					cc.Status = Reproduced
				}
				continue
			}
			d.Tolerance = tol
			if tol < 0 {
				d.Tolerance = HalfUnit(p)
			}
			cc.Tolerance = d.Tolerance
			switch {
			case !cell.IsNum:
				d.Computed = cell.Format(0)
				cc.Computed = d.Computed
			default:
				d.Computed = strconv.FormatFloat(cell.Num, 'f', decimalsOf(p)+2, 64)
				cc.Computed = strconv.FormatFloat(cell.Num, 'f', decimalsOf(p), 64)
				cc.Diff = cell.Num - pv
				if math.Abs(cell.Num-pv) <= d.Tolerance+1e-9*math.Max(1, math.Abs(pv)) {
					cc.Status = Reproduced
					continue
				}
			}
			c.Cells = append(c.Cells, d)
		}
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
	case c.Compared == 0:
		return notComparable("the published table has no values in computed columns")
	case len(c.Cells) > 0:
		c.Verdict, c.Reason = Differs, uncomputed
	case uncomputed != "":
		return notComparable("%s (the %d cells compared are reproduced)", uncomputed, c.Compared)
	default:
		c.Verdict = Reproduced
	}
	return c
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
// published table, and every differing cell.
func ComparisonTables(cs []Comparison) (verdicts, cells *Table) {
	verdicts = &Table{
		Benchmark: "comparison", Name: "verdicts", Title: "Published tables: reproduced or not",
		Caption: "Every published cell compared with the computed one; tolerance half a unit in the last printed digit unless configured.",
		Columns: []Column{
			{Name: "benchmark"}, {Name: "table"}, {Name: "verdict"},
			{Name: "cells_compared", Title: "cells compared"}, {Name: "cells_differ", Title: "cells differing"},
			{Name: "reason"},
		},
	}
	cells = &Table{
		Benchmark: "comparison", Name: "cells", Title: "Published cells that differ",
		Columns: []Column{
			{Name: "benchmark"}, {Name: "table"}, {Name: "row"}, {Name: "column"},
			{Name: "published"}, {Name: "computed"}, {Name: "tolerance", Decimals: 4},
		},
	}
	for _, c := range cs {
		verdicts.AddRow(Text(c.Benchmark), Text(c.Table), Text(c.Verdict), Int(c.Compared), Int(len(c.Cells)), Text(c.Reason))
		for _, d := range c.Cells {
			cells.AddRow(Text(c.Benchmark), Text(c.Table), Text(d.Row), Text(d.Column), Text(d.Published), Text(d.Computed), Number(d.Tolerance))
		}
	}
	return verdicts, cells
}
