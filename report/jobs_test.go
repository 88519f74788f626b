package report

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestRunJobsRenderFails runs jobs of which two fail midway, after
// writing more than a buffer's worth: the error is the first failing
// job's in the order given, names its file and wraps the render's error;
// a failed file keeps what was in place before (or stays missing), no
// temporary file is left, and the other jobs' files are complete.
func TestRunJobsRenderFails(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 40_000) // 640 KB
	boom, bang := errors.New("boom"), errors.New("bang")
	tests := []struct {
		name string
		old  []byte // the failing file's bytes before the run; nil: none
	}{
		{"new file", nil},
		{"old file matching what was rendered", big},
		{"old file differing at the start", append([]byte("X"), big[1:]...)},
		{"old file differing after the first buffer", append(bytes.Clone(big[:300_000]), 'X')},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.old != nil {
				os.MkdirAll(filepath.Join(dir, "json", "b"), 0o755)
				if err := os.WriteFile(filepath.Join(dir, "json", "b", "bad.json"), tc.old, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			ok := func(w io.Writer) error { _, err := w.Write(big); return err }
			failing := func(err error) func(io.Writer) error {
				return func(w io.Writer) error {
					w.Write(big[:len(big)/2])
					w.Write(big[len(big)/2:])
					return err
				}
			}
			jobs := []job{
				{rel: "csv/b/ok.csv", write: ok},
				{rel: "json/b/bad.json", write: failing(boom)},
				{rel: "latex/b/bad.tex", write: failing(bang)},
				{rel: "xlsx/ok.xlsx", write: ok},
			}
			_, err = runJobs(root, jobs)
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), "json/b/bad.json") {
				t.Fatalf("error %v, want boom naming json/b/bad.json", err)
			}
			got, err := os.ReadFile(filepath.Join(dir, "json", "b", "bad.json"))
			if tc.old == nil && !errors.Is(err, fs.ErrNotExist) || tc.old != nil && !bytes.Equal(got, tc.old) {
				t.Errorf("failed file: %d bytes (%v), want what was in place (%d bytes)", len(got), err, len(tc.old))
			}
			if _, err := os.Stat(filepath.Join(dir, "latex", "b", "bad.tex")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the second failed file is in place (%v)", err)
			}
			for _, rel := range []string{"csv/b/ok.csv", "xlsx/ok.xlsx"} {
				if got, _ := os.ReadFile(filepath.Join(dir, rel)); !bytes.Equal(got, big) {
					t.Errorf("%s: %d bytes, want %d", rel, len(got), len(big))
				}
			}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), ".tmp-") {
					t.Errorf("temporary file %s left", p)
				}
				return nil
			})
		})
	}
}

// TestRunJobsSums checks that the sums of single and pair jobs are those
// of the files written, sorted by path whatever the order of the jobs.
func TestRunJobsSums(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	jobs := []job{
		{rel: "z/last", write: text("z")},
		{rel: "json/b/items.jsonl", pairRel: "csv/b/items.csv", pair: func(w, w2 io.Writer) error {
			io.WriteString(w, "{}\n")
			_, err := io.WriteString(w2, "a\r\n")
			return err
		}},
		{rel: "a/first", write: text("")},
	}
	sums, err := runJobs(root, jobs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a/first", "csv/b/items.csv", "json/b/items.jsonl", "z/last"}
	if got := Paths(sums); !slices.Equal(got, want) {
		t.Fatalf("paths %q, want %q", got, want)
	}
	var list bytes.Buffer
	for _, s := range sums {
		list.WriteString(hex.EncodeToString(s.Sum[:]) + "  " + s.Path + "\n")
	}
	checkSums(t, dir, list.Bytes(), want)
}

// TestJSONIndented checks that the JSON writer, which indents as it
// writes, gives what json.Indent gives for the same document made
// compact, for tables with and without rows, notes and the synthetic
// fields.
func TestJSONIndented(t *testing.T) {
	noNotes := hostile()
	noNotes.Notes = nil
	noRows := plain()
	noRows.Rows = nil
	oneCol := &analysis.Table{Benchmark: "b", Name: "one", Columns: []analysis.Column{{Name: "x"}}}
	oneCol.AddRow(analysis.Undefined("none"))
	for _, tc := range []struct {
		name      string
		table     *analysis.Table
		synthetic bool
	}{
		{"plain", plain(), false},
		{"hostile", hostile(), false},
		{"hostile synthetic", hostile(), true},
		{"no notes", noNotes, false},
		{"no rows", noRows, true},
		{"one column", oneCol, false},
		{"other", other(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got bytes.Buffer
			if err := writeJSON(&got, tc.table, tc.synthetic); err != nil {
				t.Fatal(err)
			}
			var compact, want bytes.Buffer
			if err := json.Compact(&compact, got.Bytes()); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, got.String())
			}
			json.Indent(&want, compact.Bytes(), "", "  ")
			want.WriteByte('\n')
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("got\n%s\nwant (json.Indent)\n%s", got.String(), want.String())
			}
			var doc struct {
				Synthetic bool
				Rows      []map[string]any
			}
			if err := json.Unmarshal(got.Bytes(), &doc); err != nil || doc.Synthetic != tc.synthetic || len(doc.Rows) != len(tc.table.Rows) {
				t.Errorf("read back: %v, synthetic %v, %d rows; want %v, %d rows", err, doc.Synthetic, len(doc.Rows), tc.synthetic, len(tc.table.Rows))
			}
		})
	}
}

// TestWritersWriteError checks that a write error of the destination,
// at the start, midway or at the last byte, is returned, wrapped, by the
// JSON, LaTeX and workbook writers, which write as they render.
func TestWritersWriteError(t *testing.T) {
	big := hostile()
	for i := range 2000 {
		big.AddRow(analysis.Text("row"), analysis.Number(float64(i)), analysis.Number(1), analysis.Number(2),
			analysis.Number(3), analysis.Text("A"), analysis.Text(strings.Repeat("text ", i%20)))
	}
	for _, w := range []struct {
		name, prefix string
		write        func(io.Writer) error
	}{
		{"json", "report: json: table ", func(w io.Writer) error { return WriteJSON(w, big) }},
		{"latex", "report: latex: table ", func(w io.Writer) error { return WriteLaTeX(w, big) }},
		{"xlsx", "report: workbook ", func(w io.Writer) error {
			return WriteWorkbook(w, "x", []*analysis.Table{plain(), big}, testProv())
		}},
		{"combined xlsx", "report: workbook ", func(w io.Writer) error {
			return WriteCombinedWorkbook(w, "x", []*analysis.Table{plain(), big}, testProv())
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			var full bytes.Buffer
			if err := w.write(&full); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{0, 10, full.Len() / 2, full.Len() - 1} {
				if err := w.write(&failAfter{n}); !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), w.prefix) {
					t.Errorf("after %d of %d bytes: %v, want the write error", n, full.Len(), err)
				}
			}
		})
	}
}
