package analysis

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestCompetitionRanks(t *testing.T) {
	tests := []struct {
		scores []float64
		want   []int
		text   string
	}{
		// Standard competition ranking ("1224"): 90, 80, 80, 70.
		{[]float64{90, 80, 80, 70}, []int{1, 2, 2, 4}, "1 =2 =2 4"},
		{[]float64{5, 5, 5}, []int{1, 1, 1}, "=1 =1 =1"},
		{[]float64{3, 2, 1}, []int{1, 2, 3}, "1 2 3"},
		// Lower is better works the same: ties are equal scores in order.
		{[]float64{0.1, 0.2, 0.2, 0.2, 0.5}, []int{1, 2, 2, 2, 5}, "1 =2 =2 =2 5"},
		// NaN never ties, not even with NaN.
		{[]float64{1, math.NaN(), math.NaN()}, []int{1, 2, 3}, "1 2 3"},
		{nil, []int{}, ""},
	}
	for _, tc := range tests {
		got := CompetitionRanks(tc.scores)
		if !slices.Equal(got, tc.want) {
			t.Errorf("CompetitionRanks(%v) = %v, want %v", tc.scores, got, tc.want)
		}
		var text []string
		for _, c := range RankCells(got) {
			text = append(text, c.Format(0))
		}
		if s := strings.Join(text, " "); s != tc.text {
			t.Errorf("RankCells(%v) print %q, want %q", got, s, tc.text)
		}
	}
	if got := RankingText([]string{"A", "B", "C", "D"}, []int{1, 2, 2, 4}); got != "A > B = C > D" {
		t.Errorf("RankingText = %q", got)
	}
	r := &Result{Ranking: []string{"A", "B", "C", "D"}, Scores: map[string]float64{"A": 9, "B": 7, "C": 7}}
	if got := r.Ranks(); !slices.Equal(got, []int{1, 2, 2, 4}) { // D has no score: shares nothing
		t.Errorf("Result.Ranks = %v, want [1 2 2 4]", got)
	}
}
