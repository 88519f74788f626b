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

// A collection is what Collect gathered: the selected tasks, the parsed
// rubrics and replies, and everything of the result that no knob changes
// (details, problems, the expert groups of the human comparison).
type collection struct {
	in      *Inputs
	systems []System // sorted by name
	obj     []*Objective
	sub     []*Subjective
	rubrics map[string]*Rubric
	objRes  [][]objOutcome // [system][objective task]
	subRes  [][]subOutcome // [system][subjective task]
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
	objText [][]objText
	subText [][]subText
	// llmScores are the rubric judges' totals by (task id, system), in
	// judge order, NaN when not scored.
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
	c.makeDetails()
	if len(inputs.PrivateObjectives)+len(inputs.PrivateSubjectives) > 0 {
		pin := *inputs
		pin.Objectives, pin.Subjectives, pin.Human = inputs.PrivateObjectives, inputs.PrivateSubjectives, nil
		pin.Config.ObjectiveTasks, pin.Config.SubjectiveTasks = nil, nil
		p := newCollection(&pin, "private/", texts)
		p.answer(ctx, ans)
		p.makeDetails()
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
		return cmp.Or(strings.Compare(a.d.Task, b.d.Task), strings.Compare(a.d.System, b.d.System))
	})
	return c
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

// answer makes the two rounds of calls: systems, then judges.
func (c *collection) answer(ctx context.Context, ans results.Answerer) {
	cfg := &c.in.Config
	c.objRes = make([][]objOutcome, len(c.systems))
	c.subRes = make([][]subOutcome, len(c.systems))
	c.objText = make([][]objText, len(c.systems))
	c.subText = make([][]subText, len(c.systems))
	var calls []results.Call
	type ref struct{ sys, task int }
	var objRefs, subRefs []ref
	judge := map[string]template{}      // judge prompts by language, parsed when needed
	heads := make([]string, len(c.sub)) // rubric prompt heads by task, "" until needed
	for si := range c.systems {
		sys := &c.systems[si]
		c.objRes[si] = make([]objOutcome, len(c.obj))
		c.subRes[si] = make([]subOutcome, len(c.sub))
		c.objText[si] = make([]objText, len(c.obj))
		c.subText[si] = make([]subText, len(c.sub))
		for ti := range c.subRes[si] {
			c.subRes[si][ti] = subOutcome{expert: math.NaN(), judged: -1}
		}
		for ti := range c.objRes[si] {
			c.objRes[si][ti].missing = true
		}
		if sys.Does("objective") {
			for ti, o := range c.obj {
				calls = append(calls, call(sys.Model, SolverPrompt(o, &c.in.Prompts), c.objTask(o), results.RoleSystem, sys.Name))
				objRefs = append(objRefs, ref{si, ti})
			}
		}
	}
	for si := range c.systems {
		sys := &c.systems[si]
		if sys.Does("subjective") {
			for ti, s := range c.sub {
				if c.rubrics[s.ID] == nil {
					continue
				}
				calls = append(calls, call(sys.Model, ReportPrompt(s), c.subTask(s), results.RoleSystem, sys.Name))
				subRefs = append(subRefs, ref{si, ti})
			}
		}
	}
	replies := c.reply(ctx, ans, calls)
	objReplies, subReplies := replies[:len(objRefs)], replies[len(objRefs):]
	// Round 2: judges (a fresh slice: the Answerer may keep the first).
	calls = nil
	type jref struct {
		kind  int // 0 objective, 1 rubric, 2 citation
		sys   int
		task  int
		judge int
	}
	var jrefs []jref
	for i, rf := range objRefs {
		rep := objReplies[i]
		c.objText[rf.sys][rf.task].answer = rep
		if rep.Err != nil {
			continue
		}
		o := c.obj[rf.task]
		tmpl, ok := judge[o.Language]
		if !ok {
			tmpl = judgeTemplate(c.in.Prompts.Judge[o.Language])
			judge[o.Language] = tmpl
		}
		calls = append(calls, judgeCall(cfg, tmpl, o, rep.Text, c.objTask(o)))
		jrefs = append(jrefs, jref{kind: 0, sys: rf.sys, task: rf.task})
	}
	sample := c.humanSample()
	claimsOf := map[[2]int][]Claim{}
	for i, rf := range subRefs {
		rep := subReplies[i]
		if rep.Err != nil {
			continue
		}
		out := &c.subRes[rf.sys][rf.task]
		out.written = true
		c.subText[rf.sys][rf.task].present, c.subText[rf.sys][rf.task].report = true, rep.Text
		c.subText[rf.sys][rf.task].call = analysis.CallOf(rep, 0)
		s := c.sub[rf.task]
		sys := &c.systems[rf.sys]
		if heads[rf.task] == "" {
			heads[rf.task] = rubricHead(s, c.rubrics[s.ID])
		}
		prompt := rubricPrompt(heads[rf.task], rep.Text) // the same for every judge
		for j, judge := range cfg.RubricJudges {
			if j > 0 && !sample[[2]string{s.ID, sys.Name}] {
				break
			}
			calls = append(calls, call(judge, prompt, c.subTask(s), results.RoleJudge, judge.Name))
			jrefs = append(jrefs, jref{kind: 1, sys: rf.sys, task: rf.task, judge: j})
		}
		refs, claims := ParseReport(rep.Text, cfg.MaxClaims)
		if sys.Source {
			out.sourced, out.refs = true, c.datedRefs(refs, s, sys)
		}
		if sys.Citation {
			if len(claims) == 0 {
				out.judged = 0
				continue
			}
			claimsOf[[2]int{rf.sys, rf.task}] = claims
			calls = append(calls, call(cfg.CitationJudge, CitationPrompt(claims, refs), c.subTask(s), results.RoleJudge, cfg.CitationJudge.Name))
			jrefs = append(jrefs, jref{kind: 2, sys: rf.sys, task: rf.task})
		}
	}
	replies = c.reply(ctx, ans, calls)
	c.llmScores = map[[2]string][]float64{}
	for i, jr := range jrefs {
		rep := replies[i]
		switch jr.kind {
		case 0:
			c.scoreObjective(jr.sys, jr.task, rep)
		case 1:
			c.scoreRubric(jr.sys, jr.task, jr.judge, rep)
		case 2:
			c.scoreCitations(jr.sys, jr.task, claimsOf[[2]int{jr.sys, jr.task}], rep)
		}
	}
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

func (c *collection) scoreObjective(si, ti int, rep results.Reply) {
	out := &c.objRes[si][ti]
	o := c.obj[ti]
	if rep.Err != nil {
		return
	}
	out.missing = false
	c.objText[si][ti].judgeRaw = rep.Text
	c.objText[si][ti].judge = analysis.CallOf(rep, 0)
	v, err := ParseVerdict(rep.Text)
	if err != nil {
		c.problem("%s %s: judge response counted incorrect: %v", c.objTask(o), c.systems[si].Name, err)
		return
	}
	out.parsed, out.correct, out.conf = true, v.Correct, v.Confidence
	c.objText[si][ti].verdict = v
	for _, n := range v.Notes {
		c.problem("%s %s: judge response: %s", c.objTask(o), c.systems[si].Name, n)
	}
}

func (c *collection) scoreRubric(si, ti, judge int, rep results.Reply) {
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
	if c.llmScores[key] == nil {
		c.llmScores[key] = make([]float64, len(c.in.Config.RubricJudges))
		for i := range c.llmScores[key] {
			c.llmScores[key][i] = math.NaN()
		}
	}
	c.llmScores[key][judge] = total
	t := &c.subText[si][ti]
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

func (c *collection) scoreCitations(si, ti int, claims []Claim, rep results.Reply) {
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
	t := &c.subText[si][ti]
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
