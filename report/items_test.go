package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

func testItems() *analysis.Items {
	return &analysis.Items{Fields: []analysis.Field{
		{Name: "system"}, {Name: "score", Kind: analysis.NumField}, {Name: "correct", Kind: analysis.BoolField},
	}, Rows: slices.Values([][]string{
		{"a <b> & \"c\"", analysis.NumText(0.1), analysis.BoolText(true)},
		{"=cmd()", "", ""},
		{"中文", analysis.NumText(-1e-9), analysis.BoolText(false)},
	})}
}

// TestItemsJSONL checks the JSON Lines records by reading them back with
// encoding/json: values, nulls, key order and the synthetic field.
func TestItemsJSONL(t *testing.T) {
	for _, synth := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteItemsJSONL(&b, testItems(), synth); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines, want 3:\n%s", len(lines), b.String())
		}
		want := []map[string]any{
			{"system": "a <b> & \"c\"", "score": 0.1, "correct": true},
			{"system": "=cmd()", "score": nil, "correct": nil},
			{"system": "中文", "score": -1e-9, "correct": false},
		}
		for i, l := range lines {
			if strings.ContainsAny(l, "<>&") {
				t.Errorf("line %d not HTML-safe: %s", i+1, l)
			}
			if !strings.HasPrefix(l, `{"system":`) {
				t.Errorf("line %d: keys not in field order: %s", i+1, l)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(l), &got); err != nil {
				t.Fatalf("line %d: %v: %s", i+1, err, l)
			}
			if synth {
				if got["synthetic"] != true {
					t.Errorf("line %d: no synthetic field: %s", i+1, l)
				}
				delete(got, "synthetic")
			} else if strings.Contains(l, "synthetic") {
				t.Errorf("line %d: synthetic field on real data: %s", i+1, l)
			}
			if len(got) != len(want[i]) {
				t.Errorf("line %d: %v, want %v", i+1, got, want[i])
			}
			for k, v := range want[i] {
				if got[k] != v {
					t.Errorf("line %d: %s = %v, want %v", i+1, k, got[k], v)
				}
			}
		}
	}
}

// TestItemsCSV reads the CSV back: header, empty nulls, neutralised
// formulas.
func TestItemsCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteItemsCSV(&b, testItems()); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"system", "score", "correct"}, {"a <b> & \"c\"", "0.1", "true"}, {"'=cmd()", "", ""}, {"中文", "-1e-09", "false"}}
	if len(recs) != len(want) {
		t.Fatalf("%q, want %q", recs, want)
	}
	for i := range want {
		if strings.Join(recs[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("record %d: %q, want %q", i, recs[i], want[i])
		}
	}
}

// TestItemsRefused checks that values which would make invalid JSON are
// refused, naming row and field.
func TestItemsRefused(t *testing.T) {
	for _, tc := range []struct {
		kind analysis.FieldKind
		v    string
	}{
		{analysis.NumField, "NaN"}, {analysis.NumField, "1,5"}, {analysis.NumField, "01"}, {analysis.NumField, "1."},
		{analysis.NumField, "1e"}, {analysis.NumField, "-"}, {analysis.NumField, "0x10"}, {analysis.BoolField, "yes"},
	} {
		it := &analysis.Items{Fields: []analysis.Field{{Name: "f", Kind: tc.kind}}, Rows: slices.Values([][]string{{tc.v}})}
		err := WriteItemsJSONL(&bytes.Buffer{}, it, false)
		if err == nil || !strings.Contains(err.Error(), "row 1: field f") {
			t.Errorf("%q: error %v, want one naming row 1, field f", tc.v, err)
		}
	}
	for _, v := range []string{"0", "-0.5", "1e-9", "12.5E+3", "100"} {
		if !isJSONNumber(v) {
			t.Errorf("isJSONNumber(%q) = false", v)
		}
	}
}

// FuzzNumText checks that every number's canonical text is a JSON number
// that reads back to the same value.
func FuzzNumText(f *testing.F) {
	for _, x := range []float64{0, -0.0, 1, -1.5, 1e-300, 1e300, 0.1} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		s := analysis.NumText(x)
		if s == "" {
			return // NaN or an infinity: null
		}
		if !isJSONNumber(s) {
			t.Fatalf("NumText(%v) = %q, not a JSON number", x, s)
		}
		var y float64
		if err := json.Unmarshal([]byte(s), &y); err != nil || y != x {
			t.Fatalf("NumText(%v) = %q reads back as %v, %v", x, s, y, err)
		}
	})
}

// TestSyntheticLabels checks that a synthetic result's JSON tables and
// LaTeX files say so and that a README sits beside its CSV and LaTeX
// files, and that real results carry no such label.
func TestSyntheticLabels(t *testing.T) {
	tb := &analysis.Table{Benchmark: "b", Name: "t", Columns: []analysis.Column{{Name: "x"}}}
	tb.AddRow(analysis.Text("v"))
	for _, synth := range []bool{false, true} {
		out := t.TempDir()
		res := []*analysis.Result{{Benchmark: "b", Title: "B", Tables: []*analysis.Table{tb}, Items: testItems()}}
		sums, err := WriteAllHashed(out, res, Provenance{Synthetic: synth})
		files := Paths(sums)
		if err != nil {
			t.Fatal(err)
		}
		has := func(p string) bool {
			for _, f := range files {
				if f == p {
					return true
				}
			}
			return false
		}
		for _, p := range []string{"csv/b/README", "latex/b/README"} {
			if has(p) != synth {
				t.Errorf("synthetic %v: %s written %v", synth, p, has(p))
			}
		}
		for _, p := range []string{"json/b/items.jsonl", "csv/b/items.csv"} {
			if !has(p) {
				t.Errorf("no %s", p)
			}
		}
		js := readFile(t, out, "json/b/t.json")
		var obj map[string]any
		if err := json.Unmarshal([]byte(js), &obj); err != nil {
			t.Fatal(err)
		}
		if (obj["synthetic"] == true) != synth || (obj["synthetic_note"] == SyntheticNote) != synth {
			t.Errorf("synthetic %v: JSON %s", synth, js)
		}
		tex := readFile(t, out, "latex/b/t.tex")
		if strings.Contains(tex, "\n% "+SyntheticNote+"\n") != synth {
			t.Errorf("synthetic %v: LaTeX\n%s", synth, tex)
		}
		if synth && !strings.Contains(readFile(t, out, "csv/b/README"), SyntheticNote) {
			t.Error("csv README does not say the data is synthetic")
		}
	}
}

// TestItemsNameTaken checks that a table cannot take the item records'
// file name.
func TestItemsNameTaken(t *testing.T) {
	tb := &analysis.Table{Benchmark: "b", Name: "Items", Columns: []analysis.Column{{Name: "x"}}}
	_, err := WriteAllHashed(t.TempDir(), []*analysis.Result{{Benchmark: "b", Tables: []*analysis.Table{tb}}}, Provenance{})
	if err == nil || !strings.Contains(err.Error(), "item records") {
		t.Errorf("error %v, want the name refused", err)
	}
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// FuzzAppendJSONString checks the fast string quoting against
// json.Marshal, which it must equal byte for byte.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "q001-r001", "a<b", "\x7f", "\u2028", "\xff", `"\`, "中文", "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// TestItemsFirst checks that the item records written on their own
// (WriteItemsHashed) and then the other files (WriteTablesHashed) are
// the files and bytes WriteAllHashed writes at once, and that the second
// part does not read the records again: their rows may be gone by then.
func TestItemsFirst(t *testing.T) {
	tb := &analysis.Table{Benchmark: "b", Name: "t", Columns: []analysis.Column{{Name: "x"}}}
	tb.AddRow(analysis.Text("v"))
	res := func() []*analysis.Result {
		return []*analysis.Result{{Benchmark: "b", Title: "B", Tables: []*analysis.Table{tb}, Items: testItems()}}
	}
	prov := Provenance{Synthetic: true}
	want, err := WriteAllHashed(t.TempDir(), res(), prov)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	r := res()
	items, err := WriteItemsHashed(out, r, prov)
	if err != nil {
		t.Fatal(err)
	}
	if got := Paths(items); !slices.Equal(got, []string{"csv/b/items.csv", "json/b/items.jsonl"}) {
		t.Fatalf("items wrote %v", got)
	}
	r[0].Items = &analysis.Items{Fields: r[0].Items.Fields} // the rows are gone
	rest, err := WriteTablesHashed(out, r, prov)
	if err != nil {
		t.Fatal(err)
	}
	got := append(items, rest...)
	slices.SortFunc(got, func(a, b FileSum) int { return strings.Compare(a.Path, b.Path) })
	if !slices.Equal(got, want) {
		t.Fatalf("in two parts:\n%v\nat once:\n%v", Paths(got), Paths(want))
	}
	if !slices.Equal(Files(r, prov), Paths(want)) {
		t.Errorf("Files lists %v, want %v", Files(r, prov), Paths(want))
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct{ n int }

var errDiskFull = errors.New("disk full")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, errDiskFull
	}
	f.n -= len(p)
	return len(p), nil
}

// TestCSVWriteError checks that a write error of the destination, at the
// header or in the rows, is returned by both CSV writers, wrapped.
func TestCSVWriteError(t *testing.T) {
	for _, n := range []int{0, 10} {
		if err := WriteCSV(&failAfter{n}, plain()); !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "report: csv: table ") {
			t.Errorf("WriteCSV after %d bytes: %v, want the write error", n, err)
		}
		if err := WriteItemsCSV(&failAfter{n}, testItems()); !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "report: items csv: ") {
			t.Errorf("WriteItemsCSV after %d bytes: %v, want the write error", n, err)
		}
	}
}

// TestItemsRowsOnce checks that the item records' two files are written
// from one pass over the rows, which are generated, not stored.
func TestItemsRowsOnce(t *testing.T) {
	it := testItems()
	passes := 0
	rows := it.Rows
	it.Rows = func(yield func([]string) bool) {
		passes++
		rows(yield)
	}
	res := []*analysis.Result{{Benchmark: "b", Items: it}}
	sums, err := WriteItemsHashed(t.TempDir(), res, Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	if passes != 1 || len(sums) != 2 {
		t.Errorf("%d passes over the rows for %d files, want 1 for 2", passes, len(sums))
	}
	var jsonl, csvB bytes.Buffer
	WriteItemsJSONL(&jsonl, testItems(), false)
	WriteItemsCSV(&csvB, testItems())
	want := []FileSum{{"csv/b/items.csv", sha256.Sum256(csvB.Bytes())}, {"json/b/items.jsonl", sha256.Sum256(jsonl.Bytes())}}
	if !slices.Equal(sums, want) {
		t.Errorf("sums %v, want those of the files written one by one", sums)
	}
}

// csvLibrary is rec as encoding/csv's Writer writes it with UseCRLF: the
// oracle of appendCSVRecord.
func csvLibrary(rec []string) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	w.Write(rec)
	w.Flush()
	return b.String()
}

// TestAppendCSVRecord checks appendCSVRecord against encoding/csv on the
// fields that decide quoting: empty, separators, quotes, CR and LF alone
// and together, leading spaces of several kinds, \. and invalid UTF-8.
func TestAppendCSVRecord(t *testing.T) {
	for _, rec := range [][]string{
		{}, {""}, {"", ""}, {"plain"}, {"a,b"}, {`say "hi"`}, {"line\nbreak"}, {"cr\ronly"}, {"crlf\r\nend"},
		{" lead"}, {"\tlead"}, {"\u00a0nbsp"}, {"\u3000ideographic"}, {"trail "}, {`\.`}, {`\.x`},
		{"\xff\xfe", "中文", "=cmd()"}, {"a", "", "b,c", "\"", "\r", "\n"},
	} {
		if got, want := string(appendCSVRecord(nil, rec)), csvLibrary(rec); got != want {
			t.Errorf("%q: %q, encoding/csv writes %q", rec, got, want)
		}
	}
}

func FuzzAppendCSVRecord(f *testing.F) {
	f.Add("a", "b,c", " \"d\"\r\n")
	f.Add("", `\.`, "\u2028x")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		rec := []string{a, b, c}
		if got, want := string(appendCSVRecord(nil, rec)), csvLibrary(rec); got != want {
			t.Fatalf("%q: %q, encoding/csv writes %q", rec, got, want)
		}
	})
}

// BenchmarkItemsCSV writes 10,000 item rows of FinDeepResearch's shape
// (ids, a short label, numbers, a boolean) as CSV.
func BenchmarkItemsCSV(b *testing.B) {
	it := &analysis.Items{Fields: []analysis.Field{
		{Name: "system"}, {Name: "company"}, {Name: "item"}, {Name: "label"},
		{Name: "score", Kind: analysis.NumField}, {Name: "correct", Kind: analysis.BoolField},
	}, Rows: func(yield func([]string) bool) {
		row := make([]string, 6)
		for i := range 10_000 {
			row[0], row[1], row[2] = "OpenAI-o3-deep-research", "us-3", "item-"+analysis.IntText(i)
			row[3], row[4], row[5] = "revenue, FY2024 (USD m)", analysis.NumText(float64(i)/7), analysis.BoolText(i%3 == 0)
			if !yield(row) {
				return
			}
		}
	}}
	for b.Loop() {
		if err := WriteItemsCSV(io.Discard, it); err != nil {
			b.Fatal(err)
		}
	}
}
