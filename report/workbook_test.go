package report

import (
	"archive/zip"
	"bytes"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/analysis"
	frresults "github.com/finrepro/finrepro/results"
)

// other is a table of another benchmark whose name clashes with plain's.
func other() *analysis.Table {
	t := plain()
	t.Benchmark = "findeepforecast"
	t.Title = "Forecast accuracy"
	return t
}

func testProv() Provenance {
	return Provenance{
		Bundle: "demo", BundleSHA256: strings.Repeat("ab", 32), Producer: "finrepro", Version: "v0.1.0",
		CacheDigest: strings.Repeat("cd", 32), Synthetic: true,
		Settings: [][2]string{{"judges", "all"}, {"consistency", "=cmd"}},
	}
}

// TestWorkbookReadBack writes a workbook, reads it back with excelize
// and checks every sheet, value, style and the absence of formulas.
func TestWorkbookReadBack(t *testing.T) {
	tables := []*analysis.Table{hostile(), plain(), other()}
	var buf bytes.Buffer
	if err := WriteWorkbook(&buf, "Test results", tables, testProv()); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	names := []string{"hostile_scores", "icbcbench.accuracy", "findeepforecast.accuracy"}
	if got, want := f.GetSheetList(), append([]string{"README", "Provenance"}, names...); !slices.Equal(got, want) {
		t.Fatalf("sheets = %q, want %q", got, want)
	}
	props, err := f.GetDocProps()
	if err != nil || props.Created != docDate || props.Modified != docDate || props.Title != "Test results" {
		t.Errorf("doc props = %+v, %v", props, err)
	}
	cell := func(sheet, ref string) string {
		t.Helper()
		v, err := f.GetCellValue(sheet, ref, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, sheet := range []string{"README", "Provenance"} {
		if v := cell(sheet, "A1"); !strings.HasPrefix(v, "SYNTHETIC DATA") {
			t.Errorf("%s!A1 = %q, want the synthetic banner", sheet, v)
		}
	}
	readme, _ := f.GetRows("README")
	for i, n := range names {
		found := false
		for _, r := range readme {
			found = found || len(r) >= 4 && r[0] == n && r[2] == tables[i].Name && r[3] == tables[i].Title
		}
		if !found {
			t.Errorf("README does not list sheet %s", n)
		}
	}
	prov, _ := f.GetRows("Provenance")
	wantProv := map[string]string{"Bundle": "demo", "Bundle SHA-256": strings.Repeat("ab", 32), "Version": "v0.1.0",
		"Cache digest": strings.Repeat("cd", 32), "Synthetic data": "yes", "consistency": "=cmd", "judges": "all"}
	for _, r := range prov {
		if len(r) == 2 {
			if w, ok := wantProv[r[0]]; ok && w == r[1] {
				delete(wantProv, r[0])
			}
		}
	}
	if len(wantProv) > 0 {
		t.Errorf("Provenance lacks %v", wantProv)
	}

	for i, tab := range tables {
		sheet := names[i]
		for j, c := range tab.Columns {
			if v := cell(sheet, cellRef(j, 1)); v != header(c) {
				t.Errorf("%s header %d = %q, want %q", sheet, j, v, header(c))
			}
		}
		m, _ := marks(tab)
		for r, row := range tab.Rows {
			for j, c := range row {
				ref := cellRef(j, r+2)
				raw := cell(sheet, ref)
				shown, _ := f.GetCellValue(sheet, ref)
				typ, _ := f.GetCellType(sheet, ref)
				switch {
				case c.Undef:
					if raw != "n/a" {
						t.Errorf("%s!%s = %q, want n/a", sheet, ref, raw)
					}
				case c.IsNum:
					v, err := strconv.ParseFloat(raw, 64)
					if err != nil || v != Value(c, tab.Columns[j].Decimals) {
						t.Errorf("%s!%s = %q, want %v", sheet, ref, raw, Value(c, tab.Columns[j].Decimals))
					}
					if want := excelShown(c.Num, tab.Columns[j].Decimals); shown != want {
						t.Errorf("%s!%s shows %q, want %q", sheet, ref, shown, want)
					}
				default:
					// stream sheets store texts inline, not in the shared strings
					if raw != xmlText(c.Text) || typ != excelize.CellTypeInlineString {
						t.Errorf("%s!%s = %q (type %v), want string %q", sheet, ref, raw, typ, c.Text)
					}
				}
				id, err := f.GetCellStyle(sheet, ref)
				if err != nil {
					t.Fatal(err)
				}
				st, err := f.GetStyle(id)
				if err != nil {
					t.Fatal(err)
				}
				bold := st.Font != nil && st.Font.Bold
				under := st.Font != nil && st.Font.Underline == "single"
				if bold != (m[j][r] == analysis.Best) || under != (m[j][r] == analysis.Second) {
					t.Errorf("%s!%s: bold %v underline %v, mark %v", sheet, ref, bold, under, m[j][r])
				}
			}
		}
		panes, err := f.GetPanes(sheet)
		if err != nil || !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 1 || panes.TopLeftCell != "B2" {
			t.Errorf("%s panes = %+v, %v; want row 1 and column A frozen", sheet, panes, err)
		}
	}

	// No cell of any sheet is a formula, and every table sheet has its
	// autofilter.
	for _, sheet := range f.GetSheetList() {
		rows, _ := f.GetRows(sheet)
		for r, row := range rows {
			for j := range row {
				if fm, _ := f.GetCellFormula(sheet, cellRef(j, r+1)); fm != "" {
					t.Errorf("%s!%s is a formula: %q", sheet, cellRef(j, r+1), fm)
				}
			}
		}
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	filters := 0
	for _, zf := range zr.File {
		if !strings.HasPrefix(zf.Name, "xl/worksheets/") {
			continue
		}
		rc, _ := zf.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		if bytes.Contains(data, []byte("<f>")) || bytes.Contains(data, []byte("<f ")) {
			t.Errorf("%s holds a formula element", zf.Name)
		}
		if bytes.Contains(data, []byte("<autoFilter ref=")) {
			filters++
		}
	}
	if filters != len(tables) {
		t.Errorf("%d sheets with an autofilter, want %d", filters, len(tables))
	}
}

func TestWorkbookNotSynthetic(t *testing.T) {
	p := testProv()
	p.Synthetic = false
	var buf bytes.Buffer
	if err := WriteWorkbook(&buf, "Real", []*analysis.Table{plain()}, p); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, sheet := range f.GetSheetList() {
		rows, _ := f.GetRows(sheet)
		for _, r := range rows {
			for _, v := range r {
				if strings.Contains(v, "SYNTHETIC") {
					t.Errorf("%s says SYNTHETIC for real data", sheet)
				}
			}
		}
	}
}

func TestSheetNames(t *testing.T) {
	tab := func(bench, name string) *analysis.Table { return &analysis.Table{Benchmark: bench, Name: name} }
	long := strings.Repeat("x", 40)
	for _, tc := range []struct {
		name   string
		tables []*analysis.Table
		want   []string
	}{
		{"plain", []*analysis.Table{tab("a", "one"), tab("a", "two")}, []string{"one", "two"}},
		{"invalid characters", []*analysis.Table{tab("a", "x:y/z?[w]*\\v"), tab("a", "'quoted'")}, []string{"x_y_z__w___v", "_quoted_"}},
		{"reserved", []*analysis.Table{tab("a", "readme"), tab("a", "History")}, []string{"a.readme", "a.History"}},
		{"clash across benchmarks", []*analysis.Table{tab("icbcbench", "scores"), tab("findeepresearch", "Scores")},
			[]string{"icbcbench.scores", "findeepresearch.Scores"}},
		{"too long", []*analysis.Table{tab("a", long), tab("a", long+"y")}, []string{strings.Repeat("x", 31), strings.Repeat("x", 29) + "~2"}},
		{"CJK cut by UTF-16 units", []*analysis.Table{tab("a", strings.Repeat("表", 40))}, []string{strings.Repeat("表", 31)}},
		{"astral cut by UTF-16 units", []*analysis.Table{tab("a", strings.Repeat("𝔁", 20))}, []string{strings.Repeat("𝔁", 15)}},
		{"empty", []*analysis.Table{tab("a", "")}, []string{"table"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sheetNames(tc.tables, false)
			if !slices.Equal(got, tc.want) {
				t.Errorf("sheetNames = %q, want %q", got, tc.want)
			}
			f := excelize.NewFile()
			defer f.Close()
			for _, n := range got {
				if _, err := f.NewSheet(n); err != nil {
					t.Errorf("excelize rejects %q: %v", n, err)
				}
			}
			if len(f.GetSheetList()) != len(got)+1 {
				t.Errorf("names not unique to Excel: %q", got)
			}
		})
	}
}

// excelShown is how a spreadsheet shows x with a "0.00" style format: it
// rounds halves away from zero, where Cell.Format (like strconv) rounds
// exact binary halves to even (-1.25 shows as -1.3, formats as -1.2).
func excelShown(x float64, decimals int) string {
	p := math.Pow(10, float64(decimals))
	return analysis.Number(math.Round(x*p) / p).Format(decimals)
}

// readSheetStrings returns the text of every cell of every sheet of the
// workbook in data, one per line.
func readSheetStrings(t *testing.T, data []byte) string {
	t.Helper()
	f := openWorkbook(t, data)
	var b strings.Builder
	for _, sheet := range f.GetSheetList() {
		rows, err := f.GetRows(sheet)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			for _, v := range r {
				b.WriteString(v + "\n")
			}
		}
	}
	return b.String()
}

// TestSheetNamesPrefixed: in a workbook of several benchmarks every
// sheet name starts with its benchmark, clash or not.
func TestSheetNamesPrefixed(t *testing.T) {
	tabs := []*analysis.Table{{Benchmark: "icbcbench", Name: "main_results"}, {Benchmark: "findeepresearch", Name: "markets"}, {Benchmark: "findeepforecast", Name: "markets"}}
	want := []string{"icbcbench.main_results", "findeepresearch.markets", "findeepforecast.markets"}
	if got := sheetNames(tabs, true); !slices.Equal(got, want) {
		t.Errorf("sheetNames = %q, want %q", got, want)
	}
}

// TestComparisonWorkbook reads comparison sheets back: published,
// computed and difference are numbers (not text) shown at the published
// precision, side by side with the verdict. By hand: published 58.58 with
// computed 58.589 is 0.009 off, within twice the tolerance 0.005;
// published 0.638 with computed 0.66667 is 0.02867 off: differs.
func TestComparisonWorkbook(t *testing.T) {
	pub, err := frresults.ReadCSV(strings.NewReader("system,score,rho\nKimi,58.58,0.638\nAbsent,1.0,0.5\n"), "published/b/t.csv")
	if err != nil {
		t.Fatal(err)
	}
	computed := &analysis.Table{Name: "t", Columns: []analysis.Column{{Name: "system"}, {Name: "score", Decimals: 4}, {Name: "rho", Decimals: 5}}}
	computed.AddRow(analysis.Text("Kimi"), analysis.Number(58.589), analysis.Number(0.66667))
	verdicts, cells := analysis.ComparisonTables([]analysis.Comparison{analysis.Compare("b", pub, computed, -1)})
	var buf bytes.Buffer
	if err := WriteWorkbook(&buf, "comparison", []*analysis.Table{verdicts, cells}, Provenance{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// cells: benchmark, table, row, column, published, computed, difference, tolerance, verdict
	for _, tc := range []struct {
		ref, shown string
		value      float64
		number     bool
	}{
		{"E2", "58.58", 58.58, true}, {"F2", "58.59", 58.589, true}, {"G2", "0.01", 0.009, true}, {"I2", "within 2x tolerance", 0, false},
		{"E3", "0.638", 0.638, true}, {"F3", "0.667", 0.66667, true}, {"G3", "0.029", 0.02867, true}, {"I3", "differs", 0, false},
	} {
		typ, err := f.GetCellType("cells", tc.ref)
		if err != nil {
			t.Fatal(err)
		}
		if (typ == excelize.CellTypeNumber || typ == excelize.CellTypeUnset) != tc.number {
			t.Errorf("cells!%s: type %v, want number %v", tc.ref, typ, tc.number)
		}
		shown, _ := f.GetCellValue("cells", tc.ref)
		if shown != tc.shown {
			t.Errorf("cells!%s shows %q, want %q", tc.ref, shown, tc.shown)
		}
		if tc.number {
			raw, _ := f.GetCellValue("cells", tc.ref, excelize.Options{RawCellValue: true})
			v, err := strconv.ParseFloat(raw, 64)
			if err != nil || math.Abs(v-tc.value) > 1e-9 {
				t.Errorf("cells!%s holds %q, want the number %v", tc.ref, raw, tc.value)
			}
		}
	}
	// verdicts: the absent row is counted, not compared.
	row, _ := f.GetRows("verdicts")
	if got := strings.Join(row[1][:8], ","); got != "b,t,differs,2,0,1,1,1" {
		t.Errorf("verdict row %q, want b,t,differs,2,0,1,1,1", got)
	}
}
