package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

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
		if err := cw.bw.Flush(); err != nil {
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
	bw     *bufio.Writer
	fields []analysis.Field
	rec    []string
	b      []byte
}

// newCSVWriter writes the header; a write error is kept and returned by
// the Flush.
func newCSVWriter(w io.Writer, fields []analysis.Field) *csvWriter {
	cw := &csvWriter{bw: bufio.NewWriterSize(w, 64<<10), fields: fields, rec: make([]string, len(fields))}
	for j, f := range fields {
		cw.rec[j] = CSVText(f.Name)
	}
	cw.b = appendCSVRecord(cw.b[:0], cw.rec)
	cw.bw.Write(cw.b)
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
	cw.b = appendCSVRecord(cw.b[:0], cw.rec)
	cw.bw.Write(cw.b)
}

// appendCSVRecord appends rec as the line encoding/csv's Writer writes
// with UseCRLF (WriteCSV's dialect): fields separated by commas; a field
// that holds a comma, a quote, CR or LF, starts with a space
// (unicode.IsSpace) or is \. is quoted, its quotes doubled, each LF
// written as CRLF and each CR dropped; CRLF at the end. Appending to one
// buffer instead of the Writer's per-field writes roughly halves the cost
// of the item records' CSV, 3.2 % of a full-scale reproduce rerun before
// (BenchmarkItemsCSV); TestAppendCSVRecord and FuzzAppendCSVRecord hold
// it to encoding/csv.
func appendCSVRecord(b []byte, rec []string) []byte {
	for n, field := range rec {
		if n > 0 {
			b = append(b, ',')
		}
		if !csvNeedsQuotes(field) {
			b = append(b, field...)
			continue
		}
		b = append(b, '"')
		for len(field) > 0 {
			i := strings.IndexAny(field, "\"\r\n")
			if i < 0 {
				i = len(field)
			}
			b = append(b, field[:i]...)
			field = field[i:]
			if len(field) > 0 {
				switch field[0] {
				case '"':
					b = append(b, `""`...)
				case '\n':
					b = append(b, "\r\n"...)
				} // a CR is dropped: with UseCRLF the LF after it writes one
				field = field[1:]
			}
		}
		b = append(b, '"')
	}
	return append(b, "\r\n"...)
}

// csvNeedsQuotes reports whether encoding/csv's Writer quotes field.
func csvNeedsQuotes(field string) bool {
	if field == "" {
		return false
	}
	if field == `\.` {
		return true
	}
	for i := 0; i < len(field); i++ {
		if c := field[i]; c == '\n' || c == '\r' || c == '"' || c == ',' {
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(field)
	return unicode.IsSpace(r)
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
