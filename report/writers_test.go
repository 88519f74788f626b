package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/finrepro/finrepro/analysis"
)

func TestGolden(t *testing.T) {
	tables := map[string]*analysis.Table{"hostile": hostile(), "plain": plain()}
	writers := []struct {
		ext   string
		write func(io.Writer, *analysis.Table) error
	}{
		{"csv", WriteCSV},
		{"json", WriteJSON},
		{"tex", WriteLaTeX},
		{"txt", func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 0) }},
		{"80.txt", func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 80) }},
		{"50.txt", func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 50) }},
	}
	for _, name := range []string{"hostile", "plain"} {
		for _, wr := range writers {
			t.Run(name+"."+wr.ext, func(t *testing.T) {
				var b bytes.Buffer
				if err := wr.write(&b, tables[name]); err != nil {
					t.Fatal(err)
				}
				golden.Check(t, filepath.Join("testdata", name+"."+wr.ext), b.Bytes())
			})
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tc := range []struct {
		x        float64
		decimals int
		want     string
	}{
		{0, 0, "0"},
		{58.25, 1, "58.25"},
		{58.2499999, 1, "58.25"},
		{1.0 / 3, 1, "0.333"},
		{2.0 / 3, 0, "0.67"},
		{-0.00001, 1, "0"},
		{-0.0049, 0, "0"},
		{-0.005, 0, "-0.01"},
		{120, 0, "120"},
		{-3.04, 1, "-3.04"},
		{1e21, 0, "1e+21"},
		{123456789.123456, 2, "123456789.1235"},
		{1e-7, 15, "1e-7"},
	} {
		t.Run(fmt.Sprint(tc.x, "/", tc.decimals), func(t *testing.T) {
			if got := FormatNumber(analysis.Number(tc.x), tc.decimals); got != tc.want {
				t.Errorf("FormatNumber(%v, %d) = %s, want %s", tc.x, tc.decimals, got, tc.want)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		table *analysis.Table
		want  string
	}{
		{"nil", nil, "nil table"},
		{"no columns", &analysis.Table{Name: "x"}, "no columns"},
		{"empty column name", &analysis.Table{Name: "x", Columns: []analysis.Column{{}}}, "empty name"},
		{"duplicate column", &analysis.Table{Name: "x", Columns: []analysis.Column{{Name: "a"}, {Name: "a"}}}, "duplicate"},
		{"decimals", &analysis.Table{Name: "x", Columns: []analysis.Column{{Name: "a", Decimals: 16}}}, "decimals 16"},
		{"ok", &analysis.Table{Name: "x", Columns: []analysis.Column{{Name: "a"}}, Rows: [][]analysis.Cell{{{}}}}, ""},
		{"ragged row", &analysis.Table{Name: "x", Columns: []analysis.Column{{Name: "a"}}, Rows: [][]analysis.Cell{{{}, {}}}}, "2 cells"},
		{"nan", &analysis.Table{Name: "x", Columns: []analysis.Column{{Name: "a"}}, Rows: [][]analysis.Cell{{{IsNum: true, Num: nan()}}}}, "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, w := range []func(io.Writer, *analysis.Table) error{WriteCSV, WriteJSON, WriteLaTeX,
				func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 80) },
				func(w io.Writer, t *analysis.Table) error {
					return WriteWorkbook(w, "x", []*analysis.Table{t}, Provenance{})
				}} {
				err := w(io.Discard, tc.table)
				switch {
				case tc.want == "" && err != nil:
					t.Errorf("unexpected error %v", err)
				case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
					t.Errorf("error %v, want one containing %q", err, tc.want)
				}
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

// TestCSVReadBack reads the CSV back and checks every field.
func TestCSVReadBack(t *testing.T) {
	tab := hostile()
	var b bytes.Buffer
	if err := WriteCSV(&b, tab); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		t.Error("records do not end in CRLF")
	}
	r := csv.NewReader(&b)
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(tab.Rows)+1 {
		t.Fatalf("%d records, want %d", len(recs), len(tab.Rows)+1)
	}
	for j, c := range tab.Columns {
		if recs[0][j] != c.Name {
			t.Errorf("header %d = %q, want %q", j, recs[0][j], c.Name)
		}
	}
	for i, row := range tab.Rows {
		for j, c := range row {
			got := recs[i+1][j]
			var want string
			switch {
			case c.Undef:
				want = ""
			case c.IsNum:
				want = FormatNumber(c, tab.Columns[j].Decimals)
			default:
				want = "'" + c.Text
				if !strings.ContainsAny(c.Text[:1], "=+-@\t\r") {
					want = c.Text
				}
			}
			// encoding/csv drops carriage returns inside quoted fields.
			if want = strings.ReplaceAll(want, "\r", ""); got != want {
				t.Errorf("row %d column %s = %q, want %q", i+1, tab.Columns[j].Name, got, want)
			}
			if !c.IsNum && got != "" && strings.ContainsAny(got[:1], "=+-@\t\r") {
				t.Errorf("row %d column %s = %q starts a formula", i+1, tab.Columns[j].Name, got)
			}
		}
	}
}

// TestJSONReadBack decodes the JSON and checks keys (in column order) and
// every value.
func TestJSONReadBack(t *testing.T) {
	tab := hostile()
	var b bytes.Buffer
	if err := WriteJSON(&b, tab); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "</script>") {
		t.Error("JSON contains a raw </script>")
	}
	var doc struct {
		Table, Benchmark, Title, Caption string
		Columns                          []struct {
			Name, Title, Unit, Better string
			Decimals                  int
		}
		Rows  []json.RawMessage
		Notes []string
	}
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.Table != tab.Name || doc.Benchmark != tab.Benchmark || doc.Title != tab.Title || doc.Caption != tab.Caption {
		t.Errorf("header fields = %q %q %q %q", doc.Table, doc.Benchmark, doc.Title, doc.Caption)
	}
	if len(doc.Notes) != len(tab.Notes) || doc.Notes[1] != tab.Notes[1] {
		t.Errorf("notes = %q", doc.Notes)
	}
	for j, c := range tab.Columns {
		got := doc.Columns[j]
		if got.Name != c.Name || got.Title != c.Header() || got.Unit != c.Unit || got.Decimals != c.Decimals || got.Better != better(c.Better) {
			t.Errorf("column %d = %+v, want %+v", j, got, c)
		}
	}
	if len(doc.Rows) != len(tab.Rows) {
		t.Fatalf("%d rows, want %d", len(doc.Rows), len(tab.Rows))
	}
	for i, raw := range doc.Rows {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
			t.Fatalf("row %d: %v %v", i+1, tok, err)
		}
		for j, c := range tab.Rows[i] {
			key, err := d.Token()
			if err != nil || key != tab.Columns[j].Name {
				t.Fatalf("row %d: key %d = %v (%v), want %s", i+1, j, key, err, tab.Columns[j].Name)
			}
			val, err := d.Token()
			if err != nil {
				t.Fatal(err)
			}
			var want any
			switch {
			case c.Undef:
				want = nil
			case c.IsNum:
				want = json.Number(FormatNumber(c, tab.Columns[j].Decimals))
			default:
				want = strings.ToValidUTF8(c.Text, "\uFFFD")
			}
			if val != want {
				t.Errorf("row %d column %s = %#v, want %#v", i+1, tab.Columns[j].Name, val, want)
			}
		}
	}
}

// TestTerminalWidth checks that every line fits the width and that no
// control character reaches the terminal.
func TestTerminalWidth(t *testing.T) {
	for _, tc := range []struct {
		tab    *analysis.Table
		widths []int
	}{
		// Below about 80 the hostile table's last columns are left out.
		{hostile(), []int{12, 20, 30, 50, 80, 100, 120}},
		{plain(), []int{12, 30, 40, 80}},
	} {
		tab := tc.tab
		for _, width := range tc.widths {
			var b bytes.Buffer
			if err := WriteTerminal(&b, tab, width); err != nil {
				t.Fatal(err)
			}
			for n, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
				if w := twwidth.WidthWithOptions(line, twwidth.Options{}); w > width {
					t.Errorf("%s width %d: line %d is %d wide: %q", tab.Name, width, n+1, w, line)
				}
				if i := strings.IndexFunc(line, unicode.IsControl); i >= 0 {
					t.Errorf("%s width %d: line %d has control character %q", tab.Name, width, n+1, line[i])
				}
			}
		}
	}
}

// TestTerminalMarks checks the mark suffixes: the two tied best scores
// and the two equal second scores.
func TestTerminalMarks(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTerminal(&b, hostile(), 0); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"58.3**", "57.1_", "0.00**", "9.87_", "** best, _ second best"} {
		if n := strings.Count(s, want); n == 0 {
			t.Errorf("output lacks %q", want)
		}
	}
	if n := strings.Count(s, "58.3**"); n != 2 {
		t.Errorf("%d tied best scores marked, want 2", n)
	}
}

// TestEmptyTable checks that a table without rows renders in every
// format with its headers.
func TestEmptyTable(t *testing.T) {
	tab := plain()
	tab.Rows = nil
	for _, w := range []struct {
		name  string
		write func(io.Writer, *analysis.Table) error
	}{
		{"csv", WriteCSV},
		{"json", WriteJSON},
		{"latex", WriteLaTeX},
		{"terminal", func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 40) }},
		{"xlsx", func(w io.Writer, t *analysis.Table) error {
			return WriteWorkbook(w, "x", []*analysis.Table{t}, Provenance{})
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := w.write(&b, tab); err != nil {
				t.Fatal(err)
			}
			if w.name != "xlsx" && !strings.Contains(b.String(), "ccuracy") {
				t.Errorf("output lacks the header:\n%s", b.String())
			}
		})
	}
}

// TestTerminalWordWrap: when every column's longest word fits, text wraps
// only at spaces (no word is cut), every column is shown, and a column
// left out is named in a note.
func TestTerminalWordWrap(t *testing.T) {
	tab := &analysis.Table{Name: "names", Title: "Systems", Columns: []analysis.Column{
		{Name: "system"}, {Name: "group"}, {Name: "note"}, {Name: "score", Decimals: 2}}}
	tab.AddRow(analysis.Text("Gemini-deep-research"), analysis.Text("closed deep research"), analysis.Text("recorded through the provider's batch interface"), analysis.Number(64.77))
	tab.AddRow(analysis.Text("OpenAI-o3-deep-research"), analysis.Text("closed"), analysis.Text("imported outputs"), analysis.Number(71.84))
	words := []string{"Gemini-deep-research", "OpenAI-o3-deep-research", "closed", "research", "provider's", "interface", "imported", "64.77", "71.84"}
	// The longest words take 23+8+10+5 = 46 characters and the borders
	// 13: from 59 on no word is cut.
	for _, width := range []int{59, 80} {
		var b bytes.Buffer
		if err := WriteTerminal(&b, tab, width); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, w := range words {
			if !strings.Contains(out, w) {
				t.Errorf("width %d: word %q cut:\n%s", width, w, out)
			}
		}
		if strings.Contains(out, "Not shown") {
			t.Errorf("width %d: a column was left out although every word fits:\n%s", width, out)
		}
	}
	// At 50 the names break after hyphens: their longest pieces
	// ("research", "OpenAI-") take 8+8+10+5 = 31 plus 13.
	var b bytes.Buffer
	if err := WriteTerminal(&b, tab, 50); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		name := strings.TrimSpace(strings.Split(line, "|")[1])
		if name != "system" && name != "" && name != "research" && !strings.HasSuffix(name, "-") {
			t.Errorf("width 50: name cut other than after a hyphen: %q\n%s", name, b.String())
		}
	}
	// At 30 the pieces broken at 10 (8+8+10+5 plus 13 = 44) do not fit:
	// the last columns go, and a note names them.
	b.Reset()
	if err := WriteTerminal(&b, tab, 30); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "Not shown at width 30: note, score") {
		t.Errorf("width 30: no note of the columns left out:\n%s", b.String())
	}
}
