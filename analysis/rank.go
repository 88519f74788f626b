package analysis

import (
	"math"
	"strconv"
	"strings"
)

// CompetitionRanks returns the standard competition ranks ("1224") of
// scores listed in ranking order, best first: a score equal to the one
// above it shares its rank, and the next score's rank is one more than
// the number of scores above it. A NaN score never ties. Every rank a
// table, a page or a workbook prints comes from here, so that exactly
// tied systems share a rank everywhere and a tie is never broken silently.
func CompetitionRanks(scores []float64) []int {
	r := make([]int, len(scores))
	for i := range scores {
		r[i] = i + 1
		if i > 0 && scores[i] == scores[i-1] && !math.IsNaN(scores[i]) {
			r[i] = r[i-1]
		}
	}
	return r
}

// FormatRank prints a rank, "=2" when it is shared with another system
// (as the papers print ties), "2" otherwise.
func FormatRank(rank int, shared bool) string {
	if shared {
		return "=" + strconv.Itoa(rank)
	}
	return strconv.Itoa(rank)
}

// Shared says, for each of ranks, whether another entry holds the same
// rank.
func Shared(ranks []int) []bool {
	n := map[int]int{}
	for _, r := range ranks {
		n[r]++
	}
	s := make([]bool, len(ranks))
	for i, r := range ranks {
		s[i] = n[r] > 1
	}
	return s
}

// RankCells returns one cell per rank: a number for a rank held alone, the
// text "=2" for a shared one.
func RankCells(ranks []int) []Cell {
	out := make([]Cell, len(ranks))
	for i, s := range Shared(ranks) {
		if s {
			out[i] = Text(FormatRank(ranks[i], true))
		} else {
			out[i] = Int(ranks[i])
		}
	}
	return out
}

// RankingText prints names in ranking order with their ranks: "A > B = C >
// D" when B and C share a rank.
func RankingText(names []string, ranks []int) string {
	var b strings.Builder
	for i, n := range names {
		switch {
		case i == 0:
		case ranks[i] == ranks[i-1]:
			b.WriteString(" = ")
		default:
			b.WriteString(" > ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// Ranks returns the competition rank of every system of r.Ranking (see
// CompetitionRanks) from its headline score in r.Scores; a system without
// a score shares no rank.
func (r *Result) Ranks() []int {
	s := make([]float64, len(r.Ranking))
	for i, n := range r.Ranking {
		v, ok := r.Scores[n]
		if !ok {
			v = math.NaN()
		}
		s[i] = v
	}
	return CompetitionRanks(s)
}
