package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/analysis"
)

// WriteJSON writes t as one JSON object, indented by two spaces:
//
//	{"table": name, "benchmark": name, "title": ..., "caption": ...,
//	 "columns": [{"name", "title", "unit", "decimals", "better"}],
//	 "rows": [{column name: value}], "notes": [...]}
//
// Row keys come in column order. A value is a string for text, a number
// (FormatNumber) for numbers and null for undefined cells. "better" is
// "higher", "lower" or "". Strings are escaped so that the output can be
// embedded in HTML (<, > and & as \u escapes).
func WriteJSON(w io.Writer, t *analysis.Table) error {
	return writeJSON(w, t, false)
}

// writeJSON is WriteJSON; when synthetic, the object starts with
// "synthetic": true and "synthetic_note" saying what that means.
func writeJSON(w io.Writer, t *analysis.Table, synthetic bool) error {
	if err := check(t); err != nil {
		return fmt.Errorf("report: json: %w", err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	if synthetic {
		b.WriteString(`"synthetic":true,"synthetic_note":`)
		str(&b, SyntheticNote)
		b.WriteByte(',')
	}
	b.WriteString(`"table":`)
	str(&b, t.Name)
	b.WriteString(`,"benchmark":`)
	str(&b, t.Benchmark)
	b.WriteString(`,"title":`)
	str(&b, t.Title)
	b.WriteString(`,"caption":`)
	str(&b, t.Caption)
	b.WriteString(`,"columns":[`)
	for j, c := range t.Columns {
		if j > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":`)
		str(&b, c.Name)
		b.WriteString(`,"title":`)
		str(&b, c.Header())
		b.WriteString(`,"unit":`)
		str(&b, c.Unit)
		fmt.Fprintf(&b, `,"decimals":%d,"better":`, c.Decimals)
		str(&b, better(c.Better))
		b.WriteByte('}')
	}
	b.WriteString(`],"rows":[`)
	for i, r := range t.Rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, c := range r {
			if j > 0 {
				b.WriteByte(',')
			}
			str(&b, t.Columns[j].Name)
			b.WriteByte(':')
			switch {
			case c.Undef:
				b.WriteString("null")
			case c.IsNum:
				b.WriteString(FormatNumber(c, c.DecimalsIn(t.Columns[j])))
			default:
				str(&b, c.Text)
			}
		}
		b.WriteByte('}')
	}
	b.WriteString(`],"notes":[`)
	for i, n := range t.Notes {
		if i > 0 {
			b.WriteByte(',')
		}
		str(&b, n)
	}
	b.WriteString("]}")
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return fmt.Errorf("report: json: table %s: %w", t.Name, err)
	}
	out.WriteByte('\n')
	if _, err := out.WriteTo(w); err != nil {
		return fmt.Errorf("report: json: table %s: %w", t.Name, err)
	}
	return nil
}

// str appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func str(b *bytes.Buffer, s string) {
	q, err := json.Marshal(s)
	if err != nil {
		// json.Marshal never fails on a string.
		panic(err)
	}
	b.Write(q)
}

// better names a direction as in the JSON columns entry.
func better(b analysis.Better) string {
	switch b {
	case analysis.Higher:
		return "higher"
	case analysis.Lower:
		return "lower"
	}
	return ""
}
