package hisrubric

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis"
)

// itemFields are the columns of FinDeepResearch's item records: one
// grading item of one system's scored report on one company.
var itemFields = []analysis.Field{
	{Name: "system", Doc: "evaluated system"},
	{Name: "company", Doc: "company id"},
	{Name: "market", Doc: "the company's market"},
	{Name: "language", Doc: "the company's report language"},
	{Name: "industry", Doc: "the company's industry"},
	{Name: "item", Doc: "grading item id"},
	{Name: "section", Doc: "the item's section id in the report structure; empty when its section is not in the structure"},
	{Name: "capability", Doc: "recognition, calculation, abstraction or interpretation"},
	{Name: "protocol", Doc: "the grading protocol: accuracy, claim or criterion"},
	{Name: "weight", Kind: analysis.NumField, Doc: "the item's full marks under the weights knob"},
	{Name: "score", Kind: analysis.NumField, Doc: "the item's score in [0, 1] under the settings; marks earned are weight x score"},
}

// Items lists every graded item of every scored report of c under s: by
// company, then system (configuration order), then item (input order).
// Only reports whose every item was graded are scored, so only those are
// listed. A report's accuracy score is 100 x sum(weight x score) /
// sum(weight) over its rows.
func (Benchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	opt, err := parseOptions(s)
	if err != nil {
		return nil, err
	}
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: items: collection of type %T", Name, c)
	}
	return (&run{collection: col, opt: opt}).items(), nil
}

func (r *run) items() *analysis.Items {
	return &analysis.Items{Fields: itemFields, Rows: r.itemRows}
}

// itemRows yields the rows of items.
func (r *run) itemRows(yield func([]string) bool) {
	in := r.in
	row := make([]string, len(itemFields))
	for _, rep := range r.reports {
		if !rep.complete {
			continue
		}
		sys := in.Config.Systems[rep.sys].Name
		co := rep.company
		scores := r.itemScores(rep)
		for i := range in.Items {
			item := &in.Items[i]
			sec := ""
			if k := r.itemSec[i]; k >= 0 {
				sec = in.Structure.Sections[k].ID
			}
			row = append(row[:0], sys, co.ID, co.Market, co.Language, co.Industry, item.ID, sec, string(item.Capability), string(item.Protocol),
				analysis.NumText(r.opt.weights[item.Capability]), analysis.NumText(scores[i]))
			if !yield(row) {
				return
			}
		}
	}
}
