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
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// An analyzer computes the tables of a collection under one config.
type analyzer struct {
	c     *collection
	in    *Inputs
	cfg   *config
	names []string // product names
	np    int
	nr    []int // rubrics per query
	ls    *labelSet
	// problems starts as a copy of the collection's.
	problems []string

	base     *selection
	baseVote []votes
	all      uint64
	ranking  []int // baseline gold ranking (display order), product indices
	// baseItem is the baseline gold item pass rate and baseRank the
	// competition rank on it, by product; every rank correlation is
	// against baseItem.
	baseItem []float64
	baseRank []int
	tables   []*analysis.Table
	figures  *analysis.Table
}

func newAnalysis(c *collection, cfg *config) *analyzer {
	in := c.in
	a := &analyzer{c: c, in: in, cfg: cfg, np: len(in.Panel.Products), ls: &c.ls, problems: slices.Clone(c.problems)}
	for _, p := range in.Panel.Products {
		a.names = append(a.names, p.Name)
	}
	for _, rs := range in.Rubrics {
		a.nr = append(a.nr, len(rs))
	}
	a.all = uint64(1)<<a.np - 1
	if a.np == 64 {
		a.all = ^uint64(0)
	}
	return a
}

// result computes every table.
func (a *analyzer) result() *analysis.Result {
	pos := make([]int, len(a.cfg.judges))
	for i := range pos {
		pos[i] = i
	}
	a.baseVote = a.ls.tally(a.nr, pos, a.cfg.k)
	a.base = selectRubrics(a.baseVote, len(a.in.Queries), a.np, a.all, a.cfg.dist, a.cfg.minR, true)
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
		Benchmark:   Name,
		Title:       Benchmark{}.Title(),
		Tables:      a.tables,
		Headline:    "pass_rates",
		Ranking:     namesOf(a.ranking, a.names),
		Scores:      scores,
		LazyDetails: a.eachDetail,
		Synthetic:   a.c.synthetic,
		Missing:     a.c.missing,
	}
	slices.Sort(a.problems)
	res.Problems = slices.Compact(a.problems)
	if res.Problems == nil {
		res.Problems = []string{}
	}
	return res
}

// allQueries lists every query index.
func (a *analyzer) allQueries() []int {
	qs := make([]int, len(a.in.Queries))
	for i := range qs {
		qs[i] = i
	}
	return qs
}

// ranksInOrder lists the ranks (by product) of the products in order.
func (a *analyzer) ranksInOrder(order, rank []int) []int {
	out := make([]int, len(order))
	for i, p := range order {
		out[i] = rank[p]
	}
	return out
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

// bootRates computes item and macro pass rates of every product over the
// queries qs, with bootstrap intervals resampling them when ci is set.
// Every product and both rates see the same resamples (same seed), drawn
// once: the intervals are those stats.Bootstrap gives statistic by
// statistic.
func (a *analyzer) bootRates(rs *rateSet, qs []int, ci bool) (itemCI, macroCI []rateCI) {
	item, mac, ok := rs.rates(qs, a.np)
	itemCI, macroCI = make([]rateCI, a.np), make([]rateCI, a.np)
	for p := range a.np {
		itemCI[p].v, macroCI[p].v = item[p], mac[p]
		itemCI[p].empty, macroCI[p].empty = !ok, !ok
	}
	if !ok || !ci {
		return itemCI, macroCI
	}
	itemVals, macroVals := make([][]float64, a.np), make([][]float64, a.np)
	var drawn []int
	_, _, err := stats.Bootstrap(len(qs), a.cfg.reps, a.cfg.seed, level, func(idx []int) float64 {
		drawn = drawn[:0]
		for _, i := range idx {
			drawn = append(drawn, qs[i])
		}
		// an empty draw is NaN for every product: Bootstrap would skip it
		if item, mac, ok := rs.rates(drawn, a.np); ok {
			for p := range a.np {
				itemVals[p] = append(itemVals[p], item[p])
				macroVals[p] = append(macroVals[p], mac[p])
			}
		}
		return 0 // the intervals are taken from the values below
	})
	for p := range a.np {
		itemCI[p].lo, itemCI[p].hi, itemCI[p].err = interval(itemVals[p], err)
		macroCI[p].lo, macroCI[p].hi, macroCI[p].err = interval(macroVals[p], err)
	}
	return itemCI, macroCI
}

// level is the confidence level of the intervals. A variable, not a
// constant, so that (1 - level) / 2 rounds as in stats.Bootstrap.
var level = 0.95

// interval is the 95% percentile interval of the bootstrap values vals,
// as stats.Bootstrap computes it; err is Bootstrap's own error.
func interval(vals []float64, err error) (lo, hi float64, _ error) {
	if err != nil {
		return 0, 0, err
	}
	return stats.Percentiles(vals, level)
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
	// The consistency-passed rates count every query with a
	// consistency-passed rubric, the gold rates the scored queries (at
	// least min_rubrics gold rubrics).
	sets := []struct {
		name      string
		rs        *rateSet
		qs        []int
		macro, ci bool
	}{
		{"consistency_item", a.base.cons, a.allQueries(), false, false},
		{"consistency_macro", a.base.cons, a.allQueries(), true, false},
		{"gold_item", a.base.gold, a.base.scored, false, true},
		{"gold_macro", a.base.gold, a.base.scored, true, true},
	}
	cols := []analysis.Column{
		{Name: "product"},
		{Name: "rank", Doc: "rank by gold item pass rate; equal rates share a rank, printed =2 (rows of a shared rank in gold macro, then name order)"},
		{Name: "tier", Doc: "tie group: products not resolved from the tier's best by a paired sign-flip test over queries on gold rubrics (p < 0.05) share its tier"},
	}
	vals := make([][]rateCI, len(sets))
	for i := 0; i < len(sets); i += 2 { // an item set, then its macro twin
		vals[i], vals[i+1] = a.bootRates(sets[i].rs, sets[i].qs, sets[i].ci)
	}
	for _, s := range sets {
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
	a.baseItem = gi
	a.baseRank = ranks(a.ranking, gi)
	if len(a.base.scored) == 0 { // no rates: positions by name, no ties
		a.baseRank = make([]int, a.np)
		for i, p := range a.ranking {
			a.baseRank[p] = i + 1
		}
	}
	rankCells := analysis.RankCells(a.ranksInOrder(a.ranking, a.baseRank))
	// Tiers are the tie groups of the paired tests over queries, in
	// ranking order (docs/finresearchbench2.md).
	bd := a.board()
	cols = append(cols, bd.Columns()...)
	cols = append(cols, uncertainty.ProportionColumns(2, false)...)
	t := a.newTable("pass_rates", "Product pass rates",
		fmt.Sprintf("Item-level and query-macro pass rates (%%) on the consistency-passed and gold rubrics, with bootstrap 95%% intervals over %d resamples of queries (seed %d).", a.cfg.reps, a.cfg.seed),
		cols)
	t.Charts = []analysis.Chart{{ID: "frb2_pass_rates", Kind: analysis.Bar, Title: "Gold item pass rate with 95% interval",
		X: "product", Y: []string{"gold_item"}, Low: "gold_item_low", High: "gold_item_high", XName: "product", YName: "pass rate (%)"}}
	scores := map[string]float64{}
	anyGold := len(a.base.scored) > 0
	for i, p := range a.ranking {
		row := []analysis.Cell{analysis.Text(a.names[p]), rankCells[i], bd.Tier(a.names[p])}
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
		row = append(row, bd.Cells(a.names[p])...)
		pass, n := a.goldPasses(p)
		row = append(row, uncertainty.ProportionCells(pass, n, false)...)
		t.AddRow(row...)
		if anyGold {
			scores[a.names[p]] = gi[p]
		}
	}
	if !anyGold {
		t.Notes = append(t.Notes, "No gold rubric survives the filters under these settings: pass rates are undefined and the ranking is by name.")
	}
	var gaps []string
	for i := 1; i < len(a.ranking) && bd.Groups != nil; i++ {
		if bd.Groups[i] == bd.Groups[i-1] {
			gaps = append(gaps, a.names[a.ranking[i-1]]+" / "+a.names[a.ranking[i]])
		}
	}
	if len(gaps) > 0 {
		t.Notes = append(t.Notes, "Adjacent products in one tier (not resolved by the paired test): "+strings.Join(gaps, "; ")+".")
	}
	t.Notes = append(t.Notes, bd.Notes()...)
	t.Notes = append(t.Notes, "Wilson intervals treat the gold rubrics as independent; the cluster interval over queries is the one to read. The paper states no interval convention.")
	a.tables = append(a.tables, t, bd.PairTable(Name, "Gold item pass rate: paired comparisons of adjacent products"))
	a.tables = append(a.tables, bd.RequestedTable(Name)...)
	return scores
}
