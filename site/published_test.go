package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestPublishedSummary checks the per-table summary and the index line on
// the fixture's published table (see fixture: 4 cells of the two rows the
// bundle has, one missing row, one uncomputed column).
func TestPublishedSummary(t *testing.T) {
	s, err := newSite(fixture(false))
	if err != nil {
		t.Fatal(err)
	}
	vs := s.pubViews("icbcbench")
	if len(vs) != 1 {
		t.Fatalf("%d views", len(vs))
	}
	want := "4 cells compared: 2 reproduced, 1 within twice the tolerance, 1 differ; largest difference +0.0500 (Gemini-2.5-Pro-Deep-Research, en_overall)."
	if !strings.HasPrefix(vs[0].Summary, want) {
		t.Errorf("summary %q, want prefix %q", vs[0].Summary, want)
	}
	if len(vs[0].Rows) != 2 || len(vs[0].Missing) != 1 {
		t.Errorf("%d rows, %d missing; want 2 and 1", len(vs[0].Rows), len(vs[0].Missing))
	}
	if line, ok := s.pubLine("icbcbench"); !ok || line != "0 of 1 tables reproduced; 2 of 4 cells reproduced, 1 within twice the tolerance, 1 differ" {
		t.Errorf("index line %q", line)
	}
	if _, ok := s.pubLine("findeepforecast"); ok {
		t.Error("a benchmark without published tables has a verdict line")
	}
}

func TestNaturalCompare(t *testing.T) {
	// each list is in the order wanted
	for _, list := range [][]string{
		{"1", "2", "10", "11", "100"},
		{"q2", "q9", "q10", "q10a", "r1"},
		{"en-001", "en-002", "en-010", "zh-001"},
		{"01", "1", "2"}, // equal numbers: plain order
		{"a", "ab", "b"},
	} {
		for i := range list {
			for j := range list {
				got := naturalCompare(list[i], list[j])
				if (got < 0) != (i < j) || (got == 0) != (i == j) {
					t.Errorf("naturalCompare(%q, %q) = %d", list[i], list[j], got)
				}
			}
		}
	}
}

// TestAuditLinks checks that a task column links to the entry of the
// row's system on the task page, and that an unknown task stays text.
func TestAuditLinks(t *testing.T) {
	root := write(t, fixture(false))
	b, err := os.ReadFile(filepath.Join(root, "findeepforecast.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, `<a href="tasks/findeepforecast/fc-042.html#s-`) {
		t.Error("the audit table's task cell does not link to the task entry")
	}
	if strings.Contains(page, "fc-999.html") {
		t.Error("an unknown task is linked")
	}
}

// TestAppendJSONString checks the property of the folded verdicts'
// encoding: it decodes to the text (or to a prefix of it when cut, within
// the limit), and holds no <, > or & that could end the script element.
func TestAppendJSONString(t *testing.T) {
	for _, text := range append(slices.Clone(payloads), "", "plain", "tab\tline\nquote\"back\\slash\x01\x1f", "文心一言 深度研究 \u2028\u2029",
		// three-byte sequences at the edges of the fast path: overlong,
		// surrogate, U+2027 to U+202A, the last BMP rune, cut short
		"a\xe0\x80\x80b", "\xed\xa0\x80", "\xe2\x80\xa7\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaa", "\xef\xbf\xbf", "x\xe4\xb8", "\xe4\xb8\xad\xf0\x9f\x98\x80") {
		checkJSONString(t, text, -1)
		for _, n := range []int{0, 1, 5, 6, 7, 20, 1 << 20} {
			checkJSONString(t, text, n)
		}
	}
}

func checkJSONString(t *testing.T, text string, n int) {
	t.Helper()
	b, cut := appendJSONString(nil, text, n)
	if bytes.ContainsAny(b, "<>&\u2028\u2029") {
		t.Fatalf("%q: encoded %s holds <, > or &", text, b)
	}
	var got string
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%q: %s does not decode: %v", text, b, err)
	}
	if n >= 0 && len(b) > n+2 {
		t.Fatalf("%q cut to %d: %d bytes", text, n, len(b))
	}
	want := string([]rune(text)) // each invalid byte one U+FFFD, as JSON.parse and range see it
	if cut && (!strings.HasPrefix(want, got) || got == want) || !cut && got != want {
		t.Fatalf("%q cut to %d: decoded %q (cut %v)", text, n, got, cut)
	}
	if ref := referenceJSONString(text); !cut && string(b) != ref {
		t.Fatalf("%q (limit %d): encoded %s, want %s", text, n, b, ref)
	}
}

// referenceJSONString is the encoding appendJSONString gives a text it
// does not cut, rune by rune from its definition: an invalid byte as
// U+FFFD; the quote and the backslash, newline, carriage return and tab
// as two-character escapes; other control characters, <, >, &, U+2028
// and U+2029 as \u escapes in lower-case hex; every other rune as it is.
func referenceJSONString(text string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range text {
		switch {
		case r == '"':
			sb.WriteString(`\"`)
		case r == '\\':
			sb.WriteString(`\\`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r) // U+FFFD for an invalid byte, as range gives it
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

func FuzzAppendJSONString(f *testing.F) {
	for _, p := range payloads {
		f.Add(p, 10)
	}
	f.Fuzz(func(t *testing.T, text string, n int) {
		if n > 1<<16 {
			n = 1 << 16
		}
		checkJSONString(t, text, n)
	})
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		col  analysis.Column
		want string
	}{
		{analysis.Column{Name: "product"}, "System"},
		{analysis.Column{Name: "method", Title: "Method"}, "System"},
		{analysis.Column{Name: "consistency_item"}, "Consistency item"},
		{analysis.Column{Name: "x", Title: "consistency_item (%)"}, "Consistency item (%)"},
		{analysis.Column{Name: "rank_lo", Title: "rank lo"}, "Rank lo"},
		{analysis.Column{Name: "gpt-4.1"}, "gpt-4.1"},
		{analysis.Column{Name: "en", Title: "EN overall"}, "EN overall"},
	} {
		if got := label(tc.col); got != tc.want {
			t.Errorf("label(%+v) = %q, want %q", tc.col, got, tc.want)
		}
	}
}

// TestHeadlineInterval checks what a system page shows per benchmark,
// read from the headline table's rank_lo/rank_hi, cluster_lo/cluster_hi
// and tier columns.
func TestHeadlineInterval(t *testing.T) {
	tab := &analysis.Table{Name: "main", Columns: []analysis.Column{{Name: "system"}, {Name: "overall", Decimals: 2},
		{Name: "cluster_lo", Decimals: 2}, {Name: "cluster_hi", Decimals: 2}, {Name: "tier"}, {Name: "rank_lo"}, {Name: "rank_hi"}}}
	tab.AddRow(analysis.Text("a"), analysis.Number(50), analysis.Number(41.2), analysis.Number(57.9), analysis.Text("A"), analysis.Int(1), analysis.Int(3))
	tab.AddRow(analysis.Text("b"), analysis.Number(40), analysis.Undefined("one cluster"), analysis.Number(45), analysis.Text("B"), analysis.Int(2), analysis.Int(4))
	r := &analysis.Result{Benchmark: "x", Headline: "main", Tables: []*analysis.Table{tab}}
	for _, tc := range []struct{ name, rank, score, tie string }{
		{"a", "1–3", "41.20–57.90", "A"},
		{"b", "2–4", "–", "B"},
		{"c", "–", "–", "–"},
	} {
		rank, score, tie := headlineInterval(r, tc.name)
		if rank != tc.rank || score != tc.score || tie != tc.tie {
			t.Errorf("%s: %q %q %q, want %q %q %q", tc.name, rank, score, tie, tc.rank, tc.score, tc.tie)
		}
	}
}
