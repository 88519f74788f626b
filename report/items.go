package report

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
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
	bw := bufio.NewWriterSize(w, 64<<10)
	names := make([][]byte, len(it.Fields))
	for j, f := range it.Fields {
		names[j] = append(appendJSONString(nil, f.Name), ':')
	}
	var b []byte
	n := 0
	for row := range it.Rows {
		n++
		if err := checkRow(it.Fields, n, row); err != nil {
			return fmt.Errorf("report: items jsonl: %w", err)
		}
		b = append(b[:0], '{')
		for j, v := range row {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, names[j]...)
			switch {
			case it.Fields[j].Kind == analysis.TextField:
				b = appendJSONString(b, v)
			case v == "":
				b = append(b, "null"...)
			default:
				b = append(b, v...)
			}
		}
		if synthetic {
			b = append(b, `,"synthetic":true`...)
		}
		b = append(b, "}\n"...)
		bw.Write(b) // a write error is kept and returned by Flush
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: items jsonl: %w", err)
	}
	return nil
}

// appendJSONString appends s as a JSON string, escaped as WriteJSON's
// strings are (json.Marshal: <, > and & as \u escapes, invalid UTF-8 as
// U+FFFD). Most item values are short ASCII ids, which need no escape and
// are copied as they are; anything else goes through json.Marshal. The
// item records of a full-scale run hold about 800,000 rows, and quoting
// every value with json.Marshal took most of their writing time.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// WriteItemsCSV writes it as CSV in WriteCSV's dialect: a header of field
// names, then one record per row; empty numbers and booleans are empty
// fields and text passes through CSVText.
func WriteItemsCSV(w io.Writer, it *analysis.Items) error {
	// A write error sticks in cw, which Error returns after the Flush.
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	rec := make([]string, len(it.Fields))
	for j, f := range it.Fields {
		rec[j] = CSVText(f.Name)
	}
	cw.Write(rec)
	n := 0
	for row := range it.Rows {
		n++
		if err := checkRow(it.Fields, n, row); err != nil {
			return fmt.Errorf("report: items csv: %w", err)
		}
		for j, v := range row {
			rec[j] = v
			if it.Fields[j].Kind == analysis.TextField {
				rec[j] = CSVText(v)
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: items csv: %w", err)
	}
	return nil
}

// checkRow refuses row n of the wrong length and number or boolean
// values that are not canonical, which would make invalid JSON.
func checkRow(fields []analysis.Field, n int, row []string) error {
	if len(row) != len(fields) {
		return fmt.Errorf("row %d: %d values, %d fields", n, len(row), len(fields))
	}
	for j, v := range row {
		if v == "" {
			continue
		}
		switch fields[j].Kind {
		case analysis.NumField:
			if !isJSONNumber(v) {
				return fmt.Errorf("row %d: field %s: %q is not a number", n, fields[j].Name, v)
			}
		case analysis.BoolField:
			if v != "true" && v != "false" {
				return fmt.Errorf("row %d: field %s: %q is not a boolean", n, fields[j].Name, v)
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
