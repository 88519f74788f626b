package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// extraDigits is how many digits beyond a column's printed decimals the
// data formats (CSV, JSON, XLSX values) keep: enough to recompute a
// printed rounding, few enough that floating-point noise never shows.
const extraDigits = 2

// maxDecimals bounds a column's decimals: float64 carries about 17
// significant digits, so more would print noise.
const maxDecimals = 15

// Value returns the value of numeric cell c in a column with the given
// decimals, as stored by the data formats: rounded (half to even on the
// exact binary value, as strconv does) to decimals+2 digits after the
// point, with negative zero made zero.
func Value(c analysis.Cell, decimals int) float64 {
	s := strconv.FormatFloat(c.Num, 'f', decimals+extraDigits, 64)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v == 0 {
		// The string came from FormatFloat of a finite number, so
		// ParseFloat cannot fail; zero covers negative zero.
		return 0
	}
	return v
}

// FormatNumber formats numeric cell c of a column with the given decimals
// for the data formats: Value(c, decimals) in the shortest representation
// that parses back to it, in the notation encoding/json uses (exponent
// only below 1e-6 or from 1e21 up).
func FormatNumber(c analysis.Cell, decimals int) string {
	v := Value(c, decimals)
	format := byte('f')
	if a := math.Abs(v); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(make([]byte, 0, 24), v, format, -1, 64)
	if format == 'e' {
		// Like encoding/json: 1e-07 becomes 1e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return string(b)
}

// header is a column's display header with its unit in parentheses.
func header(c analysis.Column) string {
	if c.Unit == "" {
		return c.Header()
	}
	return c.Header() + " (" + c.Unit + ")"
}

// check reports a table the writers cannot render faithfully.
func check(t *analysis.Table) error {
	if t == nil {
		return fmt.Errorf("nil table")
	}
	if len(t.Columns) == 0 {
		return fmt.Errorf("table %s: no columns", t.Name)
	}
	seen := make(map[string]bool, len(t.Columns))
	for i, c := range t.Columns {
		switch {
		case c.Name == "":
			return fmt.Errorf("table %s: column %d: empty name", t.Name, i+1)
		case seen[c.Name]:
			return fmt.Errorf("table %s: column %s: duplicate name", t.Name, c.Name)
		case c.Decimals < 0 || c.Decimals > maxDecimals:
			return fmt.Errorf("table %s: column %s: decimals %d outside 0..%d", t.Name, c.Name, c.Decimals, maxDecimals)
		}
		seen[c.Name] = true
	}
	for i, r := range t.Rows {
		if len(r) != len(t.Columns) {
			return fmt.Errorf("table %s: row %d: %d cells, %d columns", t.Name, i+1, len(r), len(t.Columns))
		}
		for j, c := range r {
			if c.IsNum && (math.IsNaN(c.Num) || math.IsInf(c.Num, 0)) {
				return fmt.Errorf("table %s: row %d: column %s: %v is not a number", t.Name, i+1, t.Columns[j].Name, c.Num)
			}
			if c.OwnDecimals && (c.Decimals < 0 || c.Decimals > maxDecimals) {
				return fmt.Errorf("table %s: row %d: column %s: decimals %d outside 0..%d", t.Name, i+1, t.Columns[j].Name, c.Decimals, maxDecimals)
			}
		}
	}
	return nil
}

// marks returns every column's marks, by column then row, and whether any
// cell is marked.
func marks(t *analysis.Table) ([][]analysis.Mark, bool) {
	m := make([][]analysis.Mark, len(t.Columns))
	any := false
	for j := range t.Columns {
		m[j] = t.Marks(j)
		for _, k := range m[j] {
			any = any || k != analysis.NoMark
		}
	}
	return m, any
}

// numeric reports whether column j holds numbers: every cell a number or
// undefined, and at least one cell.
func numeric(t *analysis.Table, j int) bool {
	for _, r := range t.Rows {
		if !r[j].IsNum && !r[j].Undef {
			return false
		}
	}
	return len(t.Rows) > 0
}

// oneLine makes s printable on one line: invalid UTF-8, control
// characters (including tabs, newlines and the escape that starts a
// terminal control sequence), line and paragraph separators and
// bidirectional controls (which reorder what follows) become spaces.
func oneLine(s string) string {
	if isPlain(s) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				b.WriteByte(' ')
				continue
			}
		}
		if results.Unprintable(r) {
			b.WriteByte(' ')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isPlain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}
