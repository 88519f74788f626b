package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/analysis"
)

// ItemsName is the base name of a benchmark's item records: items.jsonl
// under json/<benchmark>/ and items.csv under csv/<benchmark>/. No table
// may be called so.
const ItemsName = "items"

// WriteItemsJSONL writes it as JSON Lines: one object per row, keys in
// field order, a string for text fields, a number or true/false for
// number and boolean fields and null for an empty one. When synthetic,
// every object ends with "synthetic": true (JSON Lines has no place for
// a file-level note). Strings are escaped as WriteJSON escapes them.
func WriteItemsJSONL(w io.Writer, it *analysis.Items, synthetic bool) error {
	if err := checkItems(it); err != nil {
		return fmt.Errorf("report: items jsonl: %w", err)
	}
	bw := bufio.NewWriter(w)
	names := make([][]byte, len(it.Fields))
	for j, f := range it.Fields {
		var b bytes.Buffer
		str(&b, f.Name)
		names[j] = append(b.Bytes(), ':')
	}
	var b bytes.Buffer
	for _, row := range it.Rows {
		b.Reset()
		b.WriteByte('{')
		for j, v := range row {
			if j > 0 {
				b.WriteByte(',')
			}
			b.Write(names[j])
			switch {
			case it.Fields[j].Kind == analysis.TextField:
				str(&b, v)
			case v == "":
				b.WriteString("null")
			default:
				b.WriteString(v)
			}
		}
		if synthetic {
			b.WriteString(`,"synthetic":true`)
		}
		b.WriteString("}\n")
		bw.Write(b.Bytes())
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: items jsonl: %w", err)
	}
	return nil
}

// WriteItemsCSV writes it as CSV in WriteCSV's dialect: a header of field
// names, then one record per row; empty numbers and booleans are empty
// fields and text passes through CSVText.
func WriteItemsCSV(w io.Writer, it *analysis.Items) error {
	if err := checkItems(it); err != nil {
		return fmt.Errorf("report: items csv: %w", err)
	}
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	rec := make([]string, len(it.Fields))
	for j, f := range it.Fields {
		rec[j] = CSVText(f.Name)
	}
	if err := cw.Write(rec); err != nil {
		return fmt.Errorf("report: items csv: %w", err)
	}
	for _, row := range it.Rows {
		for j, v := range row {
			rec[j] = v
			if it.Fields[j].Kind == analysis.TextField {
				rec[j] = CSVText(v)
			}
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("report: items csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: items csv: %w", err)
	}
	return nil
}

// checkItems refuses rows of the wrong length and number or boolean
// values that are not canonical, which would make invalid JSON.
func checkItems(it *analysis.Items) error {
	for i, row := range it.Rows {
		if len(row) != len(it.Fields) {
			return fmt.Errorf("row %d: %d values, %d fields", i+1, len(row), len(it.Fields))
		}
		for j, v := range row {
			if v == "" {
				continue
			}
			switch it.Fields[j].Kind {
			case analysis.NumField:
				if !isJSONNumber(v) {
					return fmt.Errorf("row %d: field %s: %q is not a number", i+1, it.Fields[j].Name, v)
				}
			case analysis.BoolField:
				if v != "true" && v != "false" {
					return fmt.Errorf("row %d: field %s: %q is not a boolean", i+1, it.Fields[j].Name, v)
				}
			}
		}
	}
	return nil
}

// isJSONNumber reports whether s is a JSON number
// (-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?).
func isJSONNumber(s string) bool {
	i := 0
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	if n := digits(); n == 0 || (n > 1 && s[start] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
