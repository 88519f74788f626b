package forecast

import (
	"fmt"

	"github.com/finrepro/finrepro/analysis"
)

// itemFields are the columns of FinDeepForecast's item records: one
// system's prediction on one task.
var itemFields = []analysis.Field{
	{Name: "system", Doc: "evaluated system"},
	{Name: "task", Doc: "task id"},
	{Name: "kind", Doc: "recurrent or non-recurrent"},
	{Name: "level", Doc: "corporate or macro"},
	{Name: "market", Doc: "market of the task"},
	{Name: "week", Kind: analysis.NumField, Doc: "week of release, from 1"},
	{Name: "state", Doc: "the task's state at the evaluation time: resolved, pending or void"},
	{Name: "prediction", Doc: "the answer as the system gave it; empty when missing or unreadable"},
	{Name: "value", Kind: analysis.NumField, Doc: "recurrent tasks: the prediction read as a number in the task's unit; null when not readable"},
	{Name: "truth", Doc: "the ground truth; empty while unknown"},
	{Name: "tolerance", Kind: analysis.NumField, Doc: "recurrent tasks: the relative tolerance eps under the tolerance_scale knob (|value - truth| / |truth| < eps is correct; with truth 0 the zero rule applies)"},
	{Name: "correct", Kind: analysis.BoolField, Doc: "the outcome under the settings; null when the prediction is not scored (missing reply, task not resolved, excluded by the late policy or the zero rule)"},
	{Name: "late", Kind: analysis.BoolField, Doc: "the isolation audit flags the prediction (recorded after the deadline or citing later evidence)"},
	{Name: "invalid", Kind: analysis.BoolField, Doc: "the answer could not be read (counted wrong when scored)"},
	{Name: "missing", Kind: analysis.BoolField, Doc: "the call had no reply"},
}

// Items lists every prediction of c scored under s: by task in input
// order, then system in configuration order. An accuracy is the number of
// rows with correct true over the rows with correct not null.
func (Benchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: items: not a %s collection", Name, Name)
	}
	opt, err := ParseOptions(s)
	if err != nil {
		return nil, err
	}
	return &analysis.Items{Fields: itemFields, Rows: func(yield func([]string) bool) { col.itemRows(opt, yield) }}, nil
}

// itemRows yields the rows of items.
func (c *collection) itemRows(opt Options, yield func([]string) bool) {
	in := c.in
	for ti, t := range in.Tasks {
		st := t.StatusAt(in.Config.asOf, opt.ValidityWeeks)
		for s, sys := range in.Config.Systems {
			p := c.pred(ti, s)
			correctText := ""
			switch score(t, p, st, opt, 1) {
			case correct:
				correctText = "true"
			case wrong:
				correctText = "false"
			}
			value, tol := "", ""
			if t.Kind == Recurrent {
				tol = analysis.NumText(t.eps * opt.Scale)
				if !p.Missing && p.Invalid == "" {
					value = analysis.NumText(p.Value)
				}
			}
			row := []string{sys.Name, t.ID, t.Kind, t.Level, t.Market, analysis.IntText(t.Week), st.String(), p.Answer, value, t.Truth, tol,
				correctText, analysis.BoolText(p.Flagged()), analysis.BoolText(p.Invalid != ""), analysis.BoolText(p.Missing)}
			if !yield(row) {
				return
			}
		}
	}
}
