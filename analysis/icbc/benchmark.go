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
	missing  bool
	parsed   bool
	correct  bool
	conf     float64
	answer   results.Reply
	verdict  Verdict
	judgeRaw string
}

// subOutcome is one system's result on one subjective task.
type subOutcome struct {
	missing  bool    // no report
	expert   float64 // NaN when not scored
	subs     []SubScore
	judged   int // claims with a supported/unsupported verdict; -1 when not evaluated
	support  int
	citNote  string
	source   float64 // S_t; NaN when not evaluated
	report   string
	judgeRaw string
	verdicts []analysis.Verdict
}

// run holds one analysis in progress.
type run struct {
	in      *Inputs
	o       *settings
	systems []System // sorted by name
	obj     []*Objective
	sub     []*Subjective
	rubrics map[string]*Rubric
	objRes  [][]objOutcome // [system][objective task]
	subRes  [][]subOutcome // [system][subjective task]
	res     *analysis.Result
	// prefix starts the task names of a private hold-out run ("private/").
	prefix string
	// llmScores are the rubric judges' totals by (task id, system), in
	// judge order, NaN when not scored.
	llmScores map[[2]string][]float64
}

func (r *run) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.prefix != "" && !strings.HasPrefix(msg, r.prefix) && !strings.Contains(msg, " task "+r.prefix) {
		msg = r.prefix + " " + msg
	}
	r.res.Problems = append(r.res.Problems, msg)
}

func idLess(a, b string) int {
	x, ex := strconv.Atoi(a)
	y, ey := strconv.Atoi(b)
	if ex == nil && ey == nil {
		return cmp.Compare(x, y)
	}
	return strings.Compare(a, b)
}

// Run loads the inputs, answers the calls and scores them.
func (b Benchmark) run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
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
	return Analyze(ctx, inputs, in.Answer, in.Settings)
}

// Analyze runs the benchmark over loaded inputs.
func Analyze(ctx context.Context, inputs *Inputs, ans results.Answerer, s analysis.Settings) (*analysis.Result, error) {
	o, err := parseSettings(s, &inputs.Config)
	if err != nil {
		return nil, err
	}
	r := &run{in: inputs, o: o, rubrics: map[string]*Rubric{},
		res: &analysis.Result{Benchmark: Name, Title: "ICBCBench", Headline: "main_results"}}
	r.systems = slices.Clone(inputs.Config.Systems)
	slices.SortFunc(r.systems, func(a, b System) int { return strings.Compare(a.Name, b.Name) })
	r.selectTasks()
	r.parseRubrics()
	r.answer(ctx, ans)
	r.tables()
	if len(inputs.PrivateObjectives)+len(inputs.PrivateSubjectives) > 0 {
		r.private(ctx, ans)
	}
	slices.Sort(r.res.Problems)
	r.res.Problems = slices.Compact(r.res.Problems)
	slices.SortFunc(r.res.Details, func(a, b analysis.Detail) int {
		return cmp.Or(strings.Compare(a.Task, b.Task), strings.Compare(a.System, b.System))
	})
	return r.res, nil
}

func (r *run) selectTasks() {
	want := func(ids []string, id string) bool { return len(ids) == 0 || slices.Contains(ids, id) }
	for i := range r.in.Objectives {
		if o := &r.in.Objectives[i]; want(r.in.Config.ObjectiveTasks, o.ID) {
			r.obj = append(r.obj, o)
		}
	}
	for i := range r.in.Subjectives {
		if s := &r.in.Subjectives[i]; want(r.in.Config.SubjectiveTasks, s.ID) {
			r.sub = append(r.sub, s)
		}
	}
	slices.SortFunc(r.obj, func(a, b *Objective) int { return cmp.Or(strings.Compare(a.Language, b.Language), idLess(a.ID, b.ID)) })
	slices.SortFunc(r.sub, func(a, b *Subjective) int { return cmp.Or(strings.Compare(a.Language, b.Language), idLess(a.ID, b.ID)) })
}

func (r *run) parseRubrics() {
	for _, s := range r.in.Subjectives {
		rb, err := ParseRubric(s.Criteria)
		if err != nil {
			r.problem("rubric %s: %v", s.ID, err)
			continue
		}
		r.rubrics[s.ID] = rb
		for _, p := range rb.Problems {
			r.problem("rubric %s: %s", s.ID, p)
		}
	}
}

// objTask and subTask name a task in labels, details and problems:
// "objective/en/12", "private/subjective/zh/3".
func (r *run) objTask(o *Objective) string { return r.prefix + "objective/" + o.Language + "/" + o.ID }

func (r *run) subTask(s *Subjective) string {
	return r.prefix + "subjective/" + s.Language + "/" + s.ID
}

// humanSample returns the (task, system) reports experts scored.
func (r *run) humanSample() map[[2]string]bool {
	m := map[[2]string]bool{}
	for _, h := range r.in.Human {
		m[[2]string{h.Task, h.System}] = true
	}
	return m
}

// answer makes the two rounds of calls: systems, then judges.
func (r *run) answer(ctx context.Context, ans results.Answerer) {
	cfg := &r.in.Config
	r.objRes = make([][]objOutcome, len(r.systems))
	r.subRes = make([][]subOutcome, len(r.systems))
	var calls []results.Call
	type ref struct{ sys, task int }
	var objRefs, subRefs []ref
	for si := range r.systems {
		sys := &r.systems[si]
		r.objRes[si] = make([]objOutcome, len(r.obj))
		r.subRes[si] = make([]subOutcome, len(r.sub))
		for ti := range r.subRes[si] {
			r.subRes[si][ti] = subOutcome{missing: true, expert: math.NaN(), source: math.NaN(), judged: -1}
		}
		for ti := range r.objRes[si] {
			r.objRes[si][ti].missing = true
		}
		if sys.Does("objective") {
			for ti, o := range r.obj {
				calls = append(calls, call(sys.Model, SolverPrompt(o, &r.in.Prompts), r.objTask(o), results.RoleSystem, sys.Name))
				objRefs = append(objRefs, ref{si, ti})
			}
		}
	}
	for si := range r.systems {
		sys := &r.systems[si]
		if sys.Does("subjective") {
			for ti, s := range r.sub {
				if r.rubrics[s.ID] == nil {
					continue
				}
				calls = append(calls, call(sys.Model, ReportPrompt(s), r.subTask(s), results.RoleSystem, sys.Name))
				subRefs = append(subRefs, ref{si, ti})
			}
		}
	}
	replies := r.reply(ctx, ans, calls)
	objReplies, subReplies := replies[:len(objRefs)], replies[len(objRefs):]
	// Round 2: judges (a fresh slice: the Answerer may keep the first).
	calls = nil
	type jref struct {
		kind  int // 0 objective, 1 rubric, 2 citation
		sys   int
		task  int
		judge int
		ids   []string
	}
	var jrefs []jref
	for i, rf := range objRefs {
		rep := objReplies[i]
		out := &r.objRes[rf.sys][rf.task]
		out.answer = rep
		if rep.Err != nil {
			continue
		}
		o := r.obj[rf.task]
		calls = append(calls, call(cfg.ObjectiveJudge, JudgePrompt(o, &r.in.Prompts, rep.Text), r.objTask(o), results.RoleJudge, cfg.ObjectiveJudge.Name))
		jrefs = append(jrefs, jref{kind: 0, sys: rf.sys, task: rf.task})
	}
	sample := r.humanSample()
	refsOf := map[[2]int][]Reference{}
	claimsOf := map[[2]int][]Claim{}
	for i, rf := range subRefs {
		rep := subReplies[i]
		out := &r.subRes[rf.sys][rf.task]
		if rep.Err != nil {
			continue
		}
		out.missing = false
		out.report = rep.Text
		s := r.sub[rf.task]
		sys := &r.systems[rf.sys]
		rb := r.rubrics[s.ID]
		for j, judge := range cfg.RubricJudges {
			if j > 0 && !sample[[2]string{s.ID, sys.Name}] {
				break
			}
			calls = append(calls, call(judge, RubricPrompt(s, rb, rep.Text), r.subTask(s), results.RoleJudge, judge.Name))
			jrefs = append(jrefs, jref{kind: 1, sys: rf.sys, task: rf.task, judge: j})
		}
		refs, claims := ParseReport(rep.Text, cfg.MaxClaims)
		refsOf[[2]int{rf.sys, rf.task}] = refs
		if sys.Source {
			out.source = r.sourceScore(refs, s, sys)
		}
		if sys.Citation {
			if len(claims) == 0 {
				out.judged, out.citNote = 0, "no cited claims"
				continue
			}
			claimsOf[[2]int{rf.sys, rf.task}] = claims
			var ids []string
			for _, c := range claims {
				ids = append(ids, c.ID)
			}
			calls = append(calls, call(cfg.CitationJudge, CitationPrompt(claims, refs), r.subTask(s), results.RoleJudge, cfg.CitationJudge.Name))
			jrefs = append(jrefs, jref{kind: 2, sys: rf.sys, task: rf.task, ids: ids})
		}
	}
	replies = r.reply(ctx, ans, calls)
	r.llmScores = map[[2]string][]float64{}
	for i, jr := range jrefs {
		rep := replies[i]
		switch jr.kind {
		case 0:
			r.scoreObjective(jr.sys, jr.task, rep)
		case 1:
			r.scoreRubric(jr.sys, jr.task, jr.judge, rep)
		case 2:
			r.scoreCitations(jr.sys, jr.task, jr.ids, claimsOf[[2]int{jr.sys, jr.task}], rep)
		}
	}
}

func (r *run) reply(ctx context.Context, ans results.Answerer, calls []results.Call) []results.Reply {
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
			r.res.Missing++
			r.problem("%s: no reply: %v", calls[i].Label, rep.Err)
		}
		if rep.Synthetic() {
			r.res.Synthetic = true
		}
	}
	return replies[:len(calls)]
}

func (r *run) scoreObjective(si, ti int, rep results.Reply) {
	out := &r.objRes[si][ti]
	o := r.obj[ti]
	if rep.Err != nil {
		return
	}
	out.missing = false
	out.judgeRaw = rep.Text
	v, err := ParseVerdict(rep.Text)
	if err != nil {
		r.problem("%s %s: judge response counted incorrect: %v", r.objTask(o), r.systems[si].Name, err)
		return
	}
	out.parsed, out.correct, out.conf, out.verdict = true, v.Correct, v.Confidence, v
	for _, n := range v.Notes {
		r.problem("%s %s: judge response: %s", r.objTask(o), r.systems[si].Name, n)
	}
}

func (r *run) scoreRubric(si, ti, judge int, rep results.Reply) {
	out := &r.subRes[si][ti]
	s := r.sub[ti]
	name := r.in.Config.RubricJudges[judge].Name
	if rep.Err != nil {
		return
	}
	scores, notes, err := ParseRubricScores(rep.Text, r.rubrics[s.ID])
	for _, n := range notes {
		r.problem("%s %s: judge %s: %s", r.subTask(s), r.systems[si].Name, name, n)
	}
	total := 0.0
	if err != nil {
		r.problem("%s %s: judge %s: response scored 0: %v", r.subTask(s), r.systems[si].Name, name, err)
		scores = nil
	}
	var why []string
	for _, sc := range scores {
		total += sc.Score
		why = append(why, fmt.Sprintf("%s: %g. %s", sc.ID, sc.Score, sc.Justification))
	}
	key := [2]string{s.ID, r.systems[si].Name}
	if r.llmScores[key] == nil {
		r.llmScores[key] = make([]float64, len(r.in.Config.RubricJudges))
		for i := range r.llmScores[key] {
			r.llmScores[key][i] = math.NaN()
		}
	}
	r.llmScores[key][judge] = total
	out.verdicts = append(out.verdicts, analysis.Verdict{Judge: name, Verdict: fmt.Sprintf("%s/100", trimFloat(total)), Reasoning: clip(strings.Join(why, "\n"), 4000)})
	if judge == 0 {
		out.expert, out.subs, out.judgeRaw = total, scores, rep.Text
	}
}

func (r *run) scoreCitations(si, ti int, ids []string, claims []Claim, rep results.Reply) {
	out := &r.subRes[si][ti]
	s := r.sub[ti]
	if rep.Err != nil {
		return
	}
	name := r.in.Config.CitationJudge.Name
	verdicts, notes, err := ParseCitations(rep.Text, ids)
	for _, n := range notes {
		r.problem("%s %s: citation judge: %s", r.subTask(s), r.systems[si].Name, n)
	}
	if err != nil {
		r.problem("%s %s: citation judge response unreadable, no claim judged: %v", r.subTask(s), r.systems[si].Name, err)
		out.judged = 0
		return
	}
	var why []string
	unknown := 0
	out.judged, out.support = 0, 0
	for _, c := range claims {
		v := verdicts[c.ID]
		switch v.Verdict {
		case Supported:
			out.support++
			out.judged++
		case Unsupported:
			out.judged++
		default:
			unknown++
		}
		why = append(why, fmt.Sprintf("%s [%d] %s: %s", c.ID, c.Ref, v.Verdict, v.Reason))
	}
	out.verdicts = append(out.verdicts, analysis.Verdict{Judge: name,
		Verdict:   fmt.Sprintf("%d supported, %d unsupported, %d unknown", out.support, out.judged-out.support, unknown),
		Reasoning: clip(strings.Join(why, "\n"), 4000)})
}

// sourceScore is S_t: the mean over dated references of authority x
// exp(-alpha x age in days) at the reference date; 0 with none.
func (r *run) sourceScore(refs []Reference, s *Subjective, sys *System) float64 {
	sum, m := 0.0, 0
	for _, ref := range refs {
		if ref.Date.IsZero() {
			continue
		}
		age := r.in.RefDate.Sub(ref.Date).Hours() / 24
		if age < 0 {
			r.problem("%s %s: reference [%d] dated %s after the reference date; age taken as 0", r.subTask(s), sys.Name, ref.N, ref.Date.Format("2006-01-02"))
			age = 0
		}
		auth := r.o.tiers[r.in.Authority.Tier(ref.URL)-1]
		sum += auth * math.Exp(-r.o.alpha*age)
		m++
	}
	if m == 0 {
		return 0
	}
	return sum / float64(m)
}

func trimFloat(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// clip shortens s to at most n bytes on a rune boundary, saying so.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "\n[... shortened from " + strconv.Itoa(len(s)) + " bytes]"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// private runs the private hold-out tasks with the same systems and
// judges and adds the private_holdout table (the main_results layout).
func (r *run) private(ctx context.Context, ans results.Answerer) {
	pin := *r.in
	pin.Objectives, pin.Subjectives, pin.Human = r.in.PrivateObjectives, r.in.PrivateSubjectives, nil
	pin.Config.ObjectiveTasks, pin.Config.SubjectiveTasks = nil, nil
	p := &run{in: &pin, o: r.o, prefix: "private/", systems: r.systems, rubrics: map[string]*Rubric{}, res: &analysis.Result{}}
	p.selectTasks()
	p.parseRubrics()
	p.answer(ctx, ans)
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
	p.details()
	r.res.Tables = append(r.res.Tables, t)
	r.res.Problems = append(r.res.Problems, p.res.Problems...)
	r.res.Details = append(r.res.Details, p.res.Details...)
	r.res.Missing += p.res.Missing
	r.res.Synthetic = r.res.Synthetic || p.res.Synthetic
}

// Collect is, for now, a whole run whose result is dropped; it keeps in
// for Score, which runs again.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if _, err := b.run(ctx, in); err != nil {
		return nil, err
	}
	return in, nil
}

// Score runs the benchmark over the kept input under s.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	in := c.(analysis.Input)
	in.Settings = s
	return b.run(ctx, in)
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}
