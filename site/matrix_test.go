package site

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/finrepro/finrepro/analysis"
)

// TestPairMatrix checks the matrix drawn from the fixture's
// requested_pairs table, cell by cell, against values derived by hand
// from its three rows:
//
//	o3 - 文心 = +3.45 [1.20, 5.70], p 0.0040, p Holm 0.0080: resolved, so
//	  (o3, 文心) = +3.45* and (文心, o3) = -3.45* with [-5.70, -1.20];
//	Perplexity - Grok = +4.60 [-0.50, 9.75], p Holm 0.0800: not marked,
//	  (Grok, Perplexity) = -4.60 with [-9.75, +0.50];
//	o3 - Grok undefined: n/a both ways, with the reason;
//
// systems in order of first appearance, "—" on the diagonal, every
// other cell empty.
func TestPairMatrix(t *testing.T) {
	root := write(t, fixture(false))
	b, err := os.ReadFile(filepath.Join(root, "icbcbench.html"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var tables []*html.Node
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "table" && attr(n, "class") == "matrix" {
			tables = append(tables, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(doc)
	if len(tables) != 1 {
		t.Fatalf("%d matrices on the page, want 1 (the requested_pairs table; the other tables are no pair tables)", len(tables))
	}
	type cell struct{ text, class, title string }
	var got [][]cell
	var rows func(*html.Node)
	rows = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "tr" {
			var r []cell
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode {
					r = append(r, cell{strings.TrimSpace(visible(c)), attr(c, "class"), attr(c, "title")})
				}
			}
			got = append(got, r)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			rows(c)
		}
	}
	rows(tables[0])
	const o3, wx, px, gk = "OpenAI-o3-deep-research", "文心一言 深度研究", "Perplexity-Deep-Research", "Grok-3-DeepSearch"
	self := cell{"—", "num self", ""}
	empty := cell{"", "num", ""}
	want := [][]cell{
		{{"System", "", ""}, {o3, "", ""}, {wx, "", ""}, {px, "", ""}, {gk, "", ""}},
		{{o3, "", ""}, self,
			{"+3.45*", "num sig", o3 + " − " + wx + " = +3.45, 95% interval [+1.20, +5.70], p = 0.0040, p Holm = 0.0080 (resolved)"},
			empty,
			{"n/a", "num", o3 + " − " + gk + ": no shared items"}},
		{{wx, "", ""},
			{"-3.45*", "num sig", wx + " − " + o3 + " = -3.45, 95% interval [-5.70, -1.20], p = 0.0040, p Holm = 0.0080 (resolved)"},
			self, empty, empty},
		{{px, "", ""}, empty, empty, self,
			{"+4.60", "num", px + " − " + gk + " = +4.60, 95% interval [-0.50, +9.75], p = 0.0800, p Holm = 0.0800"}},
		{{gk, "", ""},
			{"n/a", "num", gk + " − " + o3 + ": no shared items"},
			empty,
			{"-4.60", "num", gk + " − " + px + " = -4.60, 95% interval [-9.75, +0.50], p = 0.0800, p Holm = 0.0800"},
			self},
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got), len(want)) {
			if i >= len(got) || i >= len(want) || !reflect.DeepEqual(got[i], want[i]) {
				var g, w []cell
				if i < len(got) {
					g = got[i]
				}
				if i < len(want) {
					w = want[i]
				}
				t.Errorf("row %d:\n got %q\nwant %q", i, g, w)
			}
		}
	}
}

// TestPairMatrixOnlyPairs checks that a table without the columns of
// paired comparisons, or of another name, has no matrix.
func TestPairMatrixOnlyPairs(t *testing.T) {
	in := fixture(false)
	for _, tb := range in.Results[0].Tables {
		if m := pairMatrix(tb); (m != nil) != (tb.Name == "requested_pairs") {
			t.Errorf("table %s: matrix %v", tb.Name, m != nil)
		}
	}
	renamed := *in.Results[0].Tables[2]
	renamed.Name = "pairs"
	if pairMatrix(&renamed) == nil {
		t.Error("a pairs table has no matrix")
	}
	renamed.Columns = renamed.Columns[:len(renamed.Columns)-2] // no p_holm
	if pairMatrix(&renamed) != nil {
		t.Error("a pairs table without p_holm has a matrix")
	}
}

// visible is the text of n a sighted reader sees: without the
// screen-reader-only spans.
func visible(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	if n.Type == html.ElementNode && strings.Contains(" "+attr(n, "class")+" ", " sr ") {
		return ""
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(visible(c))
	}
	return b.String()
}

// TestHeatmapLabels checks that a heatmap's axes carry labels of at most
// 12 characters, abbreviated with an ellipsis, and the option the full
// names for the tooltip. Expected labels by hand: a name of more than 12
// characters keeps its first 11 and "…"; two that would then read the
// same keep their first 6 and last 5 instead.
func TestHeatmapLabels(t *testing.T) {
	tb := &analysis.Table{Name: "heat", Columns: []analysis.Column{{Name: "system"},
		{Name: "short", Title: "Depth"}, {Name: "long", Title: "Consistency of the rubric"}}}
	names := []string{"OpenAI-o3-deep-research", "Gemini-2.5-Pro-Deep-Research", "Gemini-2.5-Flash-Deep-Research", "文心一言 深度研究", "abcdefghijkl", "abcdefghijklm"}
	for i, n := range names {
		tb.AddRow(analysis.Text(n), analysis.Number(float64(i)), analysis.Number(1))
	}
	b, err := chartOption(tb, analysis.Chart{ID: "h", Kind: analysis.Heatmap, X: "system", Y: []string{"short", "long"}})
	if err != nil {
		t.Fatal(err)
	}
	var opt struct {
		XAxis []struct {
			Data      []string
			AxisLabel struct{ Rotate float64 }
		}
		YAxis    []struct{ Data []string }
		Finrepro struct{ Labels struct{ X, Y []string } }
	}
	if err := json.Unmarshal(b, &opt); err != nil {
		t.Fatal(err)
	}
	wantY := []string{"OpenAI-o3-d…", "Gemini…earch", "Gemini…earch", "文心一言 深度研究", "abcdefghijkl", "abcdefghijk…"}
	// the two Gemini names still collide at both ends: they stay in full
	wantY[1], wantY[2] = names[1], names[2]
	if len(opt.XAxis) != 1 || len(opt.YAxis) != 1 {
		t.Fatalf("axes: %s", b)
	}
	if got, want := opt.XAxis[0].Data, []string{"Depth", "Consistency…"}; !reflect.DeepEqual(got, want) {
		t.Errorf("x labels %q, want %q", got, want)
	}
	if opt.XAxis[0].AxisLabel.Rotate == 0 {
		t.Error("x labels not rotated")
	}
	if got := opt.YAxis[0].Data; !reflect.DeepEqual(got, wantY) {
		t.Errorf("y labels %q, want %q", got, wantY)
	}
	if got, want := opt.Finrepro.Labels.X, []string{"Depth", "Consistency of the rubric"}; !reflect.DeepEqual(got, want) {
		t.Errorf("full x names %q, want %q", got, want)
	}
	if got := opt.Finrepro.Labels.Y; !reflect.DeepEqual(got, names) {
		t.Errorf("full y names %q, want %q", got, names)
	}
}

func TestShortLabels(t *testing.T) {
	for _, tt := range []struct{ in, want []string }{
		{[]string{"abcdefghijklmnop"}, []string{"abcdefghijk…"}},
		{[]string{"Gemini-Pro-research-x", "Gemini-Pro-research-y"}, []string{"Gemini…rch-x", "Gemini…rch-y"}},
		{[]string{"abcdefghijk…", "abcdefghijkXYZ"}, []string{"abcdefghijk…", "abcdef…jkXYZ"}},
	} {
		if got := shortLabels(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("shortLabels(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// attr returns the value of n's attribute key, or "".
func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
