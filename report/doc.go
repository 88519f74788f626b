// Package report renders analysis tables in five formats, each by its own
// writer over the same model (analysis.Table):
//
//   - WriteTerminal: a plain ASCII table fitted to a terminal width, best
//     values suffixed "**" and second-best values "_".
//   - WriteCSV: RFC 4180, UTF-8, CRLF line ends, one header row of column
//     names; text that a spreadsheet would run as a formula is neutralised.
//   - WriteJSON: {"table", "benchmark", "title", "caption", "columns",
//     "rows", "notes"}, rows as objects keyed by column name in column
//     order, undefined numbers as null.
//   - WriteLaTeX: a booktabs table, best in \textbf, second best in
//     \underline, all text escaped.
//   - WriteWorkbook: an XLSX workbook with a README sheet, a Provenance
//     sheet and one sheet per table.
//
// WriteItemsJSONL and WriteItemsCSV write a benchmark's item records
// (analysis.Items), the rows its tables are computed from; WriteItems
// writes both from one pass over the rows.
//
// WriteAllHashed writes every format for a set of results under one
// output folder, each file written as it is rendered, and WriteSumsOf
// lists their SHA-256 hashes, taken from the bytes on their way to the
// files without reading the files back.
//
// Every writer is deterministic: the same table gives the same bytes, on
// any machine, locale or terminal. Numbers in CSV, JSON and XLSX cells
// follow one rule (FormatNumber): rounded to the column's decimals plus
// two digits, printed in the shortest form that reads back to the same
// value, never as "-0". Terminal, LaTeX and XLSX number formats show the
// column's decimals.
package report
