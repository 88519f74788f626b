package cli

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

// TestMarkSynthetic checks markSynthetic against report itself: item
// records written without the synthetic field and marked afterwards are
// the bytes report writes for synthetic data, and the sum returned is
// theirs. The rows hold escapes, a brace at a value's end and a record
// longer than the reader's buffer.
func TestMarkSynthetic(t *testing.T) {
	rows := [][]string{
		{"a", "1"},
		{"quote \" and brace }", ""},
		{"line\nbreak <&>", "2.5"},
		{strings.Repeat("long ", 100_000) + "}", "0"},
		{"", "-3"},
	}
	items := &analysis.Items{
		Fields: []analysis.Field{{Name: "name"}, {Name: "score", Kind: analysis.NumField}},
		Rows:   slices.Values(rows),
	}
	for _, n := range []int{0, 1, len(rows)} {
		items.Rows = slices.Values(rows[:n])
		var plain, want bytes.Buffer
		if err := report.WriteItemsJSONL(&plain, items, false); err != nil {
			t.Fatal(err)
		}
		if err := report.WriteItemsJSONL(&want, items, true); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "items.jsonl")
		if err := os.WriteFile(p, plain.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		sum, err := markSynthetic(p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d rows: marked records differ from synthetic ones:\n%.300q\nwant\n%.300q", n, got, want.Bytes())
		}
		if sum != sha256.Sum256(want.Bytes()) {
			t.Errorf("%d rows: sum is not the file's", n)
		}
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o644 {
			t.Errorf("%d rows: mode %v (%v), want 0644", n, st.Mode(), err)
		}
		if ents, _ := os.ReadDir(filepath.Dir(p)); len(ents) != 1 {
			t.Errorf("%d rows: %d files left, want the records alone", n, len(ents))
		}
	}
}

// TestMarkSyntheticRejects checks that a file that is not item records
// is an error naming the file and line, and is left as it was.
func TestMarkSyntheticRejects(t *testing.T) {
	p := filepath.Join(t.TempDir(), "items.jsonl")
	body := "{\"a\":1}\nnot a record\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := markSynthetic(p)
	if err == nil || !strings.Contains(err.Error(), p+": line 2") {
		t.Fatalf("error %v, want one naming %s: line 2", err, p)
	}
	if got, _ := os.ReadFile(p); string(got) != body {
		t.Errorf("file changed to %q", got)
	}
}

// TestItemRecordsSyntheticLater checks the records of a bundle that does
// not say it is synthetic, whose first benchmark's replies are real and
// second's simulated: once the run ends, both benchmarks' JSONL records
// say synthetic (as report writes them when every result is known), the
// sums are the files', and the folder's marker lists the records.
func TestItemRecordsSyntheticLater(t *testing.T) {
	rows := [][]string{{"a", "1"}, {"b", ""}}
	fields := []analysis.Field{{Name: "name"}, {Name: "score", Kind: analysis.NumField}}
	res := []*analysis.Result{
		{Benchmark: "first", Items: &analysis.Items{Fields: fields, Rows: slices.Values(rows)}},
		{Benchmark: "second", Synthetic: true, Items: &analysis.Items{Fields: fields, Rows: slices.Values(rows[:1])}},
	}
	o, err := claimOutputFolder(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := newItemRecords(o, report.Provenance{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if err := ir.write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := ir.finish(res); err != nil {
		t.Fatal(err)
	}
	if len(ir.sums) != 4 {
		t.Fatalf("%d files, want 4", len(ir.sums))
	}
	for _, s := range ir.sums {
		got, err := os.ReadFile(filepath.Join(o.dir, filepath.FromSlash(s.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(got) != s.Sum {
			t.Errorf("%s: the sum is not the file's", s.Path)
		}
		if !strings.HasSuffix(s.Path, ".jsonl") {
			continue
		}
		r := res[0]
		if strings.Contains(s.Path, "second") {
			r = res[1]
		}
		var want bytes.Buffer
		if err := report.WriteItemsJSONL(&want, r.Items, true); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n%s\nwant\n%s", s.Path, got, want.Bytes())
		}
	}
	marker, err := os.ReadFile(filepath.Join(o.dir, markerName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ir.sums {
		if !strings.Contains(string(marker), "\n"+s.Path+"\n") {
			t.Errorf("the marker does not list %s:\n%s", s.Path, marker)
		}
	}
}
