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
	return WriteItems(w, nil, it, synthetic)
}

// WriteItemsCSV writes it as CSV in WriteCSV's dialect: a header of field
// names, then one record per row; empty numbers and booleans are empty
// fields and text passes through CSVText.
func WriteItemsCSV(w io.Writer, it *analysis.Items) error {
	return WriteItems(nil, w, it, false)
}

// WriteItems writes it to jsonlOut as WriteItemsJSONL does and to csvOut as
// WriteItemsCSV does, either writer nil for none, generating each row
// once for both.
func WriteItems(jsonlOut, csvOut io.Writer, it *analysis.Items, synthetic bool) error {
	var jw *jsonlWriter
	var cw *csvWriter
	if jsonlOut != nil {
		jw = newJSONLWriter(jsonlOut, it.Fields, synthetic)
	}
	if csvOut != nil {
		cw = newCSVWriter(csvOut, it.Fields)
	}
	n := 0
	for row := range it.Rows {
		n++
		if err := checkRow(it.Fields, n, row); err != nil {
			if jw != nil {
				return fmt.Errorf("report: items jsonl: %w", err)
			}
			return fmt.Errorf("report: items csv: %w", err)
		}
		if jw != nil {
			jw.row(row)
		}
		if cw != nil {
			cw.row(row)
		}
	}
	if jw != nil {
		if err := jw.bw.Flush(); err != nil {
			return fmt.Errorf("report: items jsonl: %w", err)
		}
	}
	if cw != nil {
		cw.cw.Flush()
		if err := cw.cw.Error(); err != nil {
			return fmt.Errorf("report: items csv: %w", err)
		}
	}
	return nil
}

// A jsonlWriter writes item rows as JSON Lines (see WriteItemsJSONL).
type jsonlWriter struct {
	bw        *bufio.Writer
	fields    []analysis.Field
	names     [][]byte // each field's name as a JSON key and colon
	synthetic bool
	b         []byte
}

func newJSONLWriter(w io.Writer, fields []analysis.Field, synthetic bool) *jsonlWriter {
	jw := &jsonlWriter{bw: bufio.NewWriterSize(w, 64<<10), fields: fields, synthetic: synthetic}
	jw.names = make([][]byte, len(fields))
	for j, f := range fields {
		jw.names[j] = append(appendJSONString(nil, f.Name), ':')
	}
	return jw
}

// row writes one checked row; a write error is kept and returned by the
// Flush.
func (jw *jsonlWriter) row(row []string) {
	b := append(jw.b[:0], '{')
	for j, v := range row {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, jw.names[j]...)
		switch {
		case jw.fields[j].Kind == analysis.TextField:
			b = appendJSONString(b, v)
		case v == "":
			b = append(b, "null"...)
		default:
			b = append(b, v...)
		}
	}
	if jw.synthetic {
		b = append(b, `,"synthetic":true`...)
	}
	b = append(b, "}\n"...)
	jw.bw.Write(b)
	jw.b = b
}

// A csvWriter writes item rows as CSV (see WriteItemsCSV).
type csvWriter struct {
	cw     *csv.Writer
	fields []analysis.Field
	rec    []string
}

// newCSVWriter writes the header; a write error sticks in the csv.Writer,
// whose Error returns it after the Flush.
func newCSVWriter(w io.Writer, fields []analysis.Field) *csvWriter {
	cw := &csvWriter{cw: csv.NewWriter(w), fields: fields, rec: make([]string, len(fields))}
	cw.cw.UseCRLF = true
	for j, f := range fields {
		cw.rec[j] = CSVText(f.Name)
	}
	cw.cw.Write(cw.rec)
	return cw
}

// row writes one checked row.
func (cw *csvWriter) row(row []string) {
	for j, v := range row {
		cw.rec[j] = v
		if cw.fields[j].Kind == analysis.TextField {
			cw.rec[j] = CSVText(v)
		}
	}
	cw.cw.Write(cw.rec)
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
