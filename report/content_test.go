package report

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/analysis"
)

// openWorkbook opens the workbook in data, closed at the test's end.
func openWorkbook(t *testing.T, data []byte) *excelize.File {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// workbookContent describes what a reader sees in the workbook in data,
// one line per fact: the defined names (the autofilters' ranges), the
// active sheet and the parts with a selected tab, then for every sheet
// its dimension, frozen panes and column widths, and every cell that
// holds a value: its reference, kind (text or num), raw value, shown
// value when it differs and style.
func workbookContent(t *testing.T, data []byte) string {
	t.Helper()
	f := openWorkbook(t, data)
	var b strings.Builder
	for _, d := range f.GetDefinedName() {
		fmt.Fprintf(&b, "name %s %s %s\n", d.Name, d.Scope, d.RefersTo)
	}
	fmt.Fprintf(&b, "active %d\n", f.GetActiveSheetIndex())
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		xml, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(xml, []byte(`tabSelected="true"`)) {
			fmt.Fprintf(&b, "selected %s\n", zf.Name)
		}
	}
	for _, sheet := range f.GetSheetList() {
		dim, _ := f.GetSheetDimension(sheet)
		fmt.Fprintf(&b, "sheet %s %s\n", sheet, dim)
		if p, err := f.GetPanes(sheet); err == nil && p.Freeze {
			fmt.Fprintf(&b, "freeze x%d y%d %s %s\n", p.XSplit, p.YSplit, p.TopLeftCell, p.ActivePane)
		}
		rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		width := 0
		for _, r := range rows {
			width = max(width, len(r))
		}
		var ws []string
		for j := range width + 1 {
			w, _ := f.GetColWidth(sheet, colName(j))
			ws = append(ws, fmt.Sprint(w))
		}
		fmt.Fprintf(&b, "widths %s\n", strings.Join(ws, " "))
		for i, r := range rows {
			for j, raw := range r {
				ref := cellRef(j, i+1)
				if raw == "" {
					continue
				}
				typ, _ := f.GetCellType(sheet, ref)
				kind := "num"
				if typ == excelize.CellTypeSharedString || typ == excelize.CellTypeInlineString {
					kind = "text"
				} else if typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
					kind = fmt.Sprint("type", typ)
				}
				line := fmt.Sprintf("%s %s %q", ref, kind, raw)
				if shown, _ := f.GetCellValue(sheet, ref); shown != raw {
					line += fmt.Sprintf(" shown %q", shown)
				}
				id, _ := f.GetCellStyle(sheet, ref)
				st, err := f.GetStyle(id)
				if err != nil {
					t.Fatal(err)
				}
				if s := describeStyle(st); s != "" {
					line += " " + s
				}
				b.WriteString(line + "\n")
			}
		}
	}
	return b.String()
}

// describeStyle names what st sets: bold, underline, colour, bottom
// border, number format, alignment, wrapping.
func describeStyle(st *excelize.Style) string {
	var parts []string
	if ft := st.Font; ft != nil {
		if ft.Bold {
			parts = append(parts, "bold")
		}
		if ft.Underline != "" {
			parts = append(parts, "underline="+ft.Underline)
		}
		if ft.Color != "" {
			parts = append(parts, "color="+ft.Color)
		}
	}
	for _, bd := range st.Border {
		parts = append(parts, fmt.Sprintf("border=%s/%d/%s", bd.Type, bd.Style, bd.Color))
	}
	if st.CustomNumFmt != nil {
		parts = append(parts, "fmt="+*st.CustomNumFmt)
	} else if st.NumFmt != 0 {
		parts = append(parts, fmt.Sprint("numfmt=", st.NumFmt))
	}
	if a := st.Alignment; a != nil {
		if a.Horizontal != "" {
			parts = append(parts, "h="+a.Horizontal)
		}
		if a.Vertical != "" {
			parts = append(parts, "v="+a.Vertical)
		}
		if a.WrapText {
			parts = append(parts, "wrap")
		}
	}
	return strings.Join(parts, ",")
}

// TestWorkbookContent reads back every cell (kind, value, shown value,
// style), frozen pane, autofilter and column width of a workbook of three
// tables and its README and Provenance sheets. The expectation is derived
// by hand from WriteWorkbook's documentation:
//   - header cells (and the sheet lists' headers) are bold with a thin
//     bottom border; the synthetic banner bold red (C00000);
//   - widths: the widest cell's display width plus 2, within 8..60
//     ("Accuracy (%)" is 12 wide: 14; "cost ($)" is 8: 10; the 70-wide
//     long text is cut to 60 and its column's texts wrap); 9.140625 is
//     excelize's default width of the first column not set;
//   - accuracy: 71.234 best (bold), 65.95 second (underlined), shown with
//     one decimal ("0.0"); N with none ("0");
//   - cost (lower is better): 1.5 and 1.499 both show 1.50 and tie for
//     best (bold), 2.125 is second (underlined), undefined is "n/a"
//     aligned right;
//   - one: a single column freezes row 1 only (pane bottomLeft at A2);
//     its notes follow a blank row, numbered;
//   - every table's autofilter covers the header and the rows;
//   - README, the first sheet, is the active and selected one.
func TestWorkbookContent(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteWorkbook(&buf, "Test results", contentTables(), testProv()); err != nil {
		t.Fatal(err)
	}
	const banner = "SYNTHETIC DATA: some or all results come from simulated replies, not from real model outputs; they show how finrepro works, not how the systems perform."
	head := "bold,border=bottom/1/000000"
	want := strings.NewReplacer("BANNER", banner, "HEAD", head).Replace(`name _xlnm._FilterDatabase accuracy 'accuracy'!$A$1:$C$4
name _xlnm._FilterDatabase one 'one'!$A$1:$A$4
name _xlnm._FilterDatabase cost 'cost'!$A$1:$B$5
active 0
selected xl/worksheets/sheet1.xml
sheet README A1
widths 32 20 28 50 12 80 9.140625
A1 text "BANNER" bold,color=C00000
A2 text "Test results" HEAD
A4 text "Sheet" HEAD
B4 text "Benchmark" HEAD
C4 text "Table" HEAD
D4 text "Title" HEAD
E4 text "Caption" HEAD
A5 text "README"
D5 text "What every sheet and column is"
A6 text "Provenance"
D6 text "Where the data come from: bundle, program version, cache and settings"
A7 text "accuracy"
B7 text "icbcbench"
C7 text "accuracy"
D7 text "Accuracy by system"
E7 text "Share of questions answered correctly."
A8 text "one"
B8 text "b2"
C8 text "one"
D8 text "One column"
A9 text "cost"
B9 text "b2"
C9 text "cost"
D9 text "Cost"
E9 text "Lower is better."
A11 text "In table sheets the best value of each marked column is bold and the second best underlined; n/a marks an undefined value."
A13 text "Sheet" HEAD
B13 text "Column" HEAD
C13 text "Header" HEAD
D13 text "Unit" HEAD
E13 text "Better" HEAD
F13 text "Description" HEAD
A14 text "accuracy"
B14 text "system"
C14 text "System"
A15 text "accuracy"
B15 text "accuracy"
C15 text "Accuracy"
D15 text "%"
E15 text "higher"
A16 text "accuracy"
B16 text "n"
C16 text "N"
A17 text "one"
B17 text "only"
C17 text "only"
F17 text "the only column"
A18 text "cost"
B18 text "name"
C18 text "Name"
A19 text "cost"
B19 text "cost"
C19 text "cost"
D19 text "$"
E19 text "lower"
sheet Provenance A1
widths 24 80 9.140625
A1 text "BANNER" bold,color=C00000
A2 text "Provenance" HEAD
A4 text "Field" HEAD
B4 text "Value" HEAD
A5 text "Bundle"
B5 text "demo"
A6 text "Bundle SHA-256"
B6 text "abababababababababababababababababababababababababababababababab"
A7 text "Producer"
B7 text "finrepro"
A8 text "Version"
B8 text "v0.1.0"
A9 text "Cache digest"
B9 text "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
A10 text "Synthetic data"
B10 text "yes"
A12 text "Setting" HEAD
B12 text "Value" HEAD
A13 text "consistency"
B13 text "=cmd"
A14 text "judges"
B14 text "all"
sheet accuracy A1
freeze x1 y1 B2 bottomRight
widths 8 14 8 9.140625
A1 text "System" HEAD
B1 text "Accuracy (%)" HEAD
C1 text "N" HEAD
A2 text "alpha" v=top
B2 num "71.234" shown "71.2" bold,fmt=0.0,v=top
C2 num "120" fmt=0,v=top
A3 text "beta" v=top
B3 num "65.95" shown "66.0" underline=single,fmt=0.0,v=top
C3 num "120" fmt=0,v=top
A4 text "gamma" v=top
B4 num "40" shown "40.0" fmt=0.0,v=top
C4 num "118" fmt=0,v=top
sheet one A1
freeze x0 y1 A2 bottomLeft
widths 8 9.140625
A1 text "only" HEAD
A2 text "x" v=top
A3 text "n/a" h=right,v=top
A4 text " <a&b>" v=top
A6 text "(1) a note"
A7 text "(2) =1+1 & <b>"
sheet cost A1
freeze x1 y1 B2 bottomRight
widths 60 10 9.140625
A1 text "Name" HEAD
B1 text "cost ($)" HEAD
A2 text "long text long text long text long text long text long text long text " v=top,wrap
B2 num "1.5" shown "1.50" bold,fmt=0.00,v=top
A3 text "b" v=top,wrap
B3 text "n/a" h=right,v=top
A4 text "c" v=top,wrap
B4 num "1.499" shown "1.50" bold,fmt=0.00,v=top
A5 text "d" v=top,wrap
B5 num "2.125" shown "2.13" underline=single,fmt=0.00,v=top
`)
	got := workbookContent(t, buf.Bytes())
	if got != want {
		gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := "", ""
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("line %d:\n got %s\nwant %s", i+1, g, w)
			}
		}
	}
}

// contentTables are the tables of TestWorkbookContent: plain, a table of
// one column with an undefined cell, markup and notes, and a table with a
// lower-is-better column, a tie and a text too wide for its column.
func contentTables() []*analysis.Table {
	one := &analysis.Table{Benchmark: "b2", Name: "one", Title: "One column", Columns: []analysis.Column{{Name: "only", Doc: "the only column"}},
		Notes: []string{"a note", "=1+1 & <b>"}}
	one.AddRow(analysis.Text("x"))
	one.AddRow(analysis.Undefined("none"))
	one.AddRow(analysis.Text(" <a&b>"))
	cost := &analysis.Table{Benchmark: "b2", Name: "cost", Title: "Cost", Caption: "Lower is better.", Columns: []analysis.Column{
		{Name: "name", Title: "Name"}, {Name: "cost", Unit: "$", Decimals: 2, Better: analysis.Lower}}}
	cost.AddRow(analysis.Text(strings.Repeat("long text ", 7)), analysis.Number(1.5))
	cost.AddRow(analysis.Text("b"), analysis.Undefined("no data"))
	cost.AddRow(analysis.Text("c"), analysis.Number(1.499))
	cost.AddRow(analysis.Text("d"), analysis.Number(2.125))
	return []*analysis.Table{plain(), one, cost}
}

// TestWorkbookDeterministic writes a workbook of a dozen table sheets
// several times: the bytes are the same every time, though excelize
// keeps sheets in maps (whose order changes from one range to the next).
func TestWorkbookDeterministic(t *testing.T) {
	var tables []*analysis.Table
	for i := range 12 {
		tab := plain()
		tab.Name = fmt.Sprintf("t%02d", i)
		tables = append(tables, tab)
	}
	var first [sha256.Size]byte
	for i := range 8 {
		var buf bytes.Buffer
		if err := WriteCombinedWorkbook(&buf, "Twice", tables, testProv()); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(buf.Bytes())
		if i == 0 {
			first = sum
		} else if sum != first {
			t.Fatalf("write %d: SHA-256 %x, first write %x", i+1, sum, first)
		}
	}
}

// TestSortedZip writes entries out of name order, one of them larger than
// the deflate window: the zip lists them sorted, each with the bytes
// written; a write to an entry after the next was created and a second
// entry of the same name fail.
func TestSortedZip(t *testing.T) {
	var buf bytes.Buffer
	z := newSortedZip(&buf)
	long := strings.Repeat("0123456789abcdef", 10_000) // 160 KB
	b, err := z.Create("b.xml")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(b, "<b/>")
	a, err := z.Create("a.xml")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(a, long[:1000])
	io.WriteString(a, long[1000:])
	if _, err := io.WriteString(b, "late"); err == nil {
		t.Error("a write to b.xml after a.xml was created succeeded")
	}
	if _, err := z.Create("b.xml"); err == nil {
		t.Error("a second b.xml was created")
	}
	if _, err := z.Create("c/empty"); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, data string }{{"a.xml", long}, {"b.xml", "<b/>"}, {"c/empty", ""}}
	if len(zr.File) != len(want) {
		t.Fatalf("%d entries, want %d", len(zr.File), len(want))
	}
	for i, zf := range zr.File {
		rc, err := zf.Open()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc) // checks the CRC-32 at the end
		rc.Close()
		if zf.Name != want[i].name || err != nil || string(data) != want[i].data {
			t.Errorf("entry %d: %s, %d bytes, %v; want %s, %d bytes", i, zf.Name, len(data), err, want[i].name, len(want[i].data))
		}
	}
}
