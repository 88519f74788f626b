package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/analysis"
)

// TestSharedRanks writes a leaderboard whose second and third systems tie
// (90, 80, 80, 70: competition ranks 1, =2, =2, 4) in every format and
// reads each back: the shared rank is "=2" on both tied rows everywhere
// (CSV "'=2" by its formula rule), a lone rank a number, and the XLSX
// cell is text, never a formula that a spreadsheet would turn into 2.
func TestSharedRanks(t *testing.T) {
	tab := &analysis.Table{Benchmark: "toy", Name: "leaderboard", Title: "Leaderboard",
		Columns: []analysis.Column{{Name: "system"}, {Name: "rank"}, {Name: "score", Decimals: 1, Better: analysis.Higher}}}
	scores := []float64{90, 80, 80, 70}
	ranks := analysis.RankCells(analysis.CompetitionRanks(scores))
	for i, s := range []string{"A", "B", "C", "D"} {
		tab.AddRow(analysis.Text(s), ranks[i], analysis.Number(scores[i]))
	}
	want := []string{"1", "=2", "=2", "4"}

	var b bytes.Buffer
	if err := WriteCSV(&b, tab); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		if w[0] == '=' {
			w = "'" + w
		}
		if got := recs[i+1][1]; got != w {
			t.Errorf("CSV rank of row %d = %q, want %q", i+1, got, w)
		}
	}

	b.Reset()
	if err := WriteJSON(&b, tab); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Rows []map[string]any }
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		got := doc.Rows[i]["rank"]
		if f, ok := got.(float64); ok {
			got = jsonNum(f) // a lone rank is the number 1, not the text "1"
		}
		if got != w {
			t.Errorf("JSON rank of row %d = %#v, want %q", i+1, doc.Rows[i]["rank"], w)
		}
	}

	b.Reset()
	if err := WriteTerminal(&b, tab, 80); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "=2"); n != 2 {
		t.Errorf("terminal shows =2 %d times, want 2:\n%s", n, b.String())
	}

	b.Reset()
	if err := WriteWorkbook(&b, "Ranks", []*analysis.Table{tab}, testProv()); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenReader(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheet := f.GetSheetList()[2]
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for r, row := range rows {
		for c, v := range row {
			if v != "=2" {
				continue
			}
			found++
			ref, _ := excelize.CoordinatesToCellName(c+1, r+1)
			if fm, _ := f.GetCellFormula(sheet, ref); fm != "" {
				t.Errorf("%s!%s is the formula %q, want the text =2", sheet, ref, fm)
			}
		}
	}
	if found != 2 {
		t.Errorf("workbook shows =2 in %d cells, want 2: %q", found, rows)
	}
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }
