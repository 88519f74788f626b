package analysis

import (
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

func TestHalfUnit(t *testing.T) {
	for s, want := range map[string]float64{"58.58": 0.005, "104": 0.5, "0.970": 0.0005, "-3.1": 0.05} {
		if got := HalfUnit(s); got < want*0.999 || got > want*1.001 {
			t.Errorf("HalfUnit(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCompare(t *testing.T) {
	pub, err := results.ReadCSV(strings.NewReader("# pass rates\nproduct,gold_item,note\nKimi,58.58,x\nQwen,46.65,\nGone,1.0,\n"), "published/b/pass_rates.csv")
	if err != nil {
		t.Fatal(err)
	}
	computed := &Table{Name: "pass_rates", Columns: []Column{{Name: "product"}, {Name: "gold_item", Decimals: 2}, {Name: "note"}}}
	computed.AddRow(Text("Kimi"), Number(58.5849), Text("x")) // within 0.005 of 58.58
	computed.AddRow(Text("Qwen"), Number(46.6601), Text("y")) // 0.0101 off: differs
	tests := []struct {
		name    string
		tab     *Table
		verdict string
		differ  []string
	}{
		{"differs", computed, Differs, []string{"Qwen/gold_item"}},
		{"missing", nil, NotComparable, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare("b", pub, tc.tab, -1)
			if c.Verdict != tc.verdict {
				t.Fatalf("verdict %q (%s), want %q", c.Verdict, c.Reason, tc.verdict)
			}
			var got []string
			for _, d := range c.Cells {
				got = append(got, d.Row+"/"+d.Column)
			}
			if strings.Join(got, " ") != strings.Join(tc.differ, " ") {
				t.Fatalf("differing cells %v, want %v", got, tc.differ)
			}
		})
	}
	// "Kimi" note "x" equals, Qwen note empty is skipped, Gone is not in
	// the computed table: 2 numeric + 1 text compared, one row absent.
	if c := Compare("b", pub, computed, -1); c.Compared != 3 || strings.Join(c.Absent, ",") != "Gone" {
		t.Fatalf("compared %d cells, absent %q; want 3, Gone", c.Compared, c.Absent)
	}
	computed.Rows[1][1] = Number(46.65)
	computed.Rows = computed.Rows[:2]
	pub.Rows = pub.Rows[:2]
	if c := Compare("b", pub, computed, -1); c.Verdict != Reproduced {
		t.Fatalf("verdict %q, want reproduced: %+v", c.Verdict, c.Cells)
	}
}

func TestCellFormat(t *testing.T) {
	tests := []struct {
		c    Cell
		dec  int
		want string
	}{
		{Number(62.5), 0, "63"},
		{Number(-1.25), 1, "-1.3"},
		{Number(-0.0001), 2, "0.00"},
		{Number(58.575), 2, "58.58"},
		{Undefined("n < 3"), 2, "n/a"},
		{Text("x"), 2, "x"},
	}
	for _, tc := range tests {
		if got := tc.c.Format(tc.dec); got != tc.want {
			t.Errorf("Format(%v, %d) = %q, want %q", tc.c, tc.dec, got, tc.want)
		}
	}
}

func TestCompareCompositeKey(t *testing.T) {
	pub, err := results.ReadCSV(strings.NewReader("kind,applies_to,epsilon\nunit,money,0.05\nunit,ratio,0.01\ncategory,rates,0.001\n"), "tolerances.csv")
	if err != nil {
		t.Fatal(err)
	}
	computed := &Table{Name: "tolerances", Columns: []Column{{Name: "kind"}, {Name: "applies_to"}, {Name: "epsilon", Decimals: 3}}}
	computed.AddRow(Text("category"), Text("rates"), Number(0.001))
	computed.AddRow(Text("unit"), Text("ratio"), Number(0.01))
	computed.AddRow(Text("unit"), Text("money"), Number(0.05))
	if c := Compare("b", pub, computed, -1); c.Verdict != Reproduced || c.Compared != 3 {
		t.Fatalf("verdict %q, %d compared, cells %+v; want reproduced, 3", c.Verdict, c.Compared, c.Cells)
	}
}

// TestCompareUncomputedColumn: the published table has a column (macro)
// the computed table lacks. Its cells cannot be checked, so the verdict is
// never reproduced: not comparable, naming the column, when the other
// cells match; differs (still naming it) when one does not. A published
// column without any value (empty) is not reported.
func TestCompareUncomputedColumn(t *testing.T) {
	pub, err := results.ReadCSV(strings.NewReader("product,gold_item,macro,blank\nKimi,58.58,61.2,\nQwen,46.65,,\n"), "published/b/pass_rates.csv")
	if err != nil {
		t.Fatal(err)
	}
	computed := &Table{Name: "pass_rates", Columns: []Column{{Name: "product"}, {Name: "gold_item", Decimals: 2}}}
	computed.AddRow(Text("Kimi"), Number(58.58))
	computed.AddRow(Text("Qwen"), Number(46.65))
	c := Compare("b", pub, computed, -1)
	if c.Verdict != NotComparable || !strings.HasPrefix(c.Reason, "not comparable: column macro not computed") ||
		c.Compared != 2 || len(c.Cells) != 0 || strings.Join(c.Uncomputed, ",") != "macro" {
		t.Fatalf("comparison %+v; want not comparable naming macro, 2 cells compared", c)
	}
	computed.Rows[1][1] = Number(40)
	c = Compare("b", pub, computed, -1)
	if c.Verdict != Differs || c.Reason != "not comparable: column macro not computed" || len(c.Cells) != 1 {
		t.Fatalf("comparison %+v; want differs, one cell, macro named", c)
	}
}

// TestCompareCellVerdicts: each cell's verdict, value at the published
// precision and signed difference. Published 58.58 (2 decimals) has the
// tolerance 0.005 (half a unit of the last digit), so by hand:
// 58.584 is 0.004 off: reproduced, printed 58.58;
// 58.589 is 0.009 off (<= 0.010): within 2x tolerance, printed 58.59;
// 58.5701 is 0.0099 below: within 2x, difference -0.0099 printed -0.01;
// 58.60 is 0.02 off: differs.
// A table's verdict is its worst cell's; rows the computed table lacks
// are absent, and a table with only absent rows is not comparable.
func TestCompareCellVerdicts(t *testing.T) {
	pub, err := results.ReadCSV(strings.NewReader("system,a,b\nX,58.58,58.58\nY,58.58,58.58\nZ,1.0,2.0\n"), "t.csv")
	if err != nil {
		t.Fatal(err)
	}
	mk := func(vals ...float64) *Table {
		tab := &Table{Name: "t", Columns: []Column{{Name: "system"}, {Name: "a", Decimals: 4}, {Name: "b", Decimals: 4}}}
		tab.AddRow(Text("X"), Number(vals[0]), Number(vals[1]))
		tab.AddRow(Text("Y"), Number(vals[2]), Number(vals[3]))
		return tab
	}
	c := Compare("b", pub, mk(58.584, 58.589, 58.5701, 58.58), -1)
	type cell struct{ computed, verdict string }
	want := []cell{{"58.58", Reproduced}, {"58.59", WithinTwice}, {"58.57", WithinTwice}, {"58.58", Reproduced}}
	if len(c.All) != len(want) {
		t.Fatalf("%d cells compared, want %d: %+v", len(c.All), len(want), c.All)
	}
	for i, w := range want {
		if d := c.All[i]; d.Computed != w.computed || d.Verdict != w.verdict || d.Decimals != 2 || !d.Numeric {
			t.Errorf("cell %d: %+v, want computed %s, %s, 2 decimals", i, d, w.computed, w.verdict)
		}
	}
	// the published layout carries the same verdicts, pointing at the
	// cells compared
	for i, cc := range append(slices.Clone(c.Rows[0].Cells), c.Rows[1].Cells...) {
		if cc.Status != want[i].verdict || cc.Cell != &c.All[i] {
			t.Errorf("laid-out cell %d: status %q, cell %p; want %q, %p", i, cc.Status, cc.Cell, want[i].verdict, &c.All[i])
		}
	}
	if c.Verdict != WithinTwice || strings.Join(c.Absent, ",") != "Z" || len(c.Cells) != 2 {
		t.Fatalf("table %q, absent %q, %d cells not reproduced; want within 2x, Z, 2", c.Verdict, c.Absent, len(c.Cells))
	}
	if d := c.All[2].Delta; d > -0.0098 || d < -0.0100 {
		t.Errorf("signed difference %v, want -0.0099", d)
	}
	if c := Compare("b", pub, mk(58.58, 58.60, 58.58, 58.58), -1); c.Verdict != Differs || c.Cells[0].Verdict != Differs {
		t.Errorf("58.60 against 58.58: table %q, cell %+v; want differs", c.Verdict, c.Cells)
	}
	empty := &Table{Name: "t", Columns: mk(0, 0, 0, 0).Columns}
	if c := Compare("b", pub, empty, -1); c.Verdict != NotComparable || c.Reason != "none of the 3 published rows is in the bundle" {
		t.Errorf("no row in the bundle: %q (%s)", c.Verdict, c.Reason)
	}
	// The cells table carries numbers at the published precision.
	_, cells := ComparisonTables([]Comparison{c})
	if got := cells.Rows[1][5]; !got.IsNum || got.DecimalsIn(cells.Columns[5]) != 2 || got.Format(got.DecimalsIn(cells.Columns[5])) != "58.59" {
		t.Errorf("computed cell %+v, want the number 58.589 printed 58.59", got)
	}
	if got := cells.Rows[2][6]; got.Format(got.DecimalsIn(cells.Columns[6])) != "-0.01" {
		t.Errorf("difference %+v, want -0.01", got)
	}
}

// TestCompareRows checks the published layout a comparison keeps: every
// published row in order, each cell with the computed value at the
// published precision, the signed difference and its status.
func TestCompareRows(t *testing.T) {
	pub, err := results.ReadCSV(strings.NewReader("product,gold_item,depth\nKimi,58.58,3.1\nQwen,46.65,\nGone,1.0,2\n"), "published/b/pass_rates.csv")
	if err != nil {
		t.Fatal(err)
	}
	computed := &Table{Name: "pass_rates", Columns: []Column{{Name: "product"}, {Name: "gold_item", Decimals: 4}}}
	computed.AddRow(Text("Kimi"), Number(58.5849)) // 58.5849-58.58 = +0.0049, within 0.005
	computed.AddRow(Text("Qwen"), Number(46.6401)) // 46.6401-46.65 = -0.0099: within 2x tolerance
	c := Compare("b", pub, computed, -1)
	if strings.Join(c.Header, ",") != "product,gold_item,depth" || c.Keys != 1 || len(c.Rows) != 3 {
		t.Fatalf("header %v keys %d rows %d", c.Header, c.Keys, len(c.Rows))
	}
	type want struct {
		found    bool
		computed string
		diff     float64
		status   string
	}
	wants := []want{{true, "58.58", 0.0049, Reproduced}, {true, "46.64", -0.0099, WithinTwice}, {false, "", 0, NotComputed}}
	for i, w := range wants {
		r := c.Rows[i]
		cc := r.Cells[0]
		if r.Found != w.found || cc.Status != w.status || w.found != (cc.Cell != nil) {
			t.Errorf("row %v: found %v status %q cell %+v, want %+v", r.Key, r.Found, cc.Status, cc.Cell, w)
			continue
		}
		if w.found && (cc.Cell.Computed != w.computed || cc.Cell.Delta < w.diff-1e-9 || cc.Cell.Delta > w.diff+1e-9) {
			t.Errorf("row %v: computed %q diff %v, want %q %v", r.Key, cc.Cell.Computed, cc.Cell.Delta, w.computed, w.diff)
		}
		// depth is not computed: "3.1" and "2" are NotComputed, Qwen's empty cell has no status
		if d := r.Cells[1]; (d.Published == "") != (d.Status == "") || d.Published != "" && d.Status != NotComputed {
			t.Errorf("row %v depth: %+v", r.Key, d)
		}
	}
	if len(c.Uncomputed) != 1 || c.Uncomputed[0] != "depth" {
		t.Errorf("uncomputed %v", c.Uncomputed)
	}
}
