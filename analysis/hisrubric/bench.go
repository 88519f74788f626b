package hisrubric

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/results"
)

// Name is the benchmark's machine name.
const Name = "findeepresearch"

// A Benchmark is FinDeepResearch scored with HisRubric.
type Benchmark struct{}

var _ analysis.Benchmark = Benchmark{}

// Name returns "findeepresearch".
func (Benchmark) Name() string { return Name }

// Title returns "FinDeepResearch".
func (Benchmark) Title() string { return "FinDeepResearch" }

// Knobs lists the settings Score understands; none changes the calls.
func (Benchmark) Knobs() []analysis.Knob {
	return []analysis.Knob{
		{Name: "structure", Default: "binary", Doc: "structure score: binary (+1/-1 per section, subsection and table) or fractional (a table found scores the mean of its row-field and column coverage)"},
		{Name: "numeric_verdict", Default: "judge", Doc: "what scores numeric items: judge (the judge's verdict) or numeric (the deterministic comparison where both sides are single quantities, else the judge)"},
		{Name: "rel_tol", Default: "0.01", Doc: "relative tolerance of the numeric comparison"},
		{Name: "abs_tol", Default: "0.005", Doc: "absolute tolerance of the numeric comparison"},
		{Name: "sign", Default: "strict", Doc: "numeric comparison of signs: strict, or ignore (compare absolute values)"},
		{Name: "weights", Default: "1,1,2,2", Doc: "marks per item of Recognition, Calculation, Abstraction and Interpretation"},
		{Name: "overall", Default: "reports", Doc: "a system's accuracy: mean over its reports (reports) or mean of its market means (markets)"},
		uncertainty.Knob(),
		uncertainty.PairsKnob(),
	}
}

// options are parsed settings.
type options struct {
	fractional bool
	numeric    bool
	tol        Tolerance
	weights    map[Capability]float64
	byMarket   bool
	reps       int         // of the clustered statistics
	pairs      [][2]string // compared on request
}

func parseOptions(s analysis.Settings) (*options, error) {
	o := &options{tol: DefaultTolerance, weights: map[Capability]float64{}}
	bad := func(knob, v string) error { return analysis.BadSetting(knob, v, "") }
	switch v := s.Get("structure", "binary"); v {
	case "binary":
	case "fractional":
		o.fractional = true
	default:
		return nil, bad("structure", v)
	}
	switch v := s.Get("numeric_verdict", "judge"); v {
	case "judge":
	case "numeric":
		o.numeric = true
	default:
		return nil, bad("numeric_verdict", v)
	}
	for _, k := range []struct {
		name string
		dst  *float64
		def  string
	}{{"rel_tol", &o.tol.Rel, "0.01"}, {"abs_tol", &o.tol.Abs, "0.005"}} {
		v := s.Get(k.name, k.def)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1e12 {
			return nil, bad(k.name, v)
		}
		*k.dst = f
	}
	switch v := s.Get("sign", "strict"); v {
	case "strict":
	case "ignore":
		o.tol.IgnoreSign = true
	default:
		return nil, bad("sign", v)
	}
	w := strings.Split(s.Get("weights", "1,1,2,2"), ",")
	if len(w) != len(Capabilities) {
		return nil, bad("weights", strings.Join(w, ","))
	}
	for i, c := range Capabilities {
		f, err := strconv.ParseFloat(strings.TrimSpace(w[i]), 64)
		if err != nil || f < 0 || f > 1000 {
			return nil, bad("weights", strings.Join(w, ","))
		}
		o.weights[c] = f
	}
	switch v := s.Get("overall", "reports"); v {
	case "reports":
	case "markets":
		o.byMarket = true
	default:
		return nil, bad("overall", v)
	}
	var err error
	if o.reps, err = uncertainty.Reps(Name, s); err != nil {
		return nil, err
	}
	if o.pairs, err = uncertainty.ParsePairs(Name, s); err != nil {
		return nil, err
	}
	return o, nil
}

// A report's graded items, as collected, are what scoring reads of
// them: everything but what the numeric_verdict and tolerance knobs
// change, and but their texts, which only the drill-downs and audits
// show (see report.texts). Item i has a score (report.scores[i], an
// index of the collection's scoreSet), marks (report.marks[i]) and,
// when numeric, its answer's value as a quantity (report.preds). A
// full-scale run has two hundred thousand, 8 times full scale two
// million: 7 bytes each (2 of score, 1 of marks, 8 of value for 129 of
// Default's 247 items), in three arrays shared by the collection's
// reports, where they were 24 bytes in a struct and 8 more for the
// scores under the judge's grading (see run.itemScores). The grading exchange of a report's items of one
// stage is the report's (report.calls).

// A mark is what an item's scoring reads besides its score and value:
// bits of these.
type mark uint8

const (
	markFound     mark = 1 << iota // an answer was found in the report
	markDone                       // graded (a score exists)
	markPredOK                     // the answer reads as a quantity
	markPercent                    // the quantity is written with a percent sign
	markCorrect                    // the judge's verdict on an accuracy item: correct
	markIncorrect                  // the judge's verdict on an accuracy item: incorrect
)

// found reports whether an answer was found in the report.
func (m mark) found() bool { return m&markFound != 0 }

// done reports whether the item was graded.
func (m mark) done() bool { return m&markDone != 0 }

// judge is the judge's verdict on an accuracy item.
func (m mark) judge() judged {
	switch {
	case m&markCorrect != 0:
		return judgedCorrect
	case m&markIncorrect != 0:
		return judgedIncorrect
	}
	return notJudged
}

// judgeScore is item i of rep's score from the judge.
func (c *collection) judgeScore(rep *report, i int) float64 {
	return c.scoreTab.get(rep.n*len(c.in.Items)+i, rep.scores[i])
}

// setScore sets item i of rep's score from the judge.
func (c *collection) setScore(rep *report, i int, x float64) {
	rep.scores[i] = c.scoreTab.put(rep.n*len(c.in.Items)+i, x)
}

// quantity is item i of rep's answer as a quantity.
func (c *collection) quantity(rep *report, i int) quantity {
	m := rep.marks[i]
	if m&markPredOK == 0 {
		return quantity{}
	}
	return quantity{Quantity{Value: rep.preds[c.numIdx[i]], Percent: m&markPercent != 0}, true}
}

// stageIndex is the index in gradingStages of the stage that grades
// items of protocol p.
func stageIndex(p Protocol) int {
	switch p {
	case Claim:
		return 1
	case Criterion:
		return 2
	}
	return 0
}

// judged is a judge's verdict on an accuracy item.
type judged uint8

const (
	notJudged judged = iota // not an accuracy item, or no verdict
	judgedCorrect
	judgedIncorrect
)

// String is "correct", "incorrect" or "" (not judged).
func (j judged) String() string {
	switch j {
	case judgedCorrect:
		return "correct"
	case judgedIncorrect:
		return "incorrect"
	}
	return ""
}

// The texts of a report's item i are texts[textsPer*i+k], k one of
// these.
const (
	answerText  = iota // the answer extracted from the report
	verdictText        // the short verdict for the drill-down
	reasonText         // the judge's reason
	textsPer
)

// A quantity is a cell's value when it reads as a single Quantity.
type quantity struct {
	Quantity
	ok bool
}

func quantityOf(s string) quantity {
	q, ok := ParseQuantity(s)
	return quantity{q, ok}
}

// A report is one system's report on one company.
type report struct {
	company *Company
	ci      int // company index
	sys     int
	n       int // position in collection.reports
	present bool
	call    *analysis.Call // the exchange that wrote the report
	// calls are the grading exchanges of its items, by stage (see
	// gradingStages); nil when none answered.
	calls [len(gradingStages)]*analysis.Call
	check *Check
	// scores[i] is item i's score from the judge (an index of the
	// collection's scoreTab, see judgeScore), marks[i] its marks, and
	// preds[numIdx[i]] its answer's value as a quantity when the item is
	// numeric (see mark); parts of arrays the reports share.
	scores   []uint16
	marks    []mark
	preds    []float64
	complete bool     // every needed reply arrived and parsed
	why      []string // why the report is incomplete
	// output is the report as the drill-down shows it, in the
	// collection's texts.
	output analysis.TextRef
	// texts are the items' texts (see textsPer) while they are
	// written: the answers as the report is read, the verdicts and
	// reasons while round 2 grades it; in between and then, they are in
	// the collection's texts at itemTexts, and texts is nil. ungraded
	// counts the grading calls not yet answered.
	texts     []string
	itemTexts analysis.TextRef
	ungraded  int
}

// A collection is what Collect gathers: the inputs, every report with
// its structure check and graded items, and the problems found. Score
// only reads it.
type collection struct {
	in *Inputs
	// texts keeps the reports' and items' texts (see report).
	texts   analysis.TextStore
	reports []*report // company-major, then system order
	byTask  []*report // by company id, then system name
	// numIdx[i] is item i's index among the numeric items, -1 for the
	// others; nNum counts them. truthQ[ci*nNum+numIdx[i]] is company ci's
	// truth of numeric item i as a quantity.
	numIdx []int
	nNum   int
	truthQ []quantity
	// scoreTab holds the reports' scores.
	scoreTab *scoreSet
	// itemCap and itemSec are each item's capability index and section
	// index (-1 when the item's section is not in the structure).
	itemCap, itemSec []int
	problems         []string // sorted
	missing          int
	synth            bool
	// grades holds the item scores of every report under each grading
	// that is not the judge's (see run.itemScores), each computed once
	// for the score, the uncertainty board and the item records.
	gradesMu sync.Mutex
	grades   map[grading]*grades
}

// grades are the item scores of the reports under one grading: report
// n's are all[n*len(Items):], once done[n].
type grades struct {
	all  []float64
	done []bool
}

// A collector makes the calls and fills a collection.
type collector struct {
	*collection
	answer   results.Answerer
	claims   []map[string][]string
	criteria []map[string][]Point
	gotRound []bool // per company: claims and criteria replies usable
	// questions[ci][i] describes item i for company ci (fixed rows only;
	// free rows name the truth's row).
	questions [][]string
	found     map[string]bool // problems
}

// Collect loads the inputs and gets reports and judge verdicts through
// in.Answer in two rounds: the reports with the claims and criteria,
// then the judge's grading of the answers extracted from the reports.
// No knob changes the calls.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if in.Bundle == nil {
		return nil, fmt.Errorf("%s: no bundle", Name)
	}
	// Settings are checked before any call is made, although Collect
	// uses none: a bad value must not cost a recording.
	if _, err := parseOptions(in.Settings); err != nil {
		return nil, err
	}
	inputs, err := Load(in.Bundle.Inputs(Name))
	if err != nil {
		return nil, err
	}
	r := &collector{collection: &collection{in: inputs, texts: analysis.TextsOf(in)}, answer: in.Answer, found: map[string]bool{}}
	r.numIdx = make([]int, len(inputs.Items))
	for i := range inputs.Items {
		r.numIdx[i] = -1
		if inputs.Items[i].Numeric {
			r.numIdx[i] = r.nNum
			r.nNum++
		}
	}
	r.round1(ctx)
	r.round2(ctx)
	r.finish()
	return r.collection, nil
}

// Score scores a collection under settings s.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	opt, err := parseOptions(s)
	if err != nil {
		return nil, err
	}
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: score: collection of type %T", Name, c)
	}
	return (&run{collection: col, opt: opt}).result(), nil
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}

// question describes item i for company ci to a judge.
func (r *collector) question(ci, i int) string {
	it := &r.in.Items[i]
	c := &r.in.Companies[ci]
	if it.FreeRow() {
		return question(r.in.Structure, it, r.in.Truth(ci, i), c.Params())
	}
	if r.questions == nil {
		r.questions = make([][]string, len(r.in.Companies))
	}
	if r.questions[ci] == nil {
		r.questions[ci] = make([]string, len(r.in.Items))
		for k := range r.in.Items {
			r.questions[ci][k] = question(r.in.Structure, &r.in.Items[k], r.in.Truth(ci, k), c.Params())
		}
	}
	return r.questions[ci][i]
}

func (r *collector) problemf(format string, args ...any) {
	r.found[fmt.Sprintf(format, args...)] = true
}

// judgeCall is the judge request of task with the user message user.
func (r *collector) judgeCall(task, user string) results.Call {
	j := r.in.Config.Judge
	return results.Call{
		Prompt: results.Prompt{Provider: j.Provider, Model: j.Model, System: judgeSystem, User: user, Params: j.Params},
		Label:  results.Label{Benchmark: Name, Task: task, Role: results.RoleJudge, Name: j.Name},
	}
}

// reply checks one reply: a missing reply is counted and false.
func (r *collector) reply(rep results.Reply) bool {
	r.synth = r.synth || rep.Synthetic()
	if rep.Err != nil {
		r.missing++
		return false
	}
	return true
}

func (r *collector) round1(ctx context.Context) {
	in := r.in
	for ci := range in.Companies {
		for si := range in.Config.Systems {
			r.reports = append(r.reports, &report{company: &in.Companies[ci], ci: ci, sys: si, n: len(r.reports)})
		}
	}
	// The reports' items, in three arrays (see report.scores).
	ni := len(in.Items)
	r.scoreTab = newScoreSet(overflow)
	scores, marks, preds := make([]uint16, len(r.reports)*ni), make([]mark, len(r.reports)*ni), make([]float64, len(r.reports)*r.nNum)
	for n, rep := range r.reports {
		rep.scores = scores[n*ni : (n+1)*ni : (n+1)*ni]
		rep.marks = marks[n*ni : (n+1)*ni : (n+1)*ni]
		rep.preds = preds[n*r.nNum : (n+1)*r.nNum : (n+1)*r.nNum]
	}
	r.claims = make([]map[string][]string, len(in.Companies))
	r.criteria = make([]map[string][]Point, len(in.Companies))
	r.gotRound = make([]bool, len(in.Companies))
	nr := len(r.reports)
	if nr <= reportBatch {
		// A bundle of at most reportBatch reports asks everything at
		// once, the judge's calls after the reports, as it always has.
		judges, firsts := r.judgeCalls(0, len(in.Companies))
		got := r.answer.Answer(ctx, append(r.reportCalls(r.reports), judges...))
		r.readReports(r.reports, got[:nr], r.cells(r.reports))
		r.readStages(0, got[nr:], firsts)
		return
	}
	// The reports are asked for reportBatch at a time, and each batch is
	// parsed, checked and its answers extracted before the next is
	// asked for: what stays of a report is its answers and what its
	// drill-down shows, in the collection's texts. Then the judge's
	// calls, judgeCompanies companies at a time, each batch's prompts
	// made when it is asked and its replies read before the next: all
	// of them would be as large as the reports' items' questions.
	for lo := 0; lo < nr; lo += reportBatch {
		hi := min(nr, lo+reportBatch)
		got := r.answer.Answer(ctx, r.reportCalls(r.reports[lo:hi]))
		r.readReports(r.reports[lo:hi], got, r.cells(r.reports[lo:hi]))
	}
	for lo := 0; lo < len(in.Companies); lo += judgeCompanies {
		hi := min(len(in.Companies), lo+judgeCompanies)
		judges, firsts := r.judgeCalls(lo, hi)
		r.readStages(lo, r.answer.Answer(ctx, judges), firsts)
	}
}

// reportCalls returns the calls asking the systems for reports reps, a
// company's systems after one another.
func (r *collector) reportCalls(reps []*report) []results.Call {
	calls := make([]results.Call, len(reps))
	var user string
	for i, rep := range reps {
		if i == 0 || rep.ci != reps[i-1].ci {
			user = ResearchPrompt(r.in.Structure, rep.company)
		}
		s := &r.in.Config.Systems[rep.sys]
		calls[i] = results.Call{
			Prompt: results.Prompt{Provider: s.Provider, Model: s.Model, User: user, Params: s.Params},
			Label:  results.Label{Benchmark: Name, Task: rep.company.ID, Role: results.RoleSystem, Name: s.Name},
		}
	}
	return calls
}

// judgeCompanies is how many companies' claim and criterion calls round
// 1 asks at once in a bundle of more than reportBatch reports.
const judgeCompanies = 128

// stages are round 1's judge calls on a company, in call order, with
// the protocol of the items each asks about.
var stages = [...]struct {
	stage    Stage
	protocol Protocol
}{{StageClaims, Claim}, {StageCriteria, Criterion}}

// judgeCalls returns the judge's calls of round 1 on companies lo to hi,
// company by company in stage order (a stage without items has no
// call), and for each company and stage the index of its call, or -1.
func (r *collector) judgeCalls(lo, hi int) ([]results.Call, [][len(stages)]int) {
	in := r.in
	var calls []results.Call
	at := make([][len(stages)]int, hi-lo)
	for ci := lo; ci < hi; ci++ {
		c := &in.Companies[ci]
		for k, st := range stages {
			at[ci-lo][k] = -1
			b := &Batch{Stage: st.stage, Company: c.Name, Language: c.Language}
			for i := range in.Items {
				it := &in.Items[i]
				if it.Protocol == st.protocol {
					b.Items = append(b.Items, BatchItem{ID: it.ID, Question: r.question(ci, i), Truth: in.answer(ci, i)})
				}
			}
			if len(b.Items) > 0 {
				at[ci-lo][k] = len(calls)
				calls = append(calls, r.judgeCall(c.ID, judgePrompt(b)))
			}
		}
	}
	return calls, at
}

// readStages reads the judge's replies of round 1 on companies lo to
// lo+len(at), at[ci-lo][k] the index in replies of company ci's stage k,
// or -1: the claims and criteria each item's grading in round 2 uses.
func (r *collector) readStages(lo int, replies []results.Reply, at [][len(stages)]int) {
	in := r.in
	for n := range at {
		ci := lo + n
		c := &in.Companies[ci]
		r.claims[ci], r.criteria[ci] = map[string][]string{}, map[string][]Point{}
		ok := true
		for k, st := range stages {
			idx := at[n][k]
			if idx < 0 {
				continue
			}
			if !r.reply(replies[idx]) {
				ok = false
				continue
			}
			rp, err := ParseReply(replies[idx].Text)
			if err != nil {
				r.problemf("%s: judge %s reply: %v", c.ID, st.stage, err)
				ok = false
				continue
			}
			byID := rp.byID()
			for i := range in.Items {
				it := &in.Items[i]
				if it.Protocol != st.protocol {
					continue
				}
				truth := in.answer(ci, i)
				ri := byID[it.ID]
				switch st.stage {
				case StageClaims:
					var cl []string
					if ri != nil {
						for _, x := range ri.Claims {
							if strings.TrimSpace(x) != "" {
								cl = append(cl, x)
							}
						}
					}
					if len(cl) == 0 {
						r.problemf("%s %s: judge extracted no claims; the whole ground truth is one claim", c.ID, it.ID)
						cl = []string{truth}
					}
					r.claims[ci][it.ID] = cl
				case StageCriteria:
					var pts []Point
					if ri != nil {
						for _, p := range ri.Criterion {
							if p.Max > 0 && p.Max <= 10 {
								pts = append(pts, p)
							}
						}
					}
					if len(pts) == 0 {
						r.problemf("%s %s: judge wrote no criterion; one 10-point criterion \"matches the ground truth\"", c.ID, it.ID)
						pts = []Point{{Point: "matches the ground truth", Max: 10}}
					}
					r.criteria[ci][it.ID] = pts
				}
			}
		}
		r.gotRound[ci] = ok
	}
}

// reportBatch is how many reports round 1 asks for at once: enough to
// keep every core and the replay's workers busy, few enough that their
// texts (tens of kilobytes each) stay small beside what the collection
// keeps.
const reportBatch = 256

// readReports reads the replies of reports reps, in order: each is
// parsed, checked and its answers extracted (see extract) in parallel,
// and the report as the drill-down shows it is kept in the collection's
// texts.
func (r *collector) readReports(reps []*report, replies []results.Reply, cells [][]itemCell) {
	in := r.in
	each(len(reps), func(i int) {
		rep := reps[i]
		if replies[i].Err == nil {
			rep.check = CheckStructure(Parse(replies[i].Text), in.Structure, rep.company.Params())
			rep.texts = make([]string, textsPer*len(in.Items))
			r.extract(rep, cells[rep.ci])
		}
	})
	for i, rep := range reps {
		if r.reply(replies[i]) {
			rep.present = true
			rep.call = analysis.CallOf(replies[i], 0)
			text := replies[i].Text
			if len(text) > MaxReport {
				r.problemf("%s %s: report longer than %d bytes, read in part", rep.company.ID, in.Config.Systems[rep.sys].Name, MaxReport)
			}
			if len(text) > maxOutput {
				text = strings.ToValidUTF8(text[:maxOutput], "") + fmt.Sprintf("\n\n[report cut at %d KB for display; %d bytes in all]", maxOutput>>10, len(text))
			}
			rep.output = r.texts.Put([]string{text})
		} else {
			rep.why = append(rep.why, "no report")
		}
	}
}

// gradingStages are the stages of the judge's calls on a report, in
// call order, one for each protocol: accuracy, claim and criterion.
var gradingStages = [...]Stage{StageAccuracy, StageCoverage, StageGrading}

// An itemCell locates an item's cell in a report: the row (the truth's in
// free-row tables), the column key and the row key.
type itemCell struct{ row, col, rowKey string }

// cells returns, for the companies of reps, the cell of each item, at
// the company's index (nil for the others).
func (r *collector) cells(reps []*report) [][]itemCell {
	in := r.in
	cells := make([][]itemCell, len(in.Companies))
	for _, rep := range reps {
		ci := rep.ci
		if cells[ci] != nil {
			continue
		}
		c := &in.Companies[ci]
		cells[ci] = make([]itemCell, len(in.Items))
		for i := range in.Items {
			it := &in.Items[i]
			row := it.Row
			if it.FreeRow() {
				row = in.Truth(ci, i).Row
			}
			cells[ci][i] = itemCell{row, colKey(c.Params().Resolve(it.Column)), key(row)}
		}
	}
	return cells
}

// extract extracts the answers of a checked report and reads them as
// quantities; an item without an answer is graded 0 at once. The
// report's tables are not read again, and they are dropped: at full
// scale they are a tenth of what a run keeps. The answers go to the
// collection's texts until round 2 grades them.
func (r *collector) extract(rep *report, cells []itemCell) {
	in := r.in
	c := rep.company
	for i := range in.Items {
		it := &in.Items[i]
		x := &cells[i]
		a := extract(rep.check, it, c.Params(), x.row, x.col, x.rowKey)
		if !a.Found {
			rep.marks[i] = markDone // scored 0, index 0
			rep.texts[textsPer*i+verdictText] = "not found (" + a.Why + ")"
			continue
		}
		rep.marks[i] = markFound
		rep.texts[textsPer*i+answerText] = a.Text
		if it.Numeric {
			q := quantityOf(a.Text)
			rep.preds[r.numIdx[i]] = q.Value
			if q.ok {
				rep.marks[i] |= markPredOK
			}
			if q.Percent {
				rep.marks[i] |= markPercent
			}
		}
	}
	rep.check.Tables = nil
	// Only the elements that lost a point are shown (the deductions, the
	// drill-downs); the sums are kept.
	if kept := slices.DeleteFunc(rep.check.Elements, func(e Element) bool { return e.Score == 1 && e.Fraction == 1 }); len(kept) > 0 {
		rep.check.Elements = slices.Clone(kept)
	} else {
		rep.check.Elements = nil
	}
	r.keepTexts(rep)
}

func (r *collector) round2(ctx context.Context) {
	in := r.in
	var pend []pending
	for _, rep := range r.reports {
		if !rep.present {
			continue
		}
		var has [len(gradingStages)]bool
		for i := range in.Items {
			if rep.marks[i].found() {
				has[stageIndex(in.Items[i].Protocol)] = true
			}
		}
		if !r.gotRound[rep.ci] {
			rep.why = append(rep.why, "no claims or criteria from the judge for this company")
		}
		for k, st := range gradingStages {
			if has[k] && (k == 0 || r.gotRound[rep.ci]) {
				pend = append(pend, pending{rep: rep, stage: st, k: k})
				rep.ungraded++
			}
		}
	}
	// The calls are made gradeBatch at a time, in order, so that only
	// one batch's prompts and replies are held at once: all of them are
	// several times the reports, and grow with the bundle. A call's items
	// are listed when its batch is made, not all at once: all of them are
	// as many as the graded items. parts[ci] are
	// company ci's batch items, written but for their predictions, from
	// its first grading call to its last (the calls are company-major).
	parts := make([][]itemJSON, len(in.Companies))
	last := make([]int, len(in.Companies)) // the company's last call in pend
	for k, p := range pend {
		last[p.rep.ci] = k
	}
	for lo := 0; lo < len(pend); lo += gradeBatch {
		batch := pend[lo:min(len(pend), lo+gradeBatch)]
		for k := range batch {
			p := &batch[k]
			if parts[p.rep.ci] == nil {
				parts[p.rep.ci] = r.itemParts(p.rep.ci)
			}
			for i := range in.Items {
				if p.rep.marks[i].found() && stageIndex(in.Items[i].Protocol) == p.k {
					p.items = append(p.items, i)
				}
			}
		}
		r.gradePending(ctx, batch, parts)
		for k := range batch {
			if ci := batch[k].rep.ci; last[ci] < lo+len(batch) {
				parts[ci] = nil
			}
			batch[k].items = nil // graded
		}
	}
	for _, rep := range r.reports {
		rep.complete = len(rep.why) == 0
		if rep.complete {
			for _, m := range rep.marks {
				if !m.done() {
					rep.complete = false
					rep.why = append(rep.why, "ungraded items")
					break
				}
			}
		}
	}
}

// A pending is one grading call of round 2: a report's items of one
// stage.
type pending struct {
	rep   *report
	stage Stage
	k     int   // the stage's index in gradingStages
	items []int // item indexes in the batch, while it is graded
}

// gradeBatch is how many grading calls round 2 makes at once: enough to
// keep every core and the replay's workers busy, few enough that their
// prompts and replies (tens of kilobytes each) stay small beside the
// reports.
const gradeBatch = 512

// gradePending writes the prompts of pend, answers them and grades the
// items of each reply. parts are the companies' batch items (see
// itemParts).
func (r *collector) gradePending(ctx context.Context, pend []pending, parts [][]itemJSON) {
	in := r.in
	calls := make([]results.Call, len(pend))
	for _, p := range pend {
		if p.rep.texts == nil { // the answers, read back; the verdicts and reasons are written into them
			p.rep.texts = slices.Clone(r.texts.Get(p.rep.itemTexts))
			if len(p.rep.texts) != textsPer*len(in.Items) {
				p.rep.texts = make([]string, textsPer*len(in.Items)) // a store that failed, which its owner reports
			}
		}
	}
	// The prompts, the bulk of the work, are written in parallel.
	each(len(pend), func(k int) {
		p := &pend[k]
		c := p.rep.company
		user := gradingPrompt(p.stage, c.Name, c.Language, parts[p.rep.ci], p.items, func(i int) string { return p.rep.texts[textsPer*i+answerText] })
		calls[k] = r.judgeCall(c.ID+" "+in.Config.Systems[p.rep.sys].Name, user)
	})
	replies := r.answer.Answer(ctx, calls)
	parsed := make([]*Reply, len(pend))
	perrs := make([]error, len(pend))
	each(len(pend), func(k int) {
		if rep := replies[k]; rep.Err == nil {
			parsed[k], perrs[k] = ParseReply(rep.Text)
		}
	})
	for k, p := range pend {
		rep := p.rep
		name := in.Config.Systems[rep.sys].Name
		rep.ungraded--
		if !r.reply(replies[k]) {
			rep.why = append(rep.why, "no judge reply ("+string(p.stage)+")")
			continue
		}
		rep.calls[p.k] = analysis.CallOf(replies[k], 0)
		rp, err := parsed[k], perrs[k]
		if err != nil {
			r.problemf("%s %s: judge %s reply: %v", rep.company.ID, name, p.stage, err)
			rep.why = append(rep.why, "unparsable judge reply ("+string(p.stage)+")")
			continue
		}
		var byID map[string]*ReplyItem
		for n, i := range p.items {
			it := &in.Items[i]
			// Judges answer in order as a rule: while the first n reply
			// items are the batch's, the next is the first with its id.
			var ri *ReplyItem
			if byID == nil && n < len(rp.Items) && rp.Items[n].ID == it.ID {
				ri = &rp.Items[n]
			} else {
				if byID == nil {
					byID = rp.byID()
				}
				ri = byID[it.ID]
			}
			r.grade(rep, i, ri, p.stage)
		}
	}
	for _, p := range pend {
		if p.rep.ungraded == 0 && p.rep.texts != nil {
			r.keepTexts(p.rep)
		}
	}
}

// keepTexts moves the texts of rep's items to the collection's texts.
func (r *collector) keepTexts(rep *report) {
	rep.itemTexts = r.texts.Put(rep.texts)
	rep.texts = nil
}

// itemParts writes company ci's batch items of round 2 but for their
// predictions; claim and criterion items only when the company's claims
// and criteria arrived.
func (r *collector) itemParts(ci int) []itemJSON {
	in := r.in
	out := make([]itemJSON, len(in.Items))
	for i := range in.Items {
		it := &in.Items[i]
		bi := BatchItem{ID: it.ID, Question: r.question(ci, i)}
		// The claims or criterion stand for the truth.
		switch {
		case it.Protocol != Claim && it.Protocol != Criterion:
			bi.Truth = in.answer(ci, i)
		case !r.gotRound[ci]:
			continue
		case it.Protocol == Claim:
			bi.Claims = r.claims[ci][it.ID]
		default:
			bi.Criterion = r.criteria[ci][it.ID]
		}
		out[i] = newItemJSON(&bi)
	}
	return out
}

// grade scores item i of rep from its reply item ri (nil when the judge left
// it out: scored 0 and reported).
func (r *collector) grade(rep *report, i int, ri *ReplyItem, st Stage) {
	it := &r.in.Items[i]
	ci := rep.ci
	name := r.in.Config.Systems[rep.sys].Name
	rep.marks[i] |= markDone
	verdict := &rep.texts[textsPer*i+verdictText]
	if ri == nil {
		r.problemf("%s %s %s: judge gave no %s verdict; scored 0", rep.company.ID, name, it.ID, st)
		*verdict = "no verdict"
		return
	}
	rep.texts[textsPer*i+reasonText] = ri.Reason
	switch st {
	case StageAccuracy:
		s, ok := VerdictScore(ri.Verdict)
		if !ok {
			r.problemf("%s %s %s: unreadable verdict %q; scored 0", rep.company.ID, name, it.ID, clip(ri.Verdict, 40))
		}
		r.setScore(rep, i, s)
		j := markIncorrect
		if s == 1 {
			j = markCorrect
		}
		rep.marks[i] |= j
		*verdict = rep.marks[i].judge().String()
	case StageCoverage:
		claims := r.claims[ci][it.ID]
		n := 0
		for k, c := range ri.Covered {
			if k < len(claims) && c {
				n++
			}
		}
		if len(ri.Covered) != len(claims) {
			r.problemf("%s %s %s: judge judged %d of %d claims", rep.company.ID, name, it.ID, len(ri.Covered), len(claims))
		}
		r.setScore(rep, i, float64(n)/float64(len(claims)))
		*verdict = strconv.Itoa(n) + "/" + strconv.Itoa(len(claims)) + " claims"
	case StageGrading:
		total := 0.0
		for _, p := range r.criteria[ci][it.ID] {
			total += p.Max
		}
		pts := 0.0
		if ri.Points != nil {
			pts = min(max(*ri.Points, 0), total)
		} else {
			r.problemf("%s %s %s: judge awarded no points; scored 0", rep.company.ID, name, it.ID)
		}
		r.setScore(rep, i, pts/total)
		*verdict = trimFloat(pts) + "/" + trimFloat(total) + " points"
	}
}

// finish indexes the collection for Score: reports by task, truths as
// quantities, items' capabilities and sections, and the problems,
// including every present report left unscored.
func (r *collector) finish() {
	in := r.in
	for _, rep := range r.reports {
		if !rep.complete && rep.present {
			r.problemf("%s %s: report not scored: %s", rep.company.ID, in.Config.Systems[rep.sys].Name, strings.Join(rep.why, "; "))
		}
	}
	r.problems = sortedKeys(r.found)
	r.byTask = slices.Clone(r.reports)
	sort.SliceStable(r.byTask, func(i, j int) bool {
		a, b := r.byTask[i], r.byTask[j]
		if a.company.ID != b.company.ID {
			return a.company.ID < b.company.ID
		}
		return in.Config.Systems[a.sys].Name < in.Config.Systems[b.sys].Name
	})
	r.truthQ = make([]quantity, len(in.Companies)*r.nNum)
	for ci := range in.Companies {
		for i, k := range r.numIdx {
			if k >= 0 {
				r.truthQ[ci*r.nNum+k] = quantityOf(in.answer(ci, i))
			}
		}
	}
	r.itemCap, r.itemSec = make([]int, len(in.Items)), make([]int, len(in.Items))
	for i := range in.Items {
		it := &in.Items[i]
		r.itemCap[i] = slices.Index(Capabilities, it.Capability)
		sec, _, _ := strings.Cut(it.Subsection, ".")
		r.itemSec[i] = slices.IndexFunc(in.Structure.Sections, func(s Section) bool { return s.ID == sec })
	}
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// each calls f(0), ..., f(n-1) on GOMAXPROCS goroutines and waits for
// all; f(i) must write only what index i owns.
func each(n int, f func(i int)) {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i := range n {
		g.Go(func() error { f(i); return nil })
	}
	g.Wait() // f returns no error
}
