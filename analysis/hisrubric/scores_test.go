package hisrubric

import (
	"fmt"
	"math"
	"testing"
)

// TestScoreSet checks that every score put is got back bit for bit,
// whether it fits in the table or is kept by position, that a score
// already in the table takes its index, and that index 0 is 0.
func TestScoreSet(t *testing.T) {
	third := 1.0 / 3
	for _, c := range []struct {
		max    int
		scores []float64
		// distinct indexes other than overflow, overflows
		indexes, overflows int
	}{
		{10, []float64{0, 1, 0.5, 1, third, 0.5, 0}, 4, 0},
		{3, []float64{0, 1, 0.5, 1, third, 0.7, 0.5}, 3, 2},
		{1, []float64{0, 1, 1}, 1, 2},
		{10, []float64{math.Copysign(0, -1), 0, math.NaN(), 0.25}, 4, 0},
		{overflow + 10, []float64{0.125, 0.125}, 2, 0},
	} {
		t.Run(fmt.Sprint(c.max, c.scores), func(t *testing.T) {
			s := newScoreSet(c.max)
			if got := s.get(7, 0); math.Float64bits(got) != 0 {
				t.Errorf("index 0 is %v, want 0", got)
			}
			idx := make([]uint16, len(c.scores))
			for pos, x := range c.scores {
				idx[pos] = s.put(pos, x)
			}
			seen := map[uint16]bool{0: true}
			over := 0
			for pos, x := range c.scores {
				if got := s.get(pos, idx[pos]); math.Float64bits(got) != math.Float64bits(x) {
					t.Errorf("score %d: got %v, put %v", pos, got, x)
				}
				if idx[pos] == overflow {
					over++
				} else {
					seen[idx[pos]] = true
				}
			}
			if len(seen) != c.indexes || over != c.overflows {
				t.Errorf("%d indexes and %d kept by position, want %d and %d", len(seen), over, c.indexes, c.overflows)
			}
		})
	}
}
