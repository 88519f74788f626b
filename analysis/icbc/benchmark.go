package icbc

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// Benchmark is ICBCBench.
type Benchmark struct{}

// Name returns "icbcbench".
func (Benchmark) Name() string { return Name }

// Title returns "ICBCBench".
func (Benchmark) Title() string { return "ICBCBench" }

// Knobs returns the settings a sweep may vary.
func (Benchmark) Knobs() []analysis.Knob { return slices.Clone(knobs) }

var langs = []string{"en", "zh"}

// objOutcome is one system's result on one objective task.
type objOutcome struct {
	missing bool
	parsed  bool
	correct bool
	conf    float64
}

// subOutcome is one system's result on one subjective task.
type subOutcome struct {
	written bool    // the system wrote a report
	expert  float64 // NaN when not scored
	judged  int     // claims with a supported/unsupported verdict; -1 when not evaluated
	support int
	// sourced is true when the report gets a source score; refs are then
	// its dated references.
	sourced bool
	refs    []datedRef
	// points are the first rubric judge's points per sub-dimension, in
	// rubric order (the expert score is their sum); nil when not scored
	// or unreadable.
	points []float64
}

// A datedRef is what the source score needs of a dated reference: its
// age in days at the reference date (at least 0) and its authority tier.
type datedRef struct {
	age  float64
	tier int
}

// objText and subText keep what the details show of one output while
// the replies are read.
type objText struct {
	answer   results.Reply
	verdict  Verdict
	judgeRaw string
	judge    *analysis.Call // the judge exchange
}

type subText struct {
	present  bool // the system wrote a report
	report   string
	call     *analysis.Call // the exchange that wrote the report
	verdicts []analysis.Verdict
}

// A collection is what Collect gathered: the selected tasks, the rubrics'
// sums, the parsed replies, and everything of the result that no knob changes
// (details, problems, the expert groups of the human comparison).
type collection struct {
	in      *Inputs
	systems []System // sorted by name
	obj     []*Objective
	sub     []*Subjective
	// sums are what scoring reads of the parsed rubrics, by task id.
	sums   map[string]*rubricSum
	objRes [][]objOutcome // [system][objective task]
	subRes [][]subOutcome // [system][subjective task]
	// prefix starts the task names of a private hold-out run ("private/").
	prefix string
	// objDomain is the index in Config.Domains of each objective task's
	// domain, -1 for none.
	objDomain []int
	// human are the task groups kept for the human comparison.
	human                 []humanGroup
	humanKept, humanSkips int
	// problems (sorted, unique) and details (sorted by task and system)
	// are final, private tasks included; the details' texts are in
	// texts (see keep).
	problems  []string
	details   []keptDetail
	texts     analysis.TextStore
	missing   int
	synthetic bool
	// private is the private hold-out collection, or nil.
	private *collection

	// Used while collecting only.
	rubrics map[string]*Rubric
	// objNames and subNames are the tasks' names in details, by task,
	// "" until needed.
	objNames, subNames []string
	// llmScores are the rubric judges' totals by (task id, system) of the
	// reports the experts scored, in judge order, NaN when not scored.
	llmScores map[[2]string][]float64
}

// run holds one scoring in progress.
type run struct {
	*collection
	o   *settings
	res *analysis.Result
	// objCells and subCells are [system][task] parts of the sums of score.
	objCells [][]objCell
	subCells [][]subCell
}

func (c *collection) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.prefix != "" && !strings.HasPrefix(msg, c.prefix) && !strings.Contains(msg, " task "+c.prefix) {
		msg = c.prefix + " " + msg
	}
	c.problems = append(c.problems, msg)
}

func idLess(a, b string) int {
	x, ex := strconv.Atoi(a)
	y, ey := strconv.Atoi(b)
	if ex == nil && ey == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// collect selects the tasks, parses the rubrics, answers every call
// (private hold-out set included) and keeps the parsed replies.
func collect(ctx context.Context, inputs *Inputs, ans results.Answerer, texts analysis.TextStore) *collection {
	c := newCollection(inputs, "", texts)
	c.answer(ctx, ans)
	c.domainsOf()
	c.humanGroups()
	c.done()
	if len(inputs.PrivateObjectives)+len(inputs.PrivateSubjectives) > 0 {
		pin := *inputs
		pin.Objectives, pin.Subjectives, pin.Human = inputs.PrivateObjectives, inputs.PrivateSubjectives, nil
		pin.Config.ObjectiveTasks, pin.Config.SubjectiveTasks = nil, nil
		p := newCollection(&pin, "private/", texts)
		p.answer(ctx, ans)
		p.done()
		c.problems = append(c.problems, p.problems...)
		c.details = append(c.details, p.details...)
		c.missing += p.missing
		c.synthetic = c.synthetic || p.synthetic
		p.problems, p.details = nil, nil
		c.private = p
	}
	slices.Sort(c.problems)
	c.problems = slices.Compact(c.problems)
	slices.SortFunc(c.details, func(a, b keptDetail) int {
		return cmp.Or(strings.Compare(a.task, b.task), strings.Compare(a.system, b.system))
	})
	return c
}

// done drops what only collecting reads, keeping the rubrics' sums.
func (c *collection) done() {
	c.sums = make(map[string]*rubricSum, len(c.rubrics))
	for id, rb := range c.rubrics {
		c.sums[id] = sumOf(rb)
	}
	c.rubrics, c.llmScores, c.objNames, c.subNames = nil, nil, nil, nil
}

// A rubricSum is what scoring reads of a parsed rubric.
type rubricSum struct {
	dims            int
	total, subTotal float64
	problems        string   // joined with "; "
	subs            []string // the sub-dimensions' ids, in order
}

func sumOf(rb *Rubric) *rubricSum {
	s := &rubricSum{dims: len(rb.Dimensions), total: rb.Total(), subTotal: rb.SubTotal(), problems: strings.Join(rb.Problems, "; ")}
	for _, sd := range rb.Subs() {
		s.subs = append(s.subs, sd.ID)
	}
	return s
}

func newCollection(in *Inputs, prefix string, texts analysis.TextStore) *collection {
	c := &collection{in: in, prefix: prefix, rubrics: map[string]*Rubric{}, texts: texts}
	c.systems = slices.Clone(in.Config.Systems)
	slices.SortFunc(c.systems, func(a, b System) int { return strings.Compare(a.Name, b.Name) })
	c.selectTasks()
	c.parseRubrics()
	return c
}

// score computes the result of c under settings s without changing c.
func score(c *collection, s analysis.Settings) (*analysis.Result, error) {
	o, err := parseSettings(s, &c.in.Config)
	if err != nil {
		return nil, err
	}
	r := &run{collection: c, o: o, res: &analysis.Result{Benchmark: Name, Title: "ICBCBench", Headline: "main_results",
		Problems: slices.Clone(c.problems), LazyDetails: c.eachDetail, Missing: c.missing, Synthetic: c.synthetic}}
	r.prepare()
	r.tables()
	if c.private != nil {
		r.privateTable()
	}
	return r.res, nil
}

func (c *collection) selectTasks() {
	want := func(ids []string, id string) bool { return len(ids) == 0 || slices.Contains(ids, id) }
	for i := range c.in.Objectives {
		if o := &c.in.Objectives[i]; want(c.in.Config.ObjectiveTasks, o.ID) {
			c.obj = append(c.obj, o)
		}
	}
	for i := range c.in.Subjectives {
		if s := &c.in.Subjectives[i]; want(c.in.Config.SubjectiveTasks, s.ID) {
			c.sub = append(c.sub, s)
		}
	}
	slices.SortFunc(c.obj, func(a, b *Objective) int { return cmp.Or(strings.Compare(a.Language, b.Language), idLess(a.ID, b.ID)) })
	slices.SortFunc(c.sub, func(a, b *Subjective) int { return cmp.Or(strings.Compare(a.Language, b.Language), idLess(a.ID, b.ID)) })
}

func (c *collection) parseRubrics() {
	for _, s := range c.in.Subjectives {
		rb, err := ParseRubric(s.Criteria)
		if err != nil {
			c.problem("rubric %s: %v", s.ID, err)
			continue
		}
		c.rubrics[s.ID] = rb
		for _, p := range rb.Problems {
			c.problem("rubric %s: %s", s.ID, p)
		}
	}
}

// objTask and subTask name a task in labels, details and problems:
// "objective/en/12", "private/subjective/zh/3".
func (c *collection) objTask(o *Objective) string {
	return c.prefix + "objective/" + o.Language + "/" + o.ID
}

func (c *collection) subTask(s *Subjective) string {
	return c.prefix + "subjective/" + s.Language + "/" + s.ID
}

// humanSample returns the (task, system) reports experts scored.
func (c *collection) humanSample() map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, h := range c.in.Human {
		m[[2]string{h.Task, h.System}] = true
	}
	return m
}

// window is the most calls one Answer call gets: the outputs of a
// window are answered, judged, parsed and their details kept before the
// next window's prompts are written, so that a collection holds one
// window's prompts and replies, not the whole bundle's (all of them in
// two Answer calls held 176 MB over the inputs at 8x the full-scale
// demo, 29 MB in windows). The small demo's calls fit in one window a
// round, as they did in one Answer call, so its recording is the same.
var window = 512

// An output is a system's output on one task while it is collected: its
// reply and what its judges are asked about and answered.
type output struct {
	sub       bool
	sys, task int
	// sampled is true for a report the experts scored.
	sampled bool
	obj     objText
	txt     subText
	// claims and refs are the report's cited claims and references, which
	// the citation judge is asked about.
	claims []Claim
	refs   []Reference
}

// A judging is one judge call of an output of the window: kind 0
// objective, 1 rubric (judge is its place in RubricJudges), 2 citation.
type judging struct{ kind, out, judge int }

// answer makes the calls window by window: for each window of the
// systems' calls, the systems', then their judges' (see window).
func (c *collection) answer(ctx context.Context, ans results.Answerer) {
	c.objRes = make([][]objOutcome, len(c.systems))
	c.subRes = make([][]subOutcome, len(c.systems))
	// The outputs in call order, as (subjective, system, task): the
	// window's outputs are made from them.
	type ref struct {
		sub       bool
		sys, task int32
	}
	var refs []ref
	for si := range c.systems {
		c.objRes[si] = make([]objOutcome, len(c.obj))
		c.subRes[si] = make([]subOutcome, len(c.sub))
		for ti := range c.subRes[si] {
			c.subRes[si][ti] = subOutcome{expert: math.NaN(), judged: -1}
		}
		for ti := range c.objRes[si] {
			c.objRes[si][ti].missing = true
		}
		if c.systems[si].Does("objective") {
			for ti := range c.obj {
				refs = append(refs, ref{false, int32(si), int32(ti)})
			}
		}
	}
	for si := range c.systems {
		if c.systems[si].Does("subjective") {
			for ti, s := range c.sub {
				if c.rubrics[s.ID] != nil {
					refs = append(refs, ref{true, int32(si), int32(ti)})
				}
			}
		}
	}
	c.llmScores = map[[2]string][]float64{}
	jw := &judges{c: c, tmpl: map[string]template{}, sample: c.humanSample()}
	win := make([]output, 0, min(window, len(refs)))
	for lo := 0; lo < len(refs); lo += window {
		win = win[:0]
		for _, r := range refs[lo:min(len(refs), lo+window)] {
			win = append(win, output{sub: r.sub, sys: int(r.sys), task: int(r.task)})
		}
		c.answerWindow(ctx, ans, win, jw)
		for k := range win {
			c.addDetail(&win[k])
			win[k] = output{}
		}
	}
}

// judges writes the judges' calls of a window.
type judges struct {
	c      *collection
	tmpl   map[string]template // objective judge prompts by language, parsed when needed
	sample map[[2]string]bool  // reports the experts scored
	heads  map[int]string      // rubric prompt heads of the window's tasks
	// last is the rubric prompt of output lastOut, the same for every
	// rubric judge.
	lastOut int
	last    string
}

// call returns the call of j on the window's outputs.
func (w *judges) call(win []output, j judging) results.Call {
	c, cfg, out := w.c, &w.c.in.Config, &win[j.out]
	switch j.kind {
	case 0:
		o := c.obj[out.task]
		tmpl, ok := w.tmpl[o.Language]
		if !ok {
			tmpl = judgeTemplate(c.in.Prompts.Judge[o.Language])
			w.tmpl[o.Language] = tmpl
		}
		return judgeCall(cfg, tmpl, o, out.obj.answer.Text, c.objTask(o))
	case 1:
		s := c.sub[out.task]
		if w.lastOut != j.out || w.last == "" {
			head, ok := w.heads[out.task]
			if !ok {
				head = rubricHead(s, c.rubrics[s.ID])
				w.heads[out.task] = head
			}
			w.lastOut, w.last = j.out, rubricPrompt(head, out.txt.report)
		}
		judge := cfg.RubricJudges[j.judge]
		return call(judge, w.last, c.subTask(s), results.RoleJudge, judge.Name)
	default:
		s := c.sub[out.task]
		return call(cfg.CitationJudge, CitationPrompt(out.claims, out.refs), c.subTask(s), results.RoleJudge, cfg.CitationJudge.Name)
	}
}

// answerWindow answers the systems' calls of win, then their judges',
// at most window calls at a time, and parses the replies.
func (c *collection) answerWindow(ctx context.Context, ans results.Answerer, win []output, jw *judges) {
	cfg := &c.in.Config
	calls := make([]results.Call, len(win))
	for k := range win {
		out := &win[k]
		sys := &c.systems[out.sys]
		if out.sub {
			s := c.sub[out.task]
			calls[k] = call(sys.Model, ReportPrompt(s), c.subTask(s), results.RoleSystem, sys.Name)
		} else {
			o := c.obj[out.task]
			calls[k] = call(sys.Model, SolverPrompt(o, &c.in.Prompts), c.objTask(o), results.RoleSystem, sys.Name)
		}
	}
	replies := c.reply(ctx, ans, calls)
	calls = nil
	var todo []judging
	for k, rep := range replies {
		out := &win[k]
		if !out.sub {
			out.obj.answer = rep
			if rep.Err == nil {
				todo = append(todo, judging{kind: 0, out: k})
			}
			continue
		}
		if rep.Err != nil {
			continue
		}
		res := &c.subRes[out.sys][out.task]
		res.written = true
		out.txt.present, out.txt.report, out.txt.call = true, rep.Text, analysis.CallOf(rep, 0)
		s := c.sub[out.task]
		sys := &c.systems[out.sys]
		out.sampled = jw.sample[[2]string{s.ID, sys.Name}]
		for j := range cfg.RubricJudges {
			if j > 0 && !out.sampled {
				break
			}
			todo = append(todo, judging{kind: 1, out: k, judge: j})
		}
		refs, claims := ParseReport(rep.Text, cfg.MaxClaims)
		if sys.Source {
			res.sourced, res.refs = true, c.datedRefs(refs, s, sys)
		}
		if sys.Citation {
			if len(claims) == 0 {
				res.judged = 0
				continue
			}
			out.claims, out.refs = claims, refs
			todo = append(todo, judging{kind: 2, out: k})
		}
	}
	jw.heads, jw.last = map[int]string{}, ""
	for lo := 0; lo < len(todo); lo += window {
		part := todo[lo:min(len(todo), lo+window)]
		calls := make([]results.Call, len(part)) // a fresh slice: the Answerer may keep the last
		for i, j := range part {
			calls[i] = jw.call(win, j)
		}
		replies := c.reply(ctx, ans, calls)
		for i, j := range part {
			out := &win[j.out]
			switch j.kind {
			case 0:
				c.scoreObjective(out, replies[i])
			case 1:
				c.scoreRubric(out, j.judge, replies[i])
			case 2:
				c.scoreCitations(out, replies[i])
			}
		}
	}
	jw.heads, jw.last = nil, ""
}

func (c *collection) reply(ctx context.Context, ans results.Answerer, calls []results.Call) []results.Reply {
	if len(calls) == 0 {
		return nil
	}
	replies := ans.Answer(ctx, calls)
	for len(replies) < len(calls) {
		// An Answerer must answer every call; a short answer is missing.
		replies = append(replies, results.Reply{Err: errors.New("no reply")})
	}
	for i, rep := range replies[:len(calls)] {
		if rep.Err != nil {
			c.missing++
			c.problem("%s: no reply: %v", calls[i].Label, rep.Err)
		}
		if rep.Synthetic() {
			c.synthetic = true
		}
	}
	return replies[:len(calls)]
}

func (c *collection) scoreObjective(w *output, rep results.Reply) {
	si, ti := w.sys, w.task
	out := &c.objRes[si][ti]
	o := c.obj[ti]
	if rep.Err != nil {
		return
	}
	out.missing = false
	w.obj.judgeRaw = rep.Text
	w.obj.judge = analysis.CallOf(rep, 0)
	v, err := ParseVerdict(rep.Text)
	if err != nil {
		c.problem("%s %s: judge response counted incorrect: %v", c.objTask(o), c.systems[si].Name, err)
		return
	}
	out.parsed, out.correct, out.conf = true, v.Correct, v.Confidence
	w.obj.verdict = v
	for _, n := range v.Notes {
		c.problem("%s %s: judge response: %s", c.objTask(o), c.systems[si].Name, n)
	}
}

func (c *collection) scoreRubric(w *output, judge int, rep results.Reply) {
	si, ti := w.sys, w.task
	out := &c.subRes[si][ti]
	s := c.sub[ti]
	name := c.in.Config.RubricJudges[judge].Name
	if rep.Err != nil {
		return
	}
	scores, notes, err := ParseRubricScores(rep.Text, c.rubrics[s.ID])
	for _, n := range notes {
		c.problem("%s %s: judge %s: %s", c.subTask(s), c.systems[si].Name, name, n)
	}
	total := 0.0
	if err != nil {
		c.problem("%s %s: judge %s: response scored 0: %v", c.subTask(s), c.systems[si].Name, name, err)
		scores = nil
	}
	for _, sc := range scores {
		total += sc.Score
	}
	key := [2]string{s.ID, c.systems[si].Name}
	if w.sampled { // the human comparison reads no other report's
		if c.llmScores[key] == nil {
			c.llmScores[key] = make([]float64, len(c.in.Config.RubricJudges))
			for i := range c.llmScores[key] {
				c.llmScores[key][i] = math.NaN()
			}
		}
		c.llmScores[key][judge] = total
	}
	t := &w.txt
	t.verdicts = append(t.verdicts, analysis.Verdict{Judge: name, Verdict: trimFloat(total) + "/100", Reasoning: clip(scoreLines(scores), 4000), Call: analysis.CallOf(rep, 0)})
	if judge == 0 {
		out.expert = total
		if len(scores) > 0 {
			out.points = make([]float64, len(scores))
			for i, sc := range scores {
				out.points[i] = sc.Score
			}
		}
	}
}

func (c *collection) scoreCitations(w *output, rep results.Reply) {
	si, ti, claims := w.sys, w.task, w.claims
	out := &c.subRes[si][ti]
	s := c.sub[ti]
	if rep.Err != nil {
		return
	}
	name := c.in.Config.CitationJudge.Name
	ids := make([]string, len(claims))
	for i, cl := range claims {
		ids[i] = cl.ID
	}
	verdicts, notes, err := ParseCitations(rep.Text, ids)
	for _, n := range notes {
		c.problem("%s %s: citation judge: %s", c.subTask(s), c.systems[si].Name, n)
	}
	if err != nil {
		c.problem("%s %s: citation judge response unreadable, no claim judged: %v", c.subTask(s), c.systems[si].Name, err)
		out.judged = 0
		return
	}
	var why []string
	unknown := 0
	out.judged, out.support = 0, 0
	for _, cl := range claims {
		v := verdicts[cl.ID]
		switch v.Verdict {
		case Supported:
			out.support++
			out.judged++
		case Unsupported:
			out.judged++
		default:
			unknown++
		}
		why = append(why, fmt.Sprintf("%s [%d] %s: %s", cl.ID, cl.Ref, v.Verdict, v.Reason))
	}
	t := &w.txt
	t.verdicts = append(t.verdicts, analysis.Verdict{Judge: name,
		Verdict:   fmt.Sprintf("%d supported, %d unsupported, %d unknown", out.support, out.judged-out.support, unknown),
		Reasoning: clip(strings.Join(why, "\n"), 4000), Call: analysis.CallOf(rep, 0)})
}

// datedRefs returns the dated references of a report with their ages and
// authority tiers.
func (c *collection) datedRefs(refs []Reference, s *Subjective, sys *System) []datedRef {
	var out []datedRef
	for _, ref := range refs {
		if ref.Date.IsZero() {
			continue
		}
		age := c.in.RefDate.Sub(ref.Date).Hours() / 24
		if age < 0 {
			c.problem("%s %s: reference [%d] dated %s after the reference date; age taken as 0", c.subTask(s), sys.Name, ref.N, ref.Date.Format("2006-01-02"))
			age = 0
		}
		out = append(out, datedRef{age: age, tier: c.in.Authority.Tier(ref.URL)})
	}
	return out
}

// scoreLines lists the scores one a line, "ID: score. justification".
func scoreLines(scores []SubScore) string {
	lines := make([]string, len(scores))
	for i, sc := range scores {
		lines[i] = fmt.Sprintf("%s: %g. %s", sc.ID, sc.Score, sc.Justification)
	}
	return strings.Join(lines, "\n")
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// clip shortens s to at most n bytes on a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "\n[... shortened from " + strconv.Itoa(len(s)) + " bytes]"
}

// privateTable adds the private_holdout table: the private hold-out
// tasks scored with the same systems and judges, in the main_results
// layout.
func (r *run) privateTable() {
	p := &run{collection: r.private, o: r.o}
	p.prepare()
	t := &analysis.Table{Benchmark: Name, Name: "private_holdout", Title: "ICBCBench private hold-out set",
		Caption: "Scores on the private hold-out tasks (points), same layout as the main results.",
		Columns: []analysis.Column{colSystem, colGroup,
			pts("en_objective", "EN objective", ""), pts("en_subjective", "EN subjective", ""), pts("en_overall", "EN overall", ""),
			pts("zh_objective", "ZH objective", ""), pts("zh_subjective", "ZH subjective", ""), pts("zh_overall", "ZH overall", "")}}
	eo, es := p.track("en")
	zo, zs := p.track("zh")
	main := r.res.Table("main_results")
	for _, row := range main.Rows {
		si := slices.IndexFunc(p.systems, func(s System) bool { return s.Name == row[0].Text })
		e, z := p.score(si, eo, es), p.score(si, zo, zs)
		t.AddRow(row[0], row[1], num(e.objAll), num(e.subjective), num(e.overall), num(z.objAll), num(z.subjective), num(z.overall))
	}
	r.res.Tables = append(r.res.Tables, t)
}

// Collect loads the inputs, answers every call (the private hold-out set
// included) and parses the replies. No knob changes the calls, so it
// reads no setting; it only checks that every setting names a knob.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if in.Bundle == nil {
		return nil, fmt.Errorf("%s: no bundle", Name)
	}
	if err := in.Settings.Validate(b); err != nil {
		return nil, err
	}
	inputs, err := Load(in.Bundle.Inputs(Name))
	if err != nil {
		return nil, err
	}
	// Settings are checked before any call is made, although Collect
	// uses none: a bad value must not cost a recording.
	if _, err := parseSettings(in.Settings, &inputs.Config); err != nil {
		return nil, err
	}
	return collect(ctx, inputs, in.Answer, analysis.TextsOf(in)), nil
}

// Score scores a collection of Collect under s.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: score: not an %s collection: %T", Name, Name, c)
	}
	if err := s.Validate(b); err != nil {
		return nil, err
	}
	return score(col, s)
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}
