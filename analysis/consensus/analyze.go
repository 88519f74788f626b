package consensus

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/results"
)

// An analyzer holds the parsed labels and computes the tables.
type analyzer struct {
	in    *Inputs
	cfg   *config
	names []string // product names
	np    int
	nr    []int // rubrics per query
	ls    labelSet
	// reruns[slot without run][run] are the stability labels (run 0 is the
	// main run's, filled on demand).
	reruns    map[slot][][]int8
	problems  []string
	missing   int
	synthetic bool

	base     *selection
	baseVote []votes
	all      uint64
	ranking  []int // baseline gold ranking, product indices
	tables   []*analysis.Table
	figures  *analysis.Table
}

func newAnalysis(in *Inputs, cfg *config) *analyzer {
	a := &analyzer{in: in, cfg: cfg, np: len(in.Panel.Products), reruns: map[slot][][]int8{}}
	for _, p := range in.Panel.Products {
		a.names = append(a.names, p.Name)
	}
	for _, rs := range in.Rubrics {
		a.nr = append(a.nr, len(rs))
	}
	a.ls = labelSet{np: a.np, lab: make([][][]int8, len(cfg.judges))}
	for j := range cfg.judges {
		a.ls.lab[j] = make([][]int8, len(in.Queries))
		for q, n := range a.nr {
			a.ls.lab[j][q] = make([]int8, n*a.np)
		}
	}
	a.all = uint64(1)<<a.np - 1
	if a.np == 64 {
		a.all = ^uint64(0)
	}
	return a
}

// read parses every reply into labels, noting problems.
func (a *analyzer) read(calls []results.Call, slots []slot, replies []results.Reply) {
	ids := make([][]string, len(a.in.Queries))
	for q, rs := range a.in.Rubrics {
		for _, r := range rs {
			ids[q] = append(ids[q], r.ID)
		}
	}
	runs := 0
	if a.in.Panel.Stability != nil {
		runs = a.in.Panel.Stability.Runs
	}
	// Parse in parallel; each reply's labels and problems go to its own
	// slot, so the result does not depend on scheduling.
	labels := make([][]int8, len(slots))
	probs := make([][]string, len(slots))
	parallel(len(slots), func(i int) {
		if replies[i].Err == nil {
			labels[i], probs[i] = ParseVerdicts(replies[i].Text, ids[slots[i].q])
		}
	})
	missingCalls := 0
	for i, sl := range slots {
		rep := replies[i]
		a.synthetic = a.synthetic || rep.Synthetic()
		labs := labels[i]
		if rep.Err != nil {
			missingCalls++
			labs = make([]int8, len(ids[sl.q]))
			for k := range labs {
				labs[k] = missing
			}
		}
		for _, pr := range probs[i] {
			a.problems = append(a.problems, fmt.Sprintf("judge %s on %s: %s", calls[i].Label.Name, calls[i].Label.Task, pr))
		}
		if sl.run == 0 {
			dst := a.ls.lab[sl.j][sl.q]
			for r, l := range labs {
				dst[r*a.np+sl.p] = l
			}
			continue
		}
		key := slot{sl.j, sl.q, sl.p, 0}
		if a.reruns[key] == nil {
			a.reruns[key] = make([][]int8, runs)
		}
		a.reruns[key][sl.run] = labs
	}
	a.missing = missingCalls
	if missingCalls > 0 {
		a.problems = append(a.problems, fmt.Sprintf("%d of %d judge calls had no reply; their rubrics count as invalid", missingCalls, len(calls)))
	}
}

// result computes every table.
func (a *analyzer) result() *analysis.Result {
	pos := make([]int, len(a.cfg.judges))
	for i := range pos {
		pos[i] = i
	}
	a.baseVote = a.ls.tally(a.nr, pos, a.cfg.k)
	a.base = selectRubrics(a.baseVote, len(a.in.Queries), a.np, a.all, a.cfg.dist, a.cfg.minR)
	a.figures = a.newTable("figures", "Figures", "The figures the paper states in its text, computed from these inputs.",
		[]analysis.Column{{Name: "figure"}, {Name: "value", Decimals: 4}})

	a.addFiltering()
	scores := a.addPassRates()
	a.addStability()
	a.addValidation()
	lojo := a.addLeaveOneOut()
	a.addSplits()
	a.addAblation()
	a.addSelfPreference(lojo)
	a.tables = append(a.tables, a.figures)

	res := &analysis.Result{
		Benchmark: Name,
		Title:     Benchmark{}.Title(),
		Tables:    a.tables,
		Headline:  "pass_rates",
		Ranking:   namesOf(a.ranking, a.names),
		Scores:    scores,
		Details:   a.details(),
		Synthetic: a.synthetic,
		Missing:   a.missing,
	}
	slices.Sort(a.problems)
	res.Problems = slices.Compact(a.problems)
	if res.Problems == nil {
		res.Problems = []string{}
	}
	return res
}

func (a *analyzer) newTable(name, title, caption string, cols []analysis.Column) *analysis.Table {
	return &analysis.Table{Benchmark: Name, Name: name, Title: title, Caption: caption, Columns: cols}
}

func (a *analyzer) figure(name string, c analysis.Cell) {
	a.figures.AddRow(analysis.Text(name), c)
}

func pct(num, den int) analysis.Cell {
	if den == 0 {
		return analysis.Undefined("no items")
	}
	return analysis.Number(100 * float64(num) / float64(den))
}

func num(x float64, err error) analysis.Cell {
	if err != nil {
		return analysis.Undefined(err.Error())
	}
	return analysis.Number(x)
}

// addFiltering builds the filtering table: how many rubrics each stage keeps.
func (a *analyzer) addFiltering() {
	t := a.newTable("filtering", "Rubric filtering",
		"Candidate rubrics, those passing the consistency filter and those also passing the distinguishability filter (the gold rubrics); rates in percent; per-query counts over all queries.",
		[]analysis.Column{
			{Name: "stage"},
			{Name: "count", Doc: "rubrics at this stage"},
			{Name: "stage_rate", Unit: "%", Decimals: 2, Doc: "share of the previous stage's rubrics kept"},
			{Name: "overall_rate", Unit: "%", Decimals: 2, Doc: "share of the candidates kept"},
			{Name: "per_query_mean", Decimals: 2},
			{Name: "per_query_min"},
			{Name: "per_query_max"},
			{Name: "always_yes", Doc: "rubrics rejected because every report's majority label is yes"},
			{Name: "always_no", Doc: "rubrics rejected because every report's majority label is no"},
		})
	nq := len(a.in.Queries)
	cand, cons, gold := make([]float64, nq), make([]float64, nq), make([]float64, nq)
	var ay, an, few int
	for i, f := range a.base.fates {
		q := a.baseVote[i].query
		cand[q]++
		if f != fateInconsistent {
			cons[q]++
		}
		switch f {
		case fateGold:
			gold[q]++
		case fateAlwaysYes:
			ay++
		case fateAlwaysNo:
			an++
		case fateTooFew:
			few++
		}
	}
	sum := func(x []float64) int {
		s := 0.0
		for _, v := range x {
			s += v
		}
		return int(s)
	}
	nc, ncons, ngold := sum(cand), sum(cons), sum(gold)
	row := func(stage string, n, prev int, per []float64, extra ...analysis.Cell) {
		sr := analysis.Undefined("first stage")
		if prev >= 0 {
			sr = pct(n, prev)
		}
		cells := []analysis.Cell{analysis.Text(stage), analysis.Int(n), sr, pct(n, nc),
			analysis.Number(stats.Mean(per)), analysis.Int(int(slices.Min(per))), analysis.Int(int(slices.Max(per)))}
		if len(extra) == 0 {
			extra = []analysis.Cell{analysis.Undefined("not a filter outcome"), analysis.Undefined("not a filter outcome")}
		}
		t.AddRow(append(cells, extra...)...)
	}
	row("candidate", nc, -1, cand)
	row("consistency", ncons, nc, cons)
	row("distinguishability", ngold, ncons, gold, analysis.Int(ay), analysis.Int(an))
	t.Notes = append(t.Notes, "Settings: "+a.cfg.label+".")
	if few > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d consistency-passed rubrics had reports on both sides but fewer than the distinguishability rule requires.", few))
	}
	if excl := nq - len(a.base.scored); excl > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d queries have fewer than %d gold rubrics and are left out of the pass rates.", excl, a.cfg.minR))
	}
	a.tables = append(a.tables, t)

	a.figure("queries", analysis.Int(nq))
	a.figure("reports", analysis.Int(nq*a.np))
	a.figure("products", analysis.Int(a.np))
	a.figure("judges", analysis.Int(len(a.cfg.judges)))
	a.figure("rubrics_per_query_candidate_mean", analysis.Number(stats.Mean(cand)))
	a.figure("rubrics_per_query_consistency_mean", analysis.Number(stats.Mean(cons)))
	a.figure("rubrics_per_query_gold_mean", analysis.Number(stats.Mean(gold)))
	a.figure("rubrics_per_query_gold_min", analysis.Int(int(slices.Min(gold))))
	a.figure("rubrics_per_query_gold_max", analysis.Int(int(slices.Max(gold))))
	a.figure("failed_distinguishability_always_yes", analysis.Int(ay))
	a.figure("failed_distinguishability_always_no", analysis.Int(an))
}

// A rateCI is one product's pass rate with its bootstrap interval.
type rateCI struct {
	v, lo, hi float64
	empty     bool  // the rubric set is empty: no rate
	err       error // the interval is undefined
}

// bootRates computes item or macro pass rates of every product over the
// scored queries, with bootstrap intervals resampling queries when ci is
// set. Every product sees the same resamples (same seed).
func (a *analyzer) bootRates(rs *rateSet, macro, ci bool) []rateCI {
	qs := a.base.scored
	item, mac, ok := rs.rates(qs, a.np)
	out := make([]rateCI, a.np)
	parallel(a.np, func(p int) {
		out[p].v = item[p]
		if macro {
			out[p].v = mac[p]
		}
		if !ok {
			out[p].empty = true
			return
		}
		if !ci {
			return
		}
		stat := func(idx []int) float64 {
			var s, n float64
			for _, i := range idx {
				q := qs[i]
				if rs.n[q] == 0 {
					continue
				}
				if macro {
					s += float64(rs.pass[q][p]) / float64(rs.n[q])
					n++
				} else {
					s += float64(rs.pass[q][p])
					n += float64(rs.n[q])
				}
			}
			return 100 * s / n // NaN when empty: Bootstrap skips it
		}
		out[p].lo, out[p].hi, out[p].err = stats.Bootstrap(len(qs), a.cfg.reps, a.cfg.seed, 0.95, stat)
	})
	return out
}

// parallel calls fn(0) .. fn(n-1) on up to GOMAXPROCS goroutines. Each
// call must write only its own results.
func parallel(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// addPassRates builds pass_rates and sets the baseline ranking.
func (a *analyzer) addPassRates() map[string]float64 {
	// Intervals for the gold rates only: the consistency-passed rates are
	// context (see the ablation), and the headline stays readable.
	sets := []struct {
		name      string
		rs        *rateSet
		macro, ci bool
	}{
		{"consistency_item", a.base.cons, false, false},
		{"consistency_macro", a.base.cons, true, false},
		{"gold_item", a.base.gold, false, true},
		{"gold_macro", a.base.gold, true, true},
	}
	cols := []analysis.Column{
		{Name: "product"},
		{Name: "rank", Doc: "position by gold item pass rate (ties: gold macro, then name)"},
		{Name: "tier", Doc: "products whose gold item 95% intervals overlap their neighbour's share a tier"},
	}
	vals := make([][]rateCI, len(sets))
	for i, s := range sets {
		vals[i] = a.bootRates(s.rs, s.macro, s.ci)
		cols = append(cols, analysis.Column{Name: s.name, Unit: "%", Decimals: 2, Better: analysis.Higher})
		if s.ci {
			cols = append(cols,
				analysis.Column{Name: s.name + "_low", Unit: "%", Decimals: 2, Doc: "bootstrap 95% interval, lower end"},
				analysis.Column{Name: s.name + "_high", Unit: "%", Decimals: 2, Doc: "bootstrap 95% interval, upper end"})
		}
	}
	gi, gm := make([]float64, a.np), make([]float64, a.np)
	for p := range a.np {
		gi[p], gm[p] = vals[2][p].v, vals[3][p].v
	}
	a.ranking = rank(gi, gm, a.names)
	lo, hi := make([]float64, a.np), make([]float64, a.np)
	tiersOK := true
	for i, p := range a.ranking {
		lo[i], hi[i] = vals[2][p].lo, vals[2][p].hi
		tiersOK = tiersOK && vals[2][p].err == nil && !vals[2][p].empty
	}
	tiers := stats.Tiers(lo, hi)
	t := a.newTable("pass_rates", "Product pass rates",
		fmt.Sprintf("Item-level and query-macro pass rates (%%) on the consistency-passed and gold rubrics, with bootstrap 95%% intervals over %d resamples of queries (seed %d).", a.cfg.reps, a.cfg.seed),
		cols)
	t.Charts = []analysis.Chart{{ID: "frb2_pass_rates", Kind: analysis.Bar, Title: "Gold item pass rate with 95% interval",
		X: "product", Y: []string{"gold_item"}, Low: "gold_item_low", High: "gold_item_high", XName: "product", YName: "pass rate (%)"}}
	scores := map[string]float64{}
	anyGold := len(a.base.scored) > 0
	for i, p := range a.ranking {
		tier := analysis.Int(tiers[i])
		if !tiersOK {
			tier = analysis.Undefined("no interval")
		}
		row := []analysis.Cell{analysis.Text(a.names[p]), analysis.Int(i + 1), tier}
		for s, set := range sets {
			v := vals[s][p]
			val, lo, hi := analysis.Number(v.v), analysis.Number(v.lo), analysis.Number(v.hi)
			switch {
			case v.empty:
				val, lo, hi = analysis.Undefined("no rubrics"), analysis.Undefined("no rubrics"), analysis.Undefined("no rubrics")
			case v.err != nil:
				lo, hi = analysis.Undefined(v.err.Error()), analysis.Undefined(v.err.Error())
			}
			row = append(row, val)
			if set.ci {
				row = append(row, lo, hi)
			}
		}
		t.AddRow(row...)
		if anyGold {
			scores[a.names[p]] = gi[p]
		}
	}
	if !anyGold {
		t.Notes = append(t.Notes, "No gold rubric survives the filters under these settings: pass rates are undefined and the ranking is by name.")
	}
	var gaps []string
	for i := 1; i < len(a.ranking); i++ {
		if tiersOK && tiers[i] == tiers[i-1] {
			gaps = append(gaps, a.names[a.ranking[i-1]]+" / "+a.names[a.ranking[i]])
		}
	}
	if len(gaps) > 0 {
		t.Notes = append(t.Notes, "Adjacent gaps within noise (overlapping intervals): "+strings.Join(gaps, "; ")+".")
	}
	a.tables = append(a.tables, t)
	return scores
}
