package consensus

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// A labelSet holds every selected judge's label of every rubric on every
// report: lab[j][q][r*np+p].
type labelSet struct {
	np  int
	lab [][][]int8 // by position in config.judges
}

// A votes summary of one rubric: bitmasks over products.
type votes struct {
	cons  uint64 // the judges agree (k of n) on the product's report
	myes  uint64 // majority yes: more yes than no among valid labels
	mno   uint64 // majority no
	query int32
}

// tally computes per rubric the masks for the judges at positions js of
// the label set, with k of them needed to agree.
func (ls *labelSet) tally(nr []int, js []int, k int) []votes {
	total := 0
	for _, n := range nr {
		total += n
	}
	out := make([]votes, 0, total)
	np := ls.np
	ys, ns := make([]int, np), make([]int, np) // yes and no labels by product
	labs := make([][]int8, len(js))            // the judges' labels of one query
	for q, n := range nr {
		for i, j := range js {
			labs[i] = ls.lab[j][q]
		}
		for r := range n {
			clear(ys)
			clear(ns)
			for _, lab := range labs {
				row := lab[r*np : (r+1)*np]
				y, nn := ys[:len(row)], ns[:len(row)]
				for p, l := range row {
					y[p] += b2i(l == yes)
					nn[p] += b2i(l == no)
				}
			}
			v := votes{query: int32(q)}
			for p := range np { // without branches, as the counts are random
				y, nn := ys[p], ns[p]
				v.cons |= uint64(b2i(y >= k)|b2i(nn >= k)) << p
				v.myes |= uint64(b2i(y > nn)) << p
				v.mno |= uint64(b2i(nn > y)) << p
			}
			out = append(out, v)
		}
	}
	return out
}

// Rubric fates under a selection.
const (
	fateInconsistent int8 = iota
	fateAlwaysYes
	fateAlwaysNo
	fateTooFew // rejected by a min-K rule with reports on both sides
	fateGold
)

// fate applies both filters to v using the products in mask s.
func fate(v votes, s uint64, dist int) int8 {
	if v.cons&s != s {
		return fateInconsistent
	}
	ny, nn := bits.OnesCount64(v.myes&s), bits.OnesCount64(v.mno&s)
	switch {
	case ny >= dist && nn >= dist:
		return fateGold
	case nn == 0:
		return fateAlwaysYes
	case ny == 0:
		return fateAlwaysNo
	}
	return fateTooFew
}

// A rateSet is a rubric set's per-query counts: n[q] rubrics, pass[q*np+p]
// of them passed by product p.
type rateSet struct {
	np   int
	n    []int
	pass []int
}

func newRateSet(nq, np int) *rateSet {
	return &rateSet{np: np, n: make([]int, nq), pass: make([]int, nq*np)}
}

func (rs *rateSet) add(v votes) {
	q := int(v.query)
	rs.n[q]++
	row := rs.pass[q*rs.np : (q+1)*rs.np]
	for m := v.myes; m != 0; m &= m - 1 {
		row[bits.TrailingZeros64(m)]++
	}
}

// rates returns item and macro pass rates in percent, per product, over
// the queries in qs. A product's macro rate counts queries with at least
// one rubric in the set. ok is false when the set is empty.
func (rs *rateSet) rates(qs []int, np int) (item, macro []float64, ok bool) {
	item, macro = make([]float64, np), make([]float64, np)
	total, nq := 0, 0
	for _, q := range qs {
		if rs.n[q] == 0 {
			continue
		}
		total += rs.n[q]
		nq++
		for p := range np {
			item[p] += float64(rs.pass[q*np+p])
			macro[p] += float64(rs.pass[q*np+p]) / float64(rs.n[q])
		}
	}
	if total == 0 {
		return item, macro, false
	}
	for p := range np {
		item[p] = 100 * item[p] / float64(total)
		macro[p] = 100 * macro[p] / float64(nq)
	}
	return item, macro, true
}

// A selection is the outcome of filtering every rubric.
type selection struct {
	fates []int8   // by rubric; nil unless full
	cons  *rateSet // consistency-passed rubrics; nil unless full
	nCons int      // consistency-passed rubrics
	gold  *rateSet
	// scored are the queries with at least minR gold rubrics.
	scored []int
}

// selectRubrics filters every rubric using products in mask s. Each
// rubric's fate and the consistency-passed rubrics' passes are kept only
// when full is set.
func selectRubrics(vs []votes, nq, np int, s uint64, dist, minR int, full bool) *selection {
	sel := newSelection(nq, np, full)
	if full {
		sel.fates = make([]int8, 0, len(vs))
	}
	sel.filter(vs, s, dist)
	sel.finish(nq, minR)
	return sel
}

func newSelection(nq, np int, full bool) *selection {
	sel := &selection{gold: newRateSet(nq, np)}
	if full {
		sel.cons = newRateSet(nq, np)
	}
	return sel
}

// filter adds the rubrics vs, filtered using products in mask s.
func (sel *selection) filter(vs []votes, s uint64, dist int) {
	full := sel.cons != nil
	for _, v := range vs {
		f := fate(v, s, dist)
		if full {
			sel.fates = append(sel.fates, f)
		}
		if f != fateInconsistent {
			sel.nCons++
			if full {
				sel.cons.add(v)
			}
		}
		if f == fateGold {
			sel.gold.add(v)
		}
	}
}

// finish lists the scored queries once every rubric is filtered.
func (sel *selection) finish(nq, minR int) {
	for q := range nq {
		if sel.gold.n[q] >= minR {
			sel.scored = append(sel.scored, q)
		}
	}
}

// rank orders product indices by score, highest first; ties by the
// second score, then by name. The order is for display: a product's rank
// is its competition rank by score alone (ranks), and every correlation
// is computed from the scores.
func rank(score, second []float64, names []string) []int {
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case score[a] > score[b]:
			return -1
		case score[a] < score[b]:
			return 1
		case second[a] > second[b]:
			return -1
		case second[a] < second[b]:
			return 1
		}
		return strings.Compare(names[a], names[b])
	})
	return idx
}

// ranks returns each product's competition rank by score (highest
// first; equal scores share a rank) given the display order from rank.
func ranks(order []int, score []float64) []int {
	s := make([]float64, len(order))
	for i, p := range order {
		s[i] = score[p]
	}
	r := make([]int, len(order))
	for i, k := range analysis.CompetitionRanks(s) {
		r[order[i]] = k
	}
	return r
}

// A goldRanking is products ranked on a selection's gold rubrics.
type goldRanking struct {
	item, macro []float64 // pass rates by product
	order       []int     // display order (see rank)
	rank        []int     // competition rank by item pass rate, by product
}

// rankGold ranks products on sel's gold rubrics by item pass rate (ties
// shown by macro rate, then name); nil when no gold rubric is scored.
func rankGold(sel *selection, np int, names []string) *goldRanking {
	item, macro, ok := sel.gold.rates(sel.scored, np)
	if !ok {
		return nil
	}
	order := rank(item, macro, names)
	return &goldRanking{item: item, macro: macro, order: order, rank: ranks(order, item)}
}

// itemRates returns g's item pass rates, nil for a nil g.
func (g *goldRanking) itemRates() []float64 {
	if g == nil {
		return nil
	}
	return g.item
}

func namesOf(order []int, names []string) []string {
	out := make([]string, len(order))
	for i, p := range order {
		out[i] = names[p]
	}
	return out
}
