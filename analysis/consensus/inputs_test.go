package consensus

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/finrepro/finrepro/analysis/texttest"
	"github.com/finrepro/finrepro/results"
)

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(fstest.MapFS)
		file      string
		line      int
		field     string
		msgSubstr string
	}{
		{"panel format", replaceIn(PanelFile, "finresearchbench2-panel/1", "v9"), PanelFile, 0, "format", "want"},
		{"judge name", replaceIn(PanelFile, `"name": "J2"`, `"name": ""`), PanelFile, 0, "judges[1].name", "empty"},
		{"judge repeated", replaceIn(PanelFile, `"name": "J2"`, `"name": "J1"`), PanelFile, 0, "judges[1].name", "repeated"},
		{"judge model", replaceIn(PanelFile, `"model": "m3"`, `"model": ""`), PanelFile, 0, "judges[2].model", "empty"},
		{"one product", replaceIn(PanelFile, `, {"name": "B"}, {"name": "C", "vendor": "Acme"}, {"name": "D"}, {"name": "E"}`, ``), PanelFile, 0, "products", "want 2"},
		{"panel unknown field", replaceIn(PanelFile, `"humans"`, `"humanz"`), PanelFile, 0, "humanz", "unknown field"},
		{"query unknown field", replaceIn(QueriesFile, `"category"`, `"kategory"`), QueriesFile, 1, "kategory", "unknown field"},
		{"query id", replaceIn(QueriesFile, `"id": "q1"`, `"id": "q 1"`), QueriesFile, 2, "id", "invalid id"},
		{"query repeated", replaceIn(QueriesFile, `"id": "q1"`, `"id": "q2"`), QueriesFile, 2, "id", "repeated"},
		{"query category", replaceIn(QueriesFile, `"category": "Stock Comparison"`, `"category": " "`), QueriesFile, 2, "category", "empty"},
		{"query type", replaceIn(QueriesFile, `"text": "Is gold cheap?"`, `"text": 3`), QueriesFile, 1, "text", "want string"},
		{"rubric query", replaceIn(RubricsFile, `"query": "q2", "id": "b2"`, `"query": "q3", "id": "b2"`), RubricsFile, 6, "query", "unknown query"},
		{"rubric repeated", replaceIn(RubricsFile, `"id": "b2"`, `"id": "b1"`), RubricsFile, 6, "id", "repeated"},
		{"rubric dimension", replaceIn(RubricsFile, `"dimension": "readability"}`+"\n"+`{"query": "q2"`, `"dimension": ""}`+"\n"+`{"query": "q2"`), RubricsFile, 4, "dimension", "empty"},
		{"query without rubrics", func(m fstest.MapFS) {
			m[RubricsFile].Data = []byte(strings.ReplaceAll(string(m[RubricsFile].Data), `"query": "q2"`, `"query": "q1"`))
		}, RubricsFile, 0, "query", "q2 has no rubrics"},
		{"report product", replaceIn(ReportsFile, `"product": "E", "text": "report of E for q2"`, `"product": "Z", "text": "x"`), ReportsFile, 10, "product", "unknown product"},
		{"report missing", replaceIn(ReportsFile, `{"query": "q2", "product": "E", "text": "report of E for q2"}`, ``), ReportsFile, 0, "", "no report of product E for query q2"},
		{"report twice", replaceIn(ReportsFile, `"query": "q2", "product": "E"`, `"query": "q2", "product": "D"`), ReportsFile, 10, "", "second report"},
		{"report syntax", replaceIn(ReportsFile, `{"query": "q1", "product": "B"`, `{"query": "q1" "product": "B"`), ReportsFile, 2, "", "invalid character"},
		{"prompt placeholder", func(m fstest.MapFS) { m[PromptFile].Data = []byte("{{report}} only") }, PromptFile, 0, "", "{{rubrics}}"},
		{"no prompt", func(m fstest.MapFS) { delete(m, PromptFile) }, PromptFile, 0, "", "not exist"},
		{"stability judge", replaceIn(PanelFile, `"judges": ["J1"]`, `"judges": ["J7"]`), PanelFile, 0, "stability.judges[0]", "unknown judge"},
		{"stability runs", replaceIn(PanelFile, `"runs": 3`, `"runs": 1`), PanelFile, 0, "stability.runs", "want 2"},
		{"stability item", replaceIn(PanelFile, `"items": [{"query": "q1", "product": "A"}]`, `"items": [{"query": "q1", "product": "Q"}]`), PanelFile, 0, "stability.items[0].product", "unknown product"},
		{"human count", replaceIn(HumansFile, `"labels": ["yes", "yes", "no"]`, `"labels": ["yes", "yes"]`), HumansFile, 3, "labels", "want one per human rater"},
		{"human label", replaceIn(HumansFile, `"labels": ["no", "no", "yes"]`, `"labels": ["no", "no", "Y"]`), HumansFile, 2, "labels[2]", `"Y"`},
		{"human rubric", replaceIn(HumansFile, `"rubric": "a2"`, `"rubric": "b2"`), HumansFile, 3, "rubric", "unknown rubric"},
		{"human repeated", replaceIn(HumansFile, `"product": "D", "rubric": "a1"`, `"product": "A", "rubric": "a1"`), HumansFile, 6, "", "repeated"},
		{"humans unnamed", replaceIn(PanelFile, `"humans": ["H1", "H2", "H3"]`, `"humans": []`), PanelFile, 0, "humans", "no human raters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fixFS()
			tc.edit(fsys)
			_, err := Load(fsys)
			var ie *results.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Load: %v, want an *InputError", err)
			}
			if ie.File != tc.file || ie.Line != tc.line || ie.Field != tc.field || !strings.Contains(ie.Msg, tc.msgSubstr) {
				t.Errorf("Load: %q (file %q line %d field %q), want %s:%d field %q containing %q", err, ie.File, ie.Line, ie.Field, tc.file, tc.line, tc.field, tc.msgSubstr)
			}
		})
	}
}

// replaceIn returns an edit replacing old by new in file, once; it
// panics when old is absent so that a stale test case fails loudly.
func replaceIn(file, old, new string) func(fstest.MapFS) {
	return func(m fstest.MapFS) {
		s := string(m[file].Data)
		if !strings.Contains(s, old) {
			panic("replaceIn: " + old + " not in " + file)
		}
		m[file].Data = []byte(strings.Replace(s, old, new, 1))
	}
}

func TestLoadOptionalHumans(t *testing.T) {
	fsys := fixFS()
	delete(fsys, HumansFile)
	in, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.humans) != 0 || len(in.Queries) != 2 || in.Queries[0].ID != "q1" || in.Rubrics[1][2].ID != "b3" {
		t.Errorf("loaded %+v", in.Queries)
	}
}

func FuzzLoad(f *testing.F) {
	files := []string{PanelFile, QueriesFile, ReportsFile, RubricsFile, PromptFile, HumansFile}
	base := fixFS()
	for i, name := range files {
		f.Add(uint8(i), base[name].Data)
	}
	f.Add(uint8(0), []byte(`{"format": "finresearchbench2-panel/1", "judges": [{"name": "a,b"}]}`))
	f.Add(uint8(3), []byte(`{"query": "q1", "id": "`+strings.Repeat("x", 70)+`", "text": "t", "dimension": "d"}`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fsys := fixFS()
		fsys[files[int(which)%len(files)]].Data = data
		in, err := Load(fsys)
		// Loaded with a store, the inputs are accepted or refused alike,
		// and read back the same texts.
		out, outErr := loadTo(fsys, &texttest.Store{})
		if fmt.Sprint(err) != fmt.Sprint(outErr) {
			t.Fatalf("Load: %v; with a store: %v", err, outErr)
		}
		if err != nil {
			var ie *results.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v is not an *InputError", err)
			}
			return
		}
		for q, rs := range in.Rubrics {
			if len(rs) == 0 || len(in.Reports[q]) != len(in.Panel.Products) {
				t.Fatal("loaded inputs break the invariants")
			}
			if got := out.rubricsOf(q); !reflect.DeepEqual(got, rs) {
				t.Fatalf("query %d: rubrics with a store %+v, in memory %+v", q, got, rs)
			}
			for p, text := range in.Reports[q] {
				if got := out.report(q, p); got != text {
					t.Fatalf("query %d, product %d: report with a store %q, in memory %q", q, p, got, text)
				}
			}
		}
	})
}
