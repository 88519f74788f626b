package forecast

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/results"
)

// Bootstrap settings of the overall table's confidence intervals.
const (
	bootReps  = 1000
	bootSeed  = 20251030 // fixed so that intervals reproduce; the benchmark's first release date
	bootLevel = 0.95
)

// SensitivityScales are the tolerance multipliers of the
// tolerance_sensitivity table, relative to the tolerance_scale knob.
var SensitivityScales = []float64{0.5, 0.75, 1, 1.25, 1.5, 2}

// maxDetailOutput caps the output kept in a drill-down detail.
const maxDetailOutput = 4000

// A board holds one scoring of every prediction.
type board struct {
	in     *Inputs
	opt    Options
	preds  []Prediction       // task ti's systems from ti*nsys()
	leaks  map[int][]Evidence // by index in preds
	status []Status           // by task
	out    [][]int8           // [system][task] outcomes at the configured tolerances
	bd     *uncertainty.Board
}

func (b *board) nsys() int { return len(b.in.Config.Systems) }

// pred returns the prediction of system s for task ti.
func (b *board) pred(ti, s int) *Prediction { return &b.preds[ti*b.nsys()+s] }

// leaksOf returns the post-deadline sources the prediction of system s
// for task ti cites.
func (b *board) leaksOf(ti, s int) []Evidence { return b.leaks[ti*b.nsys()+s] }

// outcomes scores every prediction with tolerances scaled by scale.
func (b *board) outcomes(scale float64) [][]int8 {
	out := make([][]int8, b.nsys())
	for s := range out {
		out[s] = make([]int8, len(b.in.Tasks))
		for ti := range b.in.Tasks {
			out[s][ti] = score(b.in.Tasks[ti], b.pred(ti, s), b.status[ti], b.opt, scale)
		}
	}
	return out
}

// tally counts the correct and scored outcomes of o over the tasks keep
// accepts (all when keep is nil).
func (b *board) tally(o []int8, keep func(*Task) bool) (ok, n int) {
	for ti, t := range b.in.Tasks {
		if o[ti] == notScored || (keep != nil && !keep(t)) {
			continue
		}
		n++
		if o[ti] == correct {
			ok++
		}
	}
	return ok, n
}

// accCell is the accuracy cell (percent) of o over the tasks keep accepts.
func (b *board) accCell(o []int8, keep func(*Task) bool) analysis.Cell {
	ok, n := b.tally(o, keep)
	if n == 0 {
		return analysis.Undefined("no scored task")
	}
	return analysis.Number(100 * float64(ok) / float64(n))
}

// Analyze scores replies (one per call of in.Calls, in order) under opt
// and builds the result.
func Analyze(in *Inputs, replies []results.Reply, opt Options) *analysis.Result {
	c := newCollection(in, &analysis.MemoryTexts{})
	c.add(0, len(in.Tasks), replies)
	return c.score(opt)
}

// score scores every prediction of c under opt and builds the result. It
// does not modify c.
func (c *collection) score(opt Options) *analysis.Result {
	in := c.in
	b := &board{in: in, opt: opt, preds: c.preds, leaks: c.leaks}
	res := &analysis.Result{Benchmark: Name, Title: Title, Headline: "overall", Scores: map[string]float64{},
		Synthetic: c.synthetic, Missing: c.missing}
	b.status = make([]Status, len(in.Tasks))
	for ti, t := range in.Tasks {
		b.status[ti] = t.StatusAt(in.Config.asOf, opt.ValidityWeeks)
	}
	b.out = b.outcomes(1)
	overall := b.overallTable(res)
	res.Tables = []*analysis.Table{
		overall,
		b.bd.PairTable(Name, "Overall accuracy: paired comparisons of adjacent systems"),
		b.headlineTable(),
		b.taskTypesTable(),
		b.marketsTable(),
		b.weeklyTable(),
		b.lifecycleTable(),
		b.auditTable(),
		b.flagsTable(),
		b.invalidTable(),
		b.sensitivityTable(),
		b.tolerancesTable(),
	}
	res.Tables = append(res.Tables, b.bd.RequestedTable(Name)...)
	for _, t := range res.Tables {
		t.Benchmark = Name
	}
	res.LazyDetails = b.details(c)
	res.Problems = b.problems()
	return res
}

func accColumn(name, title, doc string) analysis.Column {
	return analysis.Column{Name: name, Title: title, Unit: "%", Decimals: 1, Better: analysis.Higher, Doc: doc}
}

func intColumn(name, title, doc string) analysis.Column {
	return analysis.Column{Name: name, Title: title, Doc: doc}
}

var (
	methodCol = analysis.Column{Name: "method", Title: "Method", Doc: "evaluated system"}
	groupCol  = analysis.Column{Name: "group", Title: "Group", Doc: "paradigm: thinking, thinking+search or deep-research"}
)

// overallTable is accuracy per system with bootstrap intervals and tiers;
// it also fills res.Ranking and res.Scores.
func (b *board) overallTable(res *analysis.Result) *analysis.Table {
	t := &analysis.Table{Name: "overall", Title: "Overall accuracy",
		Caption: "Accuracy = correct / scored resolved tasks, in percent; 95% bootstrap interval over tasks (1000 resamples, fixed seed); and the clustered statistics of the knob cluster.",
		Columns: []analysis.Column{methodCol, groupCol,
			accColumn("overall_accuracy", "Accuracy", "correct / scored, percent"),
			{Name: "ci_low", Title: "CI low", Unit: "%", Decimals: 1, Doc: "2.5% bootstrap quantile"},
			{Name: "ci_high", Title: "CI high", Unit: "%", Decimals: 1, Doc: "97.5% bootstrap quantile"},
			intColumn("tier", "Tier", "tie group, 1 = top: systems not resolved from the tier's best by a paired sign-flip test over the clusters (p < 0.05) share its tier"),
			intColumn("correct", "Correct", "correct predictions"),
			intColumn("scored", "Scored", "predictions scored (resolved tasks, not excluded)"),
			intColumn("invalid", "Invalid", "scored predictions whose answer could not be read (counted wrong)"),
			intColumn("flagged", "Flagged", "predictions the isolation audit flagged on resolved tasks"),
			intColumn("missing", "Missing", "calls without a reply"),
		}}
	type row struct {
		s           int
		acc, lo, hi float64
		ok, defCI   bool
	}
	rows := make([]row, b.nsys())
	lo, hi, defCI := b.bootstrap()
	var order []int
	for s := range rows {
		c, n := b.tally(b.out[s], nil)
		r := row{s: s, lo: lo[s], hi: hi[s], defCI: defCI[s]}
		if n > 0 {
			r.acc, r.ok = 100*float64(c)/float64(n), true
			order = append(order, s)
			res.Scores[b.in.Config.Systems[s].Name] = r.acc
		}
		rows[s] = r
	}
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(rows[y].acc, rows[x].acc); c != 0 {
			return c
		}
		return strings.Compare(b.in.Config.Systems[x].Name, b.in.Config.Systems[y].Name)
	})
	for _, s := range order {
		res.Ranking = append(res.Ranking, b.in.Config.Systems[s].Name)
	}
	// Tiers are the tie groups of the paired tests over the clusters, in
	// ranking order (docs/findeepforecast.md).
	b.bd = b.board(order)
	t.Columns = append(t.Columns, b.bd.Columns()...)
	t.Columns = append(t.Columns, uncertainty.ProportionColumns(1, false)...)
	for s, sys := range b.in.Config.Systems {
		r := rows[s]
		acc, lo, hi := analysis.Undefined("no scored task"), analysis.Undefined("no interval"), analysis.Undefined("no interval")
		if r.ok {
			acc = analysis.Number(r.acc)
		}
		if r.defCI {
			lo, hi = analysis.Number(r.lo), analysis.Number(r.hi)
		}
		c, n := b.tally(b.out[s], nil)
		var invalid, flagged, missing int
		for ti := range b.in.Tasks {
			p := b.pred(ti, s)
			missing += btoi(p.Missing)
			if b.status[ti] == Resolved && !p.Missing {
				flagged += btoi(p.Flagged())
				invalid += btoi(p.Invalid != "" && b.out[s][ti] != notScored && !p.Flagged())
			}
		}
		row := []analysis.Cell{analysis.Text(sys.Name), analysis.Text(sys.Group), acc, lo, hi, b.bd.Tier(sys.Name),
			analysis.Int(c), analysis.Int(n), analysis.Int(invalid), analysis.Int(flagged), analysis.Int(missing)}
		row = append(row, b.bd.Cells(sys.Name)...)
		t.AddRow(append(row, uncertainty.ProportionCells(c, n, false)...)...)
	}
	t.Notes = append(t.Notes, b.bd.Notes()...)
	t.Notes = append(t.Notes, "Wilson intervals treat tasks as independent; the paper states no interval convention.")
	t.Notes = append(t.Notes, fmt.Sprintf("Tolerance scale %s, late policy %s, zero rule %s, validity window %d weeks.",
		fmtNum(b.opt.Scale), b.opt.LatePolicy, b.opt.ZeroRule, b.opt.ValidityWeeks))
	return t
}

// bootstrap returns every system's percentile interval of accuracy over
// task resamples. The resamples are drawn once and shared (paired), which
// gives the intervals stats.Bootstrap would give system by system with
// the same seed.
func (b *board) bootstrap() (lo, hi []float64, ok []bool) {
	ns := b.nsys()
	vals := make([][]float64, ns)
	stats.Bootstrap(len(b.in.Tasks), bootReps, bootSeed, bootLevel, func(idx []int) float64 {
		for s := range ns {
			o := b.out[s]
			var c, n int
			for _, i := range idx {
				if o[i] != notScored {
					n++
					if o[i] == correct {
						c++
					}
				}
			}
			if n > 0 {
				vals[s] = append(vals[s], 100*float64(c)/float64(n))
			}
		}
		return 0 // the intervals are taken from vals below
	})
	lo, hi, ok = make([]float64, ns), make([]float64, ns), make([]bool, ns)
	a := (1 - bootLevel) / 2
	for s, v := range vals {
		if len(v) == 0 {
			continue
		}
		slices.Sort(v)
		lo[s], hi[s], ok[s] = stats.Quantile(v, a), stats.Quantile(v, 1-a), true
	}
	return lo, hi, ok
}

func btoi(x bool) int {
	if x {
		return 1
	}
	return 0
}

// headlineTable has the shape of the published headline: method and
// overall accuracy.
func (b *board) headlineTable() *analysis.Table {
	t := &analysis.Table{Name: "headline", Title: "Headline accuracy",
		Caption: "Overall accuracy over the whole horizon, in percent.",
		Columns: []analysis.Column{methodCol, accColumn("overall_accuracy", "Accuracy", "correct / scored, percent")}}
	for s, sys := range b.in.Config.Systems {
		t.AddRow(analysis.Text(sys.Name), b.accCell(b.out[s], nil))
	}
	return t
}

func kindLevel(kind, level string) func(*Task) bool {
	return func(t *Task) bool { return t.Kind == kind && (level == "" || t.Level == level) }
}

// taskTypesTable is accuracy by kind and level; the overall of a kind is
// task-weighted (correct / scored over both levels).
func (b *board) taskTypesTable() *analysis.Table {
	t := &analysis.Table{Name: "task_types", Title: "Accuracy by task type",
		Caption: "Non-recurrent (Yes/No events) and recurrent (numeric disclosures), corporate and macro; each overall is task-weighted.",
		Columns: []analysis.Column{methodCol, groupCol,
			accColumn("nonrec_corporate", "Non-rec. corporate", "non-recurrent corporate tasks"),
			accColumn("nonrec_macro", "Non-rec. macro", "non-recurrent macro tasks"),
			accColumn("nonrec_overall", "Non-rec. overall", "all non-recurrent tasks"),
			accColumn("rec_corporate", "Rec. corporate", "recurrent corporate tasks"),
			accColumn("rec_macro", "Rec. macro", "recurrent macro tasks"),
			accColumn("rec_overall", "Rec. overall", "all recurrent tasks"),
		},
		Charts: []analysis.Chart{{ID: "task_types", Kind: analysis.Bar, Title: "Accuracy by task type",
			X: "method", Y: []string{"nonrec_corporate", "nonrec_macro", "rec_corporate", "rec_macro"}, YName: "accuracy (%)"}}}
	filters := []func(*Task) bool{
		kindLevel(NonRecurrent, Corporate), kindLevel(NonRecurrent, Macro), kindLevel(NonRecurrent, ""),
		kindLevel(Recurrent, Corporate), kindLevel(Recurrent, Macro), kindLevel(Recurrent, ""),
	}
	for s, sys := range b.in.Config.Systems {
		row := []analysis.Cell{analysis.Text(sys.Name), analysis.Text(sys.Group)}
		for _, f := range filters {
			row = append(row, b.accCell(b.out[s], f))
		}
		t.AddRow(row...)
	}
	var counts []string
	for i, name := range []string{"non-recurrent corporate", "non-recurrent macro", "", "recurrent corporate", "recurrent macro"} {
		if name == "" {
			continue
		}
		n := 0
		for ti, task := range b.in.Tasks {
			n += btoi(b.status[ti] == Resolved && filters[i](task))
		}
		counts = append(counts, fmt.Sprintf("%s %d", name, n))
	}
	t.Notes = append(t.Notes, "Resolved tasks: "+strings.Join(counts, ", ")+".")
	return t
}

// markets returns the paper's markets, then any other market of the
// tasks, sorted.
func (b *board) markets() []string {
	ms := slices.Clone(Markets)
	var extra []string
	for _, t := range b.in.Tasks {
		if !slices.Contains(ms, t.Market) && !slices.Contains(extra, t.Market) {
			extra = append(extra, t.Market)
		}
	}
	slices.Sort(extra)
	return append(ms, extra...)
}

func (b *board) marketsTable() *analysis.Table {
	ms := b.markets()
	t := &analysis.Table{Name: "markets", Title: "Accuracy by market",
		Caption: "Accuracy over all task types of each market, in percent.",
		Columns: []analysis.Column{methodCol, groupCol}}
	for _, m := range ms {
		t.Columns = append(t.Columns, accColumn(m, m, "tasks of market "+m))
	}
	for s, sys := range b.in.Config.Systems {
		row := []analysis.Cell{analysis.Text(sys.Name), analysis.Text(sys.Group)}
		for _, m := range ms {
			row = append(row, b.accCell(b.out[s], func(t *Task) bool { return t.Market == m }))
		}
		t.AddRow(row...)
	}
	return t
}

func (b *board) weeks() []int {
	var ws []int
	for _, t := range b.in.Tasks {
		ws = append(ws, t.Week)
	}
	slices.Sort(ws)
	return slices.Compact(ws)
}

// weeklyTable is wide: a row per week, a column per system.
func (b *board) weeklyTable() *analysis.Table {
	t := &analysis.Table{Name: "weekly", Title: "Weekly accuracy",
		Caption: "Accuracy on the tasks released each week, in percent, one column per system.",
		Columns: []analysis.Column{{Name: "week", Title: "Week", Doc: "week of release"}}}
	var ys []string
	for _, sys := range b.in.Config.Systems {
		t.Columns = append(t.Columns, analysis.Column{Name: sys.Name, Unit: "%", Decimals: 1, Doc: "accuracy of " + sys.Name})
		ys = append(ys, sys.Name)
	}
	t.Charts = []analysis.Chart{{ID: "weekly", Kind: analysis.Line, Title: "Weekly accuracy",
		X: "week", Y: ys, XName: "week", YName: "accuracy (%)"}}
	for _, w := range b.weeks() {
		row := []analysis.Cell{analysis.Int(w)}
		for s := range b.in.Config.Systems {
			row = append(row, b.accCell(b.out[s], func(t *Task) bool { return t.Week == w }))
		}
		t.AddRow(row...)
	}
	return t
}

// lifecycleTable counts task states per week of release.
func (b *board) lifecycleTable() *analysis.Table {
	t := &analysis.Table{Name: "lifecycle", Title: "Task lifecycle",
		Caption: fmt.Sprintf("Task states at the evaluation time %s with a %d-week validity window: pending tasks are re-checked weekly, void ones are excluded from every score.",
			b.in.Config.EvaluatedAt, b.opt.ValidityWeeks),
		Columns: []analysis.Column{{Name: "week", Title: "Week", Doc: "week of release"},
			intColumn("tasks", "Tasks", "tasks released"),
			intColumn("resolved", "Resolved", "ground truth known within the window: scored"),
			intColumn("rechecked", "Re-checked", "resolved tasks whose ground truth came more than a week after t_e (pending at one weekly check at least)"),
			intColumn("pending", "Pending", "not yet resolved, window open"),
			intColumn("void", "Void", "not resolved within the window"),
		}}
	for _, w := range b.weeks() {
		var n, res, re, pend, void int
		for ti, task := range b.in.Tasks {
			if task.Week != w {
				continue
			}
			n++
			switch b.status[ti] {
			case Resolved:
				res++
				re += btoi(task.tr.After(task.te.Add(week)))
			case Pending:
				pend++
			case Void:
				void++
			}
		}
		t.AddRow(analysis.Int(w), analysis.Int(n), analysis.Int(res), analysis.Int(re), analysis.Int(pend), analysis.Int(void))
	}
	return t
}

// auditTable summarises the temporal-isolation audit per system.
func (b *board) auditTable() *analysis.Table {
	t := &analysis.Table{Name: "isolation_audit", Title: "Temporal isolation audit",
		Caption: "Predictions recorded after the deadline t_d, or citing evidence published after it, are flagged and " +
			map[bool]string{true: "excluded from every score.", false: "counted wrong."}[b.opt.LatePolicy == LateExclude],
		Columns: []analysis.Column{methodCol,
			intColumn("predictions", "Predictions", "replies received"),
			intColumn("late", "Late", "recorded after t_d"),
			intColumn("post_deadline_evidence", "Post-deadline evidence", "citing a source published after t_d"),
			intColumn("flagged", "Flagged", "late or citing post-deadline evidence"),
			intColumn("unknown_time", "Unknown time", "no recorded time: lateness not checkable"),
			intColumn("undated_evidence", "Undated evidence", "cited sources without a readable publication time"),
		},
		Charts: []analysis.Chart{{ID: "isolation_audit", Kind: analysis.Bar, Title: "Temporal isolation audit",
			X: "method", Y: []string{"late", "post_deadline_evidence"}, YName: "predictions"}}}
	for s, sys := range b.in.Config.Systems {
		var n, late, leak, flag, unknown, undated int
		for ti := range b.in.Tasks {
			p := b.pred(ti, s)
			if p.Missing {
				continue
			}
			n++
			late += btoi(p.Late)
			leak += btoi(p.Leaked)
			flag += btoi(p.Flagged())
			unknown += btoi(p.Recorded().IsZero())
			undated += int(p.Undated)
		}
		t.AddRow(analysis.Text(sys.Name), analysis.Int(n), analysis.Int(late), analysis.Int(leak), analysis.Int(flag), analysis.Int(unknown), analysis.Int(undated))
	}
	return t
}

// flagsTable lists every flag of the isolation audit.
func (b *board) flagsTable() *analysis.Table {
	t := &analysis.Table{Name: "isolation_flags", Title: "Isolation audit findings",
		Caption: "Every late prediction and every cited source published after the deadline.",
		Columns: []analysis.Column{{Name: "task", Title: "Task"}, methodCol, {Name: "week", Title: "Week"},
			{Name: "reason", Title: "Reason", Doc: "late (recorded after t_d) or evidence (published after t_d)"},
			{Name: "deadline", Title: "Deadline t_d"},
			{Name: "time", Title: "Time", Doc: "recorded time (late) or publication time (evidence)"},
			{Name: "url", Title: "Evidence URL"}}}
	for ti, task := range b.in.Tasks {
		for s, sys := range b.in.Config.Systems {
			p := b.pred(ti, s)
			if p.Late {
				t.AddRow(analysis.Text(task.ID), analysis.Text(sys.Name), analysis.Int(task.Week), analysis.Text("late"),
					analysis.Text(task.Deadline), analysis.Text(p.Recorded().Format(timeLayout)), analysis.Text(""))
			}
			for _, e := range b.leaksOf(ti, s) {
				t.AddRow(analysis.Text(task.ID), analysis.Text(sys.Name), analysis.Int(task.Week), analysis.Text("evidence"),
					analysis.Text(task.Deadline), analysis.Text(e.Time.Format(timeLayout)), analysis.Text(clip(e.URL, 300)))
			}
		}
	}
	return t
}

// invalidTable lists every answer that could not be read, as the system
// wrote it (cut at 200 bytes).
func (b *board) invalidTable() *analysis.Table {
	t := &analysis.Table{Name: "invalid_predictions", Title: "Invalid predictions",
		Caption: "Replies whose final answer could not be read; they are scored wrong when their task is resolved.",
		Columns: []analysis.Column{{Name: "task", Title: "Task"}, methodCol, {Name: "week", Title: "Week"},
			{Name: "status", Title: "Status", Doc: "task state: resolved, pending or void"},
			{Name: "answer", Title: "Answer", Doc: "the final answer as written, cut at 200 bytes"},
			{Name: "reason", Title: "Reason"}}}
	for ti, task := range b.in.Tasks {
		for s, sys := range b.in.Config.Systems {
			p := b.pred(ti, s)
			if p.Missing || p.Invalid == "" {
				continue
			}
			reason := p.Invalid
			if i := strings.Index(reason, ": "); i >= 0 && p.Answer != "" {
				reason = reason[:i] // the answer has its own column
			}
			t.AddRow(analysis.Text(task.ID), analysis.Text(sys.Name), analysis.Int(task.Week), analysis.Text(b.status[ti].String()),
				analysis.Text(clip(p.Answer, 200)), analysis.Text(reason))
		}
	}
	return t
}

const timeLayout = "2006-01-02T15:04:05Z07:00"

// week is the ground-truth check interval.
const week = 7 * 24 * time.Hour

// sensitivityTable rescores at every SensitivityScales multiple of the
// tolerances and compares each ranking with the 1x one.
func (b *board) sensitivityTable() *analysis.Table {
	t := &analysis.Table{Name: "tolerance_sensitivity", Title: "Tolerance sensitivity",
		Caption: "Every eps_k scaled from 0.5x to 2x (on top of tolerance_scale): accuracy per system, the ranking, and Kendall tau-b and Spearman rho of the accuracies against 1x.",
		Columns: []analysis.Column{{Name: "scale", Title: "Scale", Decimals: 2, Doc: "multiplier of every eps_k"},
			{Name: "kendall_tau_b", Title: "Kendall tau-b", Decimals: 3, Doc: "against the 1x accuracies"},
			{Name: "spearman_rho", Title: "Spearman rho", Decimals: 3, Doc: "against the 1x accuracies"},
			intColumn("moved", "Moved", "systems whose rank differs from 1x (equal accuracies share a rank)"),
			{Name: "ranking", Title: "Ranking", Doc: "best first; A = B: equal accuracies"}}}
	for _, sys := range b.in.Config.Systems {
		t.Columns = append(t.Columns, analysis.Column{Name: sys.Name, Unit: "%", Decimals: 1, Doc: "accuracy of " + sys.Name})
	}
	type run struct {
		acc     []float64
		defined []bool
		rank    []string       // names, best first
		ranks   []int          // competition ranks of rank
		rankOf  map[string]int // competition rank by name
	}
	do := func(o [][]int8) run {
		r := run{acc: make([]float64, b.nsys()), defined: make([]bool, b.nsys())}
		var idx []int
		for s := range o {
			c, n := b.tally(o[s], nil)
			if n > 0 {
				r.acc[s], r.defined[s] = 100*float64(c)/float64(n), true
				idx = append(idx, s)
			}
		}
		slices.SortStableFunc(idx, func(x, y int) int {
			if c := cmp.Compare(r.acc[y], r.acc[x]); c != 0 {
				return c
			}
			return strings.Compare(b.in.Config.Systems[x].Name, b.in.Config.Systems[y].Name)
		})
		var accs []float64
		for _, s := range idx {
			r.rank = append(r.rank, b.in.Config.Systems[s].Name)
			accs = append(accs, r.acc[s])
		}
		r.ranks = analysis.CompetitionRanks(accs)
		r.rankOf = map[string]int{}
		for i, name := range r.rank {
			r.rankOf[name] = r.ranks[i]
		}
		return r
	}
	base := do(b.out)
	for _, sc := range SensitivityScales {
		r := base
		if sc != 1 {
			r = do(b.outcomes(sc))
		}
		var x, y []float64
		for s := range r.acc {
			if r.defined[s] && base.defined[s] {
				x, y = append(x, base.acc[s]), append(y, r.acc[s])
			}
		}
		tau, rho := analysis.Undefined("fewer than 2 systems or constant"), analysis.Undefined("fewer than 2 systems or constant")
		if v, err := stats.KendallTauB(x, y); err == nil {
			tau = analysis.Number(v)
		}
		if v, err := stats.Spearman(x, y); err == nil {
			rho = analysis.Number(v)
		}
		moved := 0
		for _, name := range r.rank {
			moved += btoi(base.rankOf[name] != r.rankOf[name])
		}
		row := []analysis.Cell{analysis.Number(sc), tau, rho, analysis.Int(moved), analysis.Text(analysis.RankingText(r.rank, r.ranks))}
		for s := range r.acc {
			if r.defined[s] {
				row = append(row, analysis.Number(r.acc[s]))
			} else {
				row = append(row, analysis.Undefined("no scored task"))
			}
		}
		t.AddRow(row...)
	}
	return t
}

// tolerancesTable mirrors the published tolerance table from the one in
// use (scaled by tolerance_scale).
func (b *board) tolerancesTable() *analysis.Table {
	t := &analysis.Table{Name: "tolerances", Title: "Tolerances",
		Caption: "Relative-error tolerance eps_k of recurrent tasks: correct iff |(yhat - y) / y| < eps_k.",
		Columns: []analysis.Column{{Name: "kind", Title: "Kind", Doc: "unit (by unit type) or category (by indicator category; wins over unit)"},
			{Name: "applies_to", Title: "Applies to"},
			{Name: "epsilon", Title: "eps_k", Decimals: 3, Doc: "relative tolerance, scaled by tolerance_scale"},
			{Name: "key", Title: "Key", Doc: "the unit_type or category value tasks carry"},
			intColumn("tasks", "Tasks", "recurrent tasks using the row")}}
	for i, tl := range b.in.Tolerances {
		n := 0
		for _, task := range b.in.Tasks {
			n += btoi(task.Kind == Recurrent && task.tolRow == i)
		}
		t.AddRow(analysis.Text(tl.Kind), analysis.Text(tl.AppliesTo), analysis.Number(tl.Epsilon*b.opt.Scale), analysis.Text(tl.Key), analysis.Int(n))
	}
	return t
}

// details yields the drill-downs, by task then system, as they are asked
// for (see analysis.Result.LazyDetails): their outputs are read back from
// c's texts a task at a time.
func (b *board) details(c *collection) iter.Seq[analysis.Detail] {
	return func(yield func(analysis.Detail) bool) {
		for ti, task := range b.in.Tasks {
			outs := c.texts.Get(c.outputs[ti])
			question := ""
			if len(outs) > b.nsys() { // none when the texts failed, which their owner reports
				question = outs[b.nsys()]
			}
			for s, sys := range b.in.Config.Systems {
				p := b.pred(ti, s)
				sum, why := verdict(task, p, b.status[ti], b.opt, b.out[s][ti])
				out := ""
				if s < len(outs) {
					out = outs[s]
				}
				d := analysis.Detail{Task: task.ID, System: sys.Name, Question: question, Output: out, Score: sum,
					Verdicts: []analysis.Verdict{{Judge: "rule", Verdict: sum, Reasoning: why}}, Call: c.call(ti*b.nsys() + s)}
				if !yield(d) {
					return
				}
			}
		}
	}
}

// problems lists invalid answers and isolation findings, sorted.
func (b *board) problems() []string {
	var ps []string
	for ti, task := range b.in.Tasks {
		for s, sys := range b.in.Config.Systems {
			p := b.pred(ti, s)
			if p.Missing {
				continue
			}
			if p.Invalid == "" && !p.Flagged() {
				continue
			}
			at := "task " + task.ID + " system " + strconv.Quote(sys.Name) // as %q
			if p.Invalid != "" {
				ps = append(ps, "invalid prediction: "+at+": "+p.Invalid)
			}
			if p.Late {
				ps = append(ps, fmt.Sprintf("late prediction: %s: recorded %s after deadline %s", at, p.Recorded().Format(timeLayout), task.Deadline))
			}
			for _, e := range b.leaksOf(ti, s) {
				ps = append(ps, fmt.Sprintf("post-deadline evidence: %s: %s published %s after deadline %s", at, clip(e.URL, 200), e.Time.Format(timeLayout), task.Deadline))
			}
		}
		if task.Kind == Recurrent && b.status[ti] == Resolved && task.y == 0 && b.opt.ZeroRule == ZeroExclude {
			ps = append(ps, "zero ground truth excluded: task "+task.ID)
		}
	}
	slices.Sort(ps)
	return ps
}
