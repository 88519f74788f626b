package site

import (
	"math"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestCellVerdict checks the split of differing cells at twice the
// tolerance, by hand: 72.25 against 72.23 with tolerance 0.005 is 0.02
// off, four times it: differs; 0.008 off is within 0.01.
func TestCellVerdict(t *testing.T) {
	tests := []struct {
		cell analysis.ComparedCell
		want string
	}{
		{analysis.ComparedCell{Published: "72.25", Diff: 0.004, Tolerance: 0.005, Status: analysis.Reproduced}, verdictReproduced},
		{analysis.ComparedCell{Published: "72.25", Diff: -0.008, Tolerance: 0.005, Status: analysis.Differs}, verdictWithinTwice},
		{analysis.ComparedCell{Published: "72.25", Diff: 0.01, Tolerance: 0.005, Status: analysis.Differs}, verdictWithinTwice},
		{analysis.ComparedCell{Published: "72.25", Diff: -0.02, Tolerance: 0.005, Status: analysis.Differs}, verdictDiffers},
		{analysis.ComparedCell{Published: "yes", Diff: math.NaN(), Status: analysis.Differs}, verdictDiffers},
		{analysis.ComparedCell{Published: "3", Diff: math.NaN(), Status: analysis.NotComputed}, verdictUncomputed},
		{analysis.ComparedCell{Diff: math.NaN()}, ""},
	}
	for _, tc := range tests {
		if got := cellVerdict(tc.cell); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.cell, got, tc.want)
		}
	}
}

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
