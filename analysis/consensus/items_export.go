package consensus

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/finrepro/finrepro/analysis"
)

// itemFields are the columns of FinResearchBench II's item records: one
// judge's label of one rubric on one product's report in one run.
var itemFields = []analysis.Field{
	{Name: "query", Doc: "query id"},
	{Name: "rubric", Doc: "rubric id, unique within its query"},
	{Name: "dimension", Doc: "the rubric's dimension"},
	{Name: "judge", Doc: "judge name as in the panel"},
	{Name: "run", Kind: analysis.NumField, Doc: "0 for the main run; 1 and above for the stability reruns"},
	{Name: "product", Doc: "evaluated product"},
	{Name: "label", Doc: "yes, no, invalid (no usable verdict) or missing (no reply)"},
}

// Items lists every label of c: by query and rubric in input order, then
// judge (panel order), run and product (panel order). The consistency and
// distinguishability filters and every pass rate follow from the main
// run's labels (run 0); the stability table from the reruns.
func (Benchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: items: not a %s collection: %T", Name, Name, c)
	}
	return &analysis.Items{Fields: itemFields, Rows: col.itemRows}, nil
}

// itemRows yields the rows of items.
func (c *collection) itemRows(yield func([]string) bool) {
	in, np := c.in, c.ls.np
	row := make([]string, len(itemFields))
	add := func(vals ...string) bool { copy(row, vals); return yield(row) }
	type rerun struct {
		slot
		labs [][]int8
	}
	// reruns by (judge position, query), in product order
	var reruns []rerun
	for k, v := range c.reruns {
		reruns = append(reruns, rerun{k, v})
	}
	slices.SortFunc(reruns, func(a, b rerun) int {
		return cmp.Or(cmp.Compare(a.q, b.q), cmp.Compare(a.j, b.j), cmp.Compare(a.p, b.p))
	})
	for q, rs := range in.Rubrics {
		qid := in.Queries[q].ID
		for r, rub := range rs {
			for jpos, j := range c.judges {
				judge := in.Panel.Judges[j].Name
				for p := range np {
					if !add(qid, rub.ID, rub.Dimension, judge, "0", in.Panel.Products[p].Name, itemLabel(c.ls.lab[jpos][q][r*np+p])) {
						return
					}
				}
				for _, rr := range reruns {
					if rr.q != q || rr.j != jpos {
						continue
					}
					for run, labs := range rr.labs {
						if run == 0 || r >= len(labs) {
							continue // run 0 is the main run, listed above
						}
						if !add(qid, rub.ID, rub.Dimension, judge, analysis.IntText(run), in.Panel.Products[rr.p].Name, itemLabel(labs[r])) {
							return
						}
					}
				}
			}
		}
	}
}

// itemLabel is a label's name in the item records.
func itemLabel(l int8) string {
	switch l {
	case yes:
		return "yes"
	case no:
		return "no"
	case missing:
		return "missing"
	}
	return "invalid"
}
