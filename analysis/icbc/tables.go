package icbc

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

func num(x float64) analysis.Cell {
	if math.IsNaN(x) {
		return analysis.Undefined("nothing scored")
	}
	return analysis.Number(x)
}

func notEvaluated(x float64) analysis.Cell {
	if math.IsNaN(x) {
		return analysis.Undefined("not evaluated")
	}
	return analysis.Number(x)
}

func pts(name, title, doc string) analysis.Column {
	return analysis.Column{Name: name, Title: title, Unit: "pts", Decimals: 2, Better: analysis.Higher, Doc: doc}
}

var (
	colSystem = analysis.Column{Name: "system", Title: "System"}
	colGroup  = analysis.Column{Name: "group", Title: "Group", Doc: "closed: proprietary systems; open: open-source and agentic frameworks"}
)

func (r *run) tables() {
	scores := map[string][]trackScore{}
	for si := range r.systems {
		for _, l := range langs {
			o, s := r.track(l)
			scores[l] = append(scores[l], r.score(si, o, s))
		}
	}
	en, zh := scores["en"], scores["zh"]
	delta, overall := r.bootstrap()

	// Row order: closed before open, then by mean overall, then name.
	order := make([]int, len(r.systems))
	mean := make([]float64, len(r.systems))
	for i := range order {
		order[i] = i
		mean[i] = (en[i].overall + zh[i].overall) / 2
	}
	byScore := func(a, b int) int {
		x, y := mean[a], mean[b]
		switch {
		case math.IsNaN(x) && !math.IsNaN(y):
			return 1
		case !math.IsNaN(x) && math.IsNaN(y):
			return -1
		case x != y && !math.IsNaN(x):
			return cmp.Compare(y, x)
		}
		return strings.Compare(r.systems[a].Name, r.systems[b].Name)
	}
	rank := slices.Clone(order)
	slices.SortStableFunc(rank, byScore)
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(groupRank(r.systems[a].Group)-groupRank(r.systems[b].Group), byScore(a, b))
	})
	r.res.Scores = map[string]float64{}
	for _, i := range rank {
		if math.IsNaN(mean[i]) {
			continue
		}
		r.res.Ranking = append(r.res.Ranking, r.systems[i].Name)
		r.res.Scores[r.systems[i].Name] = mean[i]
	}
	// Tiers are the tie groups of the paired tests over tasks, in ranking
	// order (docs/icbcbench.md).
	bd := r.board(r.res.Ranking, r.res.Scores)
	main := &analysis.Table{Benchmark: Name, Name: "main_results", Title: "ICBCBench main results",
		Caption: "Objective, subjective and overall scores per language track (points). Overall = (Objective + Subjective) / 2; overall is the mean of the two tracks with its bootstrap interval over tasks.",
		Columns: []analysis.Column{colSystem, colGroup,
			pts("en_objective", "EN objective", "accuracy on English objective tasks"),
			pts("en_subjective", "EN subjective", "expert x 0.8 + citation x 0.1 + source x 0.1 on English report tasks"),
			pts("en_overall", "EN overall", ""),
			pts("zh_objective", "ZH objective", ""), pts("zh_subjective", "ZH subjective", ""), pts("zh_overall", "ZH overall", ""),
			pts("overall", "Overall", "mean of the EN and ZH overall scores"),
			{Name: "overall_low", Title: "95% low", Unit: "pts", Decimals: 2},
			{Name: "overall_high", Title: "95% high", Unit: "pts", Decimals: 2},
			{Name: "tier", Title: "Tier", Doc: "tie group: systems not resolved from the tier's best by a paired sign-flip test over tasks (p < 0.05) share its tier"},
		},
		Charts: []analysis.Chart{{ID: "dimension_heatmap", Kind: analysis.Heatmap, Title: "Systems by track and dimension", X: "system",
			Y: []string{"en_objective", "en_subjective", "en_overall", "zh_objective", "zh_subjective", "zh_overall"}}},
	}
	main.Columns = append(main.Columns, bd.Columns()...)
	main.Notes = append(main.Notes, bd.Notes()...)
	main.Notes = append(main.Notes, "The clustered statistics are those of the overall score linearised in its task sums (the delta method for a ratio of totals): each task's item is its influence on the overall score, and the English and Chinese versions of a task with the same ID are one cluster.")
	detail := map[string]*analysis.Table{}
	for _, l := range langs {
		L := strings.ToUpper(l)
		detail[l] = &analysis.Table{Benchmark: Name, Name: l + "_detail", Title: "ICBCBench " + L + " track detail",
			Caption: "Objective accuracy over text-only and all tasks; subjective components; blank components are not evaluated for the system (they count 0 in the subjective score).",
			Columns: []analysis.Column{colSystem, colGroup,
				pts("objective_text_only", "Objective text-only", ""), pts("objective_all", "Objective all", ""),
				pts("expert", "Expert", "rubric score, averaged by the expert_average knob"),
				pts("citation", "Citation", "citation consistency"), pts("source", "Source", "source quality"),
				pts("overall", "Overall", ""),
				pts("expert_all_tasks", "Expert (all tasks)", "mean over every scored report"),
				pts("expert_positive_tasks", "Expert (tasks > 0)", "mean over reports scoring above 0, the authors' convention"),
				pts("subjective", "Subjective", ""),
			}}
		detail[l].Columns = append(detail[l].Columns, uncertainty.ProportionColumns(2, true)...)
		detail[l].Notes = append(detail[l].Notes, "Objective all: the Wilson interval (finrepro's convention) beside the Wald interval p ± 1.96·√(p(1-p)/n) that ICBCBench's toolkit uses; both treat tasks as independent, and the Wald one collapses to a point at 0 % and 100 %.")
	}
	cross := &analysis.Table{Benchmark: Name, Name: "cross_lingual", Title: "Cross-lingual delta",
		Caption: "EN overall - ZH overall (positive: English-leaning) with a 95% paired bootstrap interval over tasks.",
		Columns: []analysis.Column{colSystem, colGroup, pts("en_overall", "EN overall", ""), pts("zh_overall", "ZH overall", ""),
			{Name: "delta", Title: "Delta", Unit: "pts", Decimals: 2}, {Name: "delta_low", Title: "95% low", Unit: "pts", Decimals: 2},
			{Name: "delta_high", Title: "95% high", Unit: "pts", Decimals: 2}},
		Charts: []analysis.Chart{{ID: "cross_lingual_mirror", Kind: analysis.Mirror, Title: "Overall score, EN (left) and ZH (right), with the delta",
			X: "system", Y: []string{"en_overall", "zh_overall", "delta"}, XName: "Overall (pts)"}},
	}
	for _, i := range order {
		sys := &r.systems[i]
		e, z := en[i], zh[i]
		row := []analysis.Cell{analysis.Text(sys.Name), analysis.Text(sys.Group), num(e.objAll), num(e.subjective), num(e.overall),
			num(z.objAll), num(z.subjective), num(z.overall), num(mean[i]), num(overall[i].lo), num(overall[i].hi), bd.Tier(sys.Name)}
		main.AddRow(append(row, bd.Cells(sys.Name)...)...)
		for _, l := range langs {
			t := scores[l][i]
			c, n := r.objCounts(i, l)
			row := []analysis.Cell{analysis.Text(sys.Name), analysis.Text(sys.Group), num(t.objText), num(t.objAll), num(t.expert),
				notEvaluated(t.citation), notEvaluated(t.source), num(t.overall), num(t.expertAll), num(t.expertPo), num(t.subjective)}
			detail[l].AddRow(append(row, uncertainty.ProportionCells(c, n, true)...)...)
		}
	}
	crossOrder := slices.Clone(order)
	slices.SortStableFunc(crossOrder, func(a, b int) int {
		x, y := en[a].overall, en[b].overall
		if x != y && !math.IsNaN(x) && !math.IsNaN(y) {
			return cmp.Compare(y, x)
		}
		return strings.Compare(r.systems[a].Name, r.systems[b].Name)
	})
	for _, i := range crossOrder {
		cross.AddRow(analysis.Text(r.systems[i].Name), analysis.Text(r.systems[i].Group), num(en[i].overall), num(zh[i].overall),
			num(en[i].overall-zh[i].overall), num(delta[i].lo), num(delta[i].hi))
	}
	r.res.Tables = append(r.res.Tables, main, bd.PairTable(Name, "Overall score: paired comparisons of adjacent systems"), detail["en"], detail["zh"], r.calibration(en, zh, order), r.reliability(order),
		r.domains(order), cross, r.humanConsistency(), r.rubricTable())
	r.res.Tables = append(r.res.Tables, bd.RequestedTable(Name)...)
}

func groupRank(g string) int {
	switch g {
	case "closed":
		return 0
	case "open":
		return 1
	}
	return 2
}

// predictions returns system si's judged answers with a confidence in
// task-file order (the order of the objective questions file), which is
// the order the authors' code hands to its calibration error and so the
// order tied confidences keep there.
func (r *run) predictions(si int) []stats.Prediction {
	at := make(map[*Objective]int, len(r.in.Objectives))
	for i := range r.in.Objectives {
		at[&r.in.Objectives[i]] = i
	}
	order := make([]int, len(r.obj))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(at[r.obj[a]], at[r.obj[b]]) })
	var p []stats.Prediction
	for _, ti := range order {
		if out := r.objRes[si][ti]; !out.missing && out.parsed {
			p = append(p, stats.Prediction{Confidence: out.conf / 100, Correct: out.correct})
		}
	}
	return p
}

// tieOrders is the number of random orders of tied confidences the
// calibration error's range is taken over: enough for the extremes of
// the demo's tie groups to show, cheap next to the bootstrap.
const tieOrders = 200

func (r *run) calibration(en, zh []trackScore, order []int) *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "calibration", Title: "Accuracy and calibration error",
		Caption: fmt.Sprintf("Objective tasks of both languages. Accuracy = mean of the EN and ZH objective scores; calibration error = HLE RMS calibration error (bins of %d, %s), in percent, predictions sorted by confidence with ties in task-file order as in the authors' code; the tie range is the smallest and largest error over that order and %d random orders of the tied confidences (seed %d); ECE with %d equal-width bins (lo, hi], the first closed at 0.",
			r.o.beta, map[bool]string{false: "every bin", true: "last bin skipped as in the original HLE code"}[r.o.skipLast], tieOrders, r.o.seed, r.o.eceBins),
		Columns: []analysis.Column{colSystem,
			{Name: "accuracy", Title: "Accuracy", Unit: "%", Decimals: 2, Better: analysis.Higher},
			{Name: "calibration_error", Title: "Calibration error", Unit: "%", Decimals: 2, Better: analysis.Lower},
			{Name: "calibration_error_tie_low", Title: "Tie range low", Unit: "%", Decimals: 2, Doc: "smallest calibration error over orders of the tied confidences"},
			{Name: "calibration_error_tie_high", Title: "Tie range high", Unit: "%", Decimals: 2, Doc: "largest calibration error over orders of the tied confidences"},
			{Name: "calibration_error_beta100", Title: "Calibration error (bins of 100)", Unit: "%", Decimals: 2, Better: analysis.Lower},
			{Name: "ece", Title: "ECE", Unit: "%", Decimals: 2, Better: analysis.Lower},
			{Name: "predictions", Title: "Predictions", Doc: "judged answers with a confidence"},
		},
		Charts: []analysis.Chart{{ID: "accuracy_calibration", Kind: analysis.Scatter, Title: "Accuracy vs calibration error",
			X: "calibration_error", Y: []string{"accuracy"}, Label: "system", XName: "Calibration error (%)", YName: "Accuracy (%)",
			Zone: &analysis.Zone{XMin: 0, XMax: 60, YMin: 30, YMax: 100, Label: "ideal zone: accuracy > 30%, calibration error < 60%"}}},
	}
	cell := func(x float64, err error) analysis.Cell {
		if err != nil {
			return analysis.Undefined(err.Error())
		}
		return analysis.Number(100 * x)
	}
	for _, i := range order {
		p := r.predictions(i)
		acc := (en[i].objAll + zh[i].objAll) / 2
		c := stats.Calibration{Beta: r.o.beta, SkipLast: r.o.skipLast}
		lo, hi, err := stats.CalibrationErrorRange(p, c, tieOrders, r.o.seed)
		t.AddRow(analysis.Text(r.systems[i].Name), num(acc),
			cell(stats.CalibrationError(p, c)), cell(lo, err), cell(hi, err),
			cell(stats.CalibrationError(p, stats.Calibration{Beta: 100, SkipLast: r.o.skipLast})),
			cell(stats.ECE(p, r.o.eceBins)), analysis.Int(len(p)))
	}
	return t
}

// reliableBin is the fewest answers a reliability bin needs for its
// accuracy to be drawn as reliable; sparser bins are greyed.
const reliableBin = 10

func (r *run) reliability(order []int) *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "reliability", Title: "Reliability diagram",
		Caption: "Accuracy (%) per equal-width confidence bin and system, both languages; ideal = the bin's mid confidence. A bin lo-hi holds confidences above lo up to hi, the first bin also 0. Empty bins are blank; the items columns count each system's answers per bin."}
	t.Columns = []analysis.Column{{Name: "bin", Title: "Confidence bin"}, {Name: "bin_mid", Title: "Bin mid", Unit: "%", Decimals: 1},
		{Name: "ideal", Title: "Ideal", Unit: "%", Decimals: 1}}
	ch := analysis.Chart{ID: "reliability_diagram", Kind: analysis.Line, Title: "Reliability diagram", X: "bin_mid", Y: []string{"ideal"},
		XName: "Confidence (%)", YName: "Accuracy (%)", Counts: []string{""}, MinCount: reliableBin}
	bins := make([][]stats.ReliabilityBin, len(order))
	for k, i := range order {
		name := r.systems[i].Name
		t.Columns = append(t.Columns, analysis.Column{Name: name, Unit: "%", Decimals: 1})
		ch.Y = append(ch.Y, name)
		ch.Counts = append(ch.Counts, "n "+name)
		bins[k] = stats.Reliability(r.predictions(i), r.o.eceBins)
	}
	for _, i := range order {
		name := r.systems[i].Name
		t.Columns = append(t.Columns, analysis.Column{Name: "n " + name, Title: name + " items", Doc: "answers in the bin"})
	}
	for b := range r.o.eceBins {
		lo, hi := 100*float64(b)/float64(r.o.eceBins), 100*float64(b+1)/float64(r.o.eceBins)
		row := []analysis.Cell{analysis.Text(fmt.Sprintf("%g-%g", lo, hi)), analysis.Number((lo + hi) / 2), analysis.Number((lo + hi) / 2)}
		for k := range order {
			if x := bins[k][b]; x.Count > 0 {
				row = append(row, analysis.Number(100*x.Accuracy))
			} else {
				row = append(row, analysis.Undefined("empty bin"))
			}
		}
		for k := range order {
			row = append(row, analysis.Int(bins[k][b].Count))
		}
		t.AddRow(row...)
	}
	t.Charts = []analysis.Chart{ch}
	return t
}

// domainsOf maps every objective task to its domain, noting the tasks
// of none. A task's domain is the first whose prefix matches; domains
// are told apart by name, and objDomain holds the first index of that
// name.
func (c *collection) domainsOf() {
	doms := c.in.Config.Domains
	c.objDomain = make([]int, len(c.obj))
	for ti, o := range c.obj {
		prefix, _, _ := strings.Cut(o.ClassificationCode, "-")
		c.objDomain[ti] = -1
		if j := slices.IndexFunc(doms, func(d Domain) bool { return strings.EqualFold(d.Prefix, prefix) }); j >= 0 && doms[j].Name != "" {
			c.objDomain[ti] = firstNamed(doms, doms[j].Name)
		}
		if c.objDomain[ti] < 0 {
			c.problem("%s: classification_code %q maps to no domain", c.objTask(o), o.ClassificationCode)
		}
	}
}

// firstNamed returns the index of the first domain called name.
func firstNamed(doms []Domain, name string) int {
	return slices.IndexFunc(doms, func(d Domain) bool { return d.Name == name })
}

func (r *run) domains(order []int) *analysis.Table {
	doms := r.in.Config.Domains
	count := make([]int, len(doms))
	for _, d := range r.objDomain {
		if d >= 0 {
			count[d]++
		}
	}
	var sizes []string
	for _, d := range doms {
		sizes = append(sizes, d.Name+" "+strconv.Itoa(count[firstNamed(doms, d.Name)]))
	}
	t := &analysis.Table{Benchmark: Name, Name: "domains", Title: "Objective accuracy by domain",
		Caption: "Accuracy (points) per domain over both languages; average = mean of the domain columns. Tasks per domain: " + strings.Join(sizes, ", ") + ".",
		Notes:   []string{"The public file's classification_code prefixes give 28/25/20/7 tasks (banking/capital markets/insurance/others); the paper's table implies 28/24/20/8."},
		Columns: []analysis.Column{colSystem, colGroup}}
	ch := analysis.Chart{ID: "domain_bars", Kind: analysis.Bar, Title: "Objective accuracy by domain", X: "system", YName: "Accuracy (pts)"}
	for _, d := range doms {
		t.Columns = append(t.Columns, pts(d.Name, strings.ReplaceAll(d.Name, "_", " "), ""))
		ch.Y = append(ch.Y, d.Name)
	}
	t.Columns = append(t.Columns, pts("average", "Average", "mean of the domain accuracies"))
	t.Charts = []analysis.Chart{ch}
	n, c := make([]float64, len(doms)), make([]float64, len(doms))
	for _, i := range order {
		row := []analysis.Cell{analysis.Text(r.systems[i].Name), analysis.Text(r.systems[i].Group)}
		clear(n)
		clear(c)
		for ti, out := range r.objRes[i] {
			if d := r.objDomain[ti]; d >= 0 && !out.missing {
				n[d]++
				if out.correct {
					c[d]++
				}
			}
		}
		accs := make([]float64, len(doms))
		for d, dom := range doms {
			k := firstNamed(doms, dom.Name)
			accs[d] = pct(c[k], n[k])
			row = append(row, num(accs[d]))
		}
		row = append(row, num(stats.Mean(accs)))
		t.AddRow(row...)
	}
	return t
}

func (r *run) rubricTable() *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "rubrics", Title: "Expert rubrics",
		Caption: "Every rubric of the subjective file as parsed: dimensions, sub-dimensions, points, and the inconsistencies found (reported, not fixed).",
		Columns: []analysis.Column{{Name: "id", Title: "Rubric"}, {Name: "language", Title: "Language"},
			{Name: "dimensions", Title: "Dimensions"}, {Name: "sub_dimensions", Title: "Sub-dimensions"},
			{Name: "points_total", Title: "Points", Decimals: 0, Doc: "sum of the dimensions' points"},
			{Name: "sub_points_total", Title: "Sub-dimension points", Decimals: 0, Doc: "sum of the sub-dimensions' points: the most a judge can award"},
			{Name: "problems", Title: "Problems"}}}
	subs := slices.Clone(r.in.Subjectives)
	slices.SortFunc(subs, func(a, b Subjective) int { return idLess(a.ID, b.ID) })
	for _, s := range subs {
		rb := r.sums[s.ID]
		if rb == nil {
			t.AddRow(analysis.Text(s.ID), analysis.Text(s.Language), analysis.Int(0), analysis.Int(0),
				analysis.Undefined("unparsed"), analysis.Undefined("unparsed"), analysis.Text("no dimension headings found"))
			continue
		}
		t.AddRow(analysis.Text(s.ID), analysis.Text(s.Language), analysis.Int(rb.dims), analysis.Int(len(rb.subs)),
			analysis.Number(rb.total), analysis.Number(rb.subTotal), analysis.Text(rb.problems))
	}
	return t
}

// taskName is c.objTask or c.subTask of w's task, made once a task.
func (c *collection) taskName(w *output) string {
	if w.sub {
		if c.subNames == nil {
			c.subNames = make([]string, len(c.sub))
		}
		if c.subNames[w.task] == "" {
			c.subNames[w.task] = c.subTask(c.sub[w.task])
		}
		return c.subNames[w.task]
	}
	if c.objNames == nil {
		c.objNames = make([]string, len(c.obj))
	}
	if c.objNames[w.task] == "" {
		c.objNames[w.task] = c.objTask(c.obj[w.task])
	}
	return c.objNames[w.task]
}

// addDetail keeps the detail of a collected output, if it has one.
func (c *collection) addDetail(w *output) {
	sys := &c.systems[w.sys]
	if !w.sub {
		o := c.obj[w.task]
		out, txt := c.objRes[w.sys][w.task], &w.obj
		if txt.answer.Err != nil || (txt.answer.Text == "" && out.missing) {
			return
		}
		score := "incorrect"
		switch {
		case out.missing:
			score = "not judged (missing judge reply)"
		case !out.parsed:
			score = "incorrect (judge response unparsable)"
		case out.correct:
			score = "correct"
		}
		d := analysis.Detail{Task: c.taskName(w), System: sys.Name, Question: clip(o.Question, 2000), Output: clip(txt.answer.Text, 4000), Score: score,
			Call: analysis.CallOf(txt.answer, 0)}
		if !out.missing {
			v := analysis.Verdict{Judge: c.in.Config.ObjectiveJudge.Name, Reasoning: clip(txt.verdict.Reasoning, 2000), Call: txt.judge}
			if out.parsed {
				v.Verdict = fmt.Sprintf("%s (extracted %q, confidence %g)", map[bool]string{true: "correct", false: "incorrect"}[out.correct], clip(txt.verdict.Extracted, 200), out.conf)
			} else {
				v.Verdict, v.Reasoning = "unparsable", clip(txt.judgeRaw, 2000)
			}
			d.Verdicts = []analysis.Verdict{v}
		}
		c.details = append(c.details, c.keep(d))
		return
	}
	s := c.sub[w.task]
	out, txt := c.subRes[w.sys][w.task], &w.txt
	if !txt.present {
		return
	}
	score := "not scored"
	if !math.IsNaN(out.expert) {
		score = "expert " + trimFloat(out.expert) + "/100"
	}
	c.details = append(c.details, c.keep(analysis.Detail{Task: c.taskName(w), System: sys.Name, Question: clip(s.Question, 2000),
		Output: clip(txt.report, 6000), Score: score, Verdicts: txt.verdicts, Call: txt.call}))
}

// A keptDetail is a detail kept in the collection's texts at ref, all
// but its task and system (which it shares with the other details of its
// task and system): a collection holds the details of every output until
// it is scored. The texts are the question, output, score and the number
// of verdicts, each verdict's judge, verdict and reasoning, then the key,
// model and source of the detail's exchange and of each verdict's (a key
// "" for none).
type keptDetail struct {
	task, system string
	ref          analysis.TextRef
}

// keep puts d in c's texts.
func (c *collection) keep(d analysis.Detail) keptDetail {
	texts := make([]string, 0, 4+6*len(d.Verdicts)+3)
	texts = append(texts, d.Question, d.Output, d.Score, strconv.Itoa(len(d.Verdicts)))
	for _, v := range d.Verdicts {
		texts = append(texts, v.Judge, v.Verdict, v.Reasoning)
	}
	texts = appendCall(texts, d.Call)
	for _, v := range d.Verdicts {
		texts = appendCall(texts, v.Call)
	}
	return keptDetail{d.Task, d.System, c.texts.Put(texts)}
}

func appendCall(texts []string, call *analysis.Call) []string {
	if call == nil {
		return append(texts, "", "", "")
	}
	return append(texts, call.Key, call.Model, call.Source)
}

// callAt returns the exchange of texts at i (see keptDetail).
func callAt(texts []string, i int) *analysis.Call {
	if texts[i] == "" {
		return nil
	}
	return &analysis.Call{Key: texts[i], Model: texts[i+1], Source: texts[i+2]}
}

// eachDetail yields the details read back from c's texts (their task and
// system only when the texts failed, which their owner reports).
func (c *collection) eachDetail(yield func(analysis.Detail) bool) {
	for _, k := range c.details {
		d := analysis.Detail{Task: k.task, System: k.system}
		texts := c.texts.Get(k.ref)
		n := -1
		if len(texts) >= 4 {
			n, _ = strconv.Atoi(texts[3])
		}
		if n >= 0 && len(texts) == 4+6*n+3 {
			d.Question, d.Output, d.Score = texts[0], texts[1], texts[2]
			calls := 4 + 3*n
			d.Call = callAt(texts, calls)
			if n > 0 {
				d.Verdicts = make([]analysis.Verdict, n)
				for i := range d.Verdicts {
					at := 4 + 3*i
					d.Verdicts[i] = analysis.Verdict{Judge: texts[at], Verdict: texts[at+1], Reasoning: texts[at+2], Call: callAt(texts, calls+3+3*i)}
				}
			}
		}
		if !yield(d) {
			return
		}
	}
}
