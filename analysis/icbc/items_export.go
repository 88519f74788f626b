package icbc

import (
	"fmt"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// itemFields are the columns of ICBCBench's item records: one row per
// system and objective answer judged, and per system and report written.
// Fields that do not apply to a row's part are null (numbers, booleans)
// or empty (text).
var itemFields = []analysis.Field{
	{Name: "set", Doc: "public, or private for the private hold-out tasks"},
	{Name: "part", Doc: "objective (an answer) or subjective (a report)"},
	{Name: "system", Doc: "evaluated system"},
	{Name: "task", Doc: "task id, unique within its set, part and language"},
	{Name: "language", Doc: "en or zh"},
	{Name: "domain", Doc: "objective: the task's domain; empty when its classification maps to none"},
	{Name: "modality", Doc: "objective: Text-Only or the multimodal kind"},
	{Name: "confidence", Kind: analysis.NumField, Doc: "objective: the confidence the judge read from the answer, in percent; null when the judge response was unreadable"},
	{Name: "correct", Kind: analysis.BoolField, Doc: "objective: the judge's verdict (an unreadable judge response counts false)"},
	{Name: "expert", Kind: analysis.NumField, Doc: "subjective: the rubric score in points (the first rubric judge's total); null when not scored"},
	{Name: "citation", Kind: analysis.NumField, Doc: "subjective: supported / judged claims, in [0, 1] (0 with no judged claim); null when citations are not evaluated for the report"},
	{Name: "claims_supported", Kind: analysis.NumField, Doc: "subjective: claims the citation judge found supported; null when not evaluated"},
	{Name: "claims_judged", Kind: analysis.NumField, Doc: "subjective: claims judged supported or unsupported; null when not evaluated"},
	{Name: "source", Kind: analysis.NumField, Doc: "subjective: the source score S_t in [0, 1] under the alpha and tiers settings; null when not evaluated for the system"},
	{Name: "subdimension_points", Doc: "subjective: the first rubric judge's points per sub-dimension, \"1.1=8;1.2=7.5\" in rubric order; their sum is expert"},
}

// Items lists the scored units of c under s: the public set, then the
// private hold-out set; in each the objective answers, then the reports,
// by task (language, then id) and system (by name). An objective
// accuracy is the share of rows with correct true.
func (b Benchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: items: not an %s collection: %T", Name, Name, c)
	}
	o, err := parseSettings(s, &col.in.Config)
	if err != nil {
		return nil, err
	}
	return &analysis.Items{Fields: itemFields, Rows: func(yield func([]string) bool) {
		// A run of its own per listing: prepare fills the run's cells.
		if !(&run{collection: col, o: o}).itemRows("public", yield) {
			return
		}
		if col.private != nil {
			(&run{collection: col.private, o: o}).itemRows("private", yield)
		}
	}}, nil
}

// itemRows yields the rows of r's collection, of set set, and reports
// whether yield asked for more.
func (r *run) itemRows(set string, yield func([]string) bool) bool {
	r.prepare()
	doms := r.in.Config.Domains
	for ti, o := range r.obj {
		dom := ""
		if r.objDomain != nil && r.objDomain[ti] >= 0 {
			dom = doms[r.objDomain[ti]].Name
		}
		for si, sys := range r.systems {
			out := r.objRes[si][ti]
			if out.missing {
				continue
			}
			conf := ""
			if out.parsed {
				conf = analysis.NumText(out.conf)
			}
			if !yield([]string{set, "objective", sys.Name, o.ID, o.Language, dom, o.Modality, conf, analysis.BoolText(out.correct),
				"", "", "", "", "", ""}) {
				return false
			}
		}
	}
	for ti, s := range r.sub {
		var subs []string
		if rb := r.sums[s.ID]; rb != nil {
			subs = rb.subs
		}
		for si, sys := range r.systems {
			out, x := &r.subRes[si][ti], &r.subCells[si][ti]
			if !out.written {
				continue
			}
			expert, cit, sup, jud, src := "", "", "", "", ""
			if x.eN > 0 {
				expert = analysis.NumText(x.e)
			}
			if x.cN > 0 {
				cit, sup, jud = analysis.NumText(x.share), analysis.IntText(out.support), analysis.IntText(out.judged)
			}
			if x.sN > 0 {
				src = analysis.NumText(x.src)
			}
			var pts []string
			for i, p := range out.points {
				id := fmt.Sprint(i + 1)
				if i < len(subs) {
					id = subs[i]
				}
				pts = append(pts, id+"="+analysis.NumText(p))
			}
			if !yield([]string{set, "subjective", sys.Name, s.ID, s.Language, "", "", "", "",
				expert, cit, sup, jud, src, strings.Join(pts, ";")}) {
				return false
			}
		}
	}
	return true
}
