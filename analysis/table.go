package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Better says which direction of a column is better, for best and
// second-best marks.
type Better int

// Directions of a column.
const (
	Neither Better = iota // no marks
	Higher                // higher is better
	Lower                 // lower is better
)

// A Column describes one table column.
type Column struct {
	// Name is the machine name: JSON key, CSV header and the column name
	// in a published table it is compared with.
	Name string
	// Title is the display header; Name when empty.
	Title string
	// Unit is the unit shown with the header ("%", "pts", ""), if any.
	Unit string
	// Decimals is the number of digits printed after the point for
	// numeric cells.
	Decimals int
	// Better marks the best and second-best cells when not Neither.
	Better Better
	// Doc says what the column is, for captions and workbook READMEs.
	Doc string
}

// Header is the column's display header.
func (c Column) Header() string {
	if c.Title != "" {
		return c.Title
	}
	return c.Name
}

// A Cell is a table value: a text, a number, or an undefined number with
// the reason it is undefined (never NaN).
type Cell struct {
	Text  string  // the text, or the reason a number is undefined
	Num   float64 // the number when IsNum
	IsNum bool
	// Undef marks an undefined number; Text says why.
	Undef bool
	// OwnDecimals says that the cell is printed with Decimals digits
	// after the point rather than with its column's (a column of values
	// from tables of different precision, such as the published cells of
	// a comparison).
	OwnDecimals bool `json:",omitempty"`
	Decimals    int  `json:",omitempty"`
}

// NumberDecimals returns a numeric cell printed with its own number of
// decimals, whatever its column's.
func NumberDecimals(x float64, decimals int) Cell {
	c := Number(x)
	if c.IsNum {
		c.OwnDecimals, c.Decimals = true, decimals
	}
	return c
}

// DecimalsIn returns the decimals c is printed with in column col: its
// own when it has them, else the column's.
func (c Cell) DecimalsIn(col Column) int {
	if c.OwnDecimals {
		return c.Decimals
	}
	return col.Decimals
}

// Text returns a text cell.
func Text(s string) Cell { return Cell{Text: s} }

// Number returns a numeric cell; NaN or an infinity becomes Undefined.
func Number(x float64) Cell {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return Undefined("not a number")
	}
	return Cell{Num: x, IsNum: true}
}

// Int returns a numeric cell holding n.
func Int(n int) Cell { return Cell{Num: float64(n), IsNum: true} }

// Undefined returns an undefined numeric cell with the reason.
func Undefined(reason string) Cell { return Cell{Text: reason, Undef: true} }

// Format formats c with the given number of decimals: numbers in fixed
// notation, rounded half away from zero (as Marks and spreadsheets round),
// undefined cells as "n/a". Negative zero prints as zero.
func (c Cell) Format(decimals int) string {
	switch {
	case c.Undef:
		return "n/a"
	case !c.IsNum:
		return c.Text
	}
	s := fmt.Sprintf("%.*f", decimals, round(c.Num, decimals))
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// A Mark is a cell's rank mark within its column.
type Mark int

// Marks of a cell.
const (
	NoMark Mark = iota
	Best        // printed bold
	Second      // printed underlined
)

// A Table is one named result table of a benchmark.
type Table struct {
	// Benchmark is the benchmark's machine name ("finresearchbench2").
	Benchmark string
	// Name is the table's machine name and file name ("pass_rates").
	Name    string
	Title   string
	Caption string
	Columns []Column
	Rows    [][]Cell
	// Notes are footnotes printed under the table.
	Notes []string
	// Charts draw this table's data; the site shows the table beside them.
	Charts []Chart
}

// AddRow appends a row; it panics when the number of cells is not the
// number of columns, which is a programming error.
func (t *Table) AddRow(cells ...Cell) {
	if len(cells) != len(t.Columns) {
		panic(fmt.Sprintf("analysis: table %s: row of %d cells, %d columns", t.Name, len(cells), len(t.Columns)))
	}
	t.Rows = append(t.Rows, cells)
}

// Col returns the index of the named column, or -1.
func (t *Table) Col(name string) int {
	return slices.IndexFunc(t.Columns, func(c Column) bool { return c.Name == name })
}

// Marks returns the mark of every row's cell in column col: the best
// value(s) Best, the next distinct value(s) Second. Values are compared
// after rounding to the column's decimals, so that what prints equal is
// marked equal. Columns with Better == Neither have no marks.
func (t *Table) Marks(col int) []Mark {
	marks := make([]Mark, len(t.Rows))
	c := t.Columns[col]
	if c.Better == Neither {
		return marks
	}
	var vals []float64
	for _, r := range t.Rows {
		if r[col].IsNum {
			vals = append(vals, round(r[col].Num, c.Decimals))
		}
	}
	slices.Sort(vals)
	vals = slices.Compact(vals)
	if c.Better == Higher {
		slices.Reverse(vals)
	}
	for i, r := range t.Rows {
		if !r[col].IsNum {
			continue
		}
		v := round(r[col].Num, c.Decimals)
		switch {
		case len(vals) > 0 && v == vals[0]:
			marks[i] = Best
		case len(vals) > 1 && v == vals[1]:
			marks[i] = Second
		}
	}
	return marks
}

// round rounds x to decimals digits, halves away from zero.
func round(x float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(x*p) / p
}
