package report

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/analysis"
)

// WriteCSV writes t as RFC 4180 CSV in UTF-8 (no byte-order mark) with
// CRLF line ends: a header row of column names, then one record per row.
// Numbers follow FormatNumber; undefined cells are empty; text passes
// through CSVText, so that no field starts a spreadsheet formula.
func WriteCSV(w io.Writer, t *analysis.Table) error {
	if err := check(t); err != nil {
		return fmt.Errorf("report: csv: %w", err)
	}
	// A write error sticks in cw, which Error returns after the Flush.
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	rec := make([]string, len(t.Columns))
	for j, c := range t.Columns {
		rec[j] = CSVText(c.Name)
	}
	cw.Write(rec)
	for _, r := range t.Rows {
		for j, c := range r {
			switch {
			case c.Undef:
				rec[j] = ""
			case c.IsNum:
				rec[j] = FormatNumber(c, c.DecimalsIn(t.Columns[j]))
			default:
				rec[j] = CSVText(c.Text)
			}
		}
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("report: csv: table %s: %w", t.Name, err)
	}
	return nil
}

// CSVText neutralises text that a spreadsheet would run as a formula when
// it opens a CSV file: a value starting with '=', '+', '-', '@', a tab or
// a carriage return gets a leading apostrophe, which spreadsheets show as
// a text marker. Other text is returned unchanged. Quoting is left to the
// CSV writer.
func CSVText(s string) string {
	if s == "" {
		return s
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r':
		return "'" + s
	}
	return s
}
