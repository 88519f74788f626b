package hisrubric

import "math"

// A scoreSet keeps a collection's item scores as 2-byte indexes of
// the distinct scores, which are few (0, 1, shares of a few claims,
// points of 10): at 8 times full scale (reproduce /work/scale/x8, 2.1
// million items) the scores as float64s were 17 MB of the 50 MB that
// FinDeepResearch's collection held, their indexes are 4.3 MB. A score
// that finds the table full is kept by its item's position. Index 0 is
// the score 0, so that new indexes score every item 0.
type scoreSet struct {
	vals []float64         // by index
	idx  map[uint64]uint16 // a score's index by its bits
	over map[int]float64   // the scores not in vals, by item position
	max  int               // the most values vals holds
}

// overflow is the index of a score kept by its item's position.
const overflow = math.MaxUint16

// newScoreSet returns a table of at most max (at most overflow)
// distinct scores before it keeps them by position.
func newScoreSet(max int) *scoreSet {
	return &scoreSet{vals: []float64{0}, idx: map[uint64]uint16{0: 0}, over: map[int]float64{}, max: min(max, overflow)}
}

// put returns the index of score x of the item at position pos.
func (t *scoreSet) put(pos int, x float64) uint16 {
	b := math.Float64bits(x) // -0 and NaNs are kept as they are
	if k, ok := t.idx[b]; ok {
		return k
	}
	if len(t.vals) < t.max {
		k := uint16(len(t.vals))
		t.vals = append(t.vals, x)
		t.idx[b] = k
		return k
	}
	t.over[pos] = x
	return overflow
}

// get returns the score of index k of the item at position pos.
func (t *scoreSet) get(pos int, k uint16) float64 {
	if k == overflow {
		return t.over[pos]
	}
	return t.vals[k]
}
