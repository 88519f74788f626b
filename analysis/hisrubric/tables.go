package hisrubric

import (
	"fmt"
	"iter"
	"slices"
	"sort"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// Bootstrap settings of the accuracy confidence intervals.
const (
	bootReps  = 1000 // resamples of reports
	bootSeed  = 1    // fixed: intervals are part of the reproducible output
	bootLevel = 0.95
)

// maxDisagreements caps the rows of the numeric_disagreements table.
const maxDisagreements = 300

// maxOutput caps a report's text in a drill-down.
const maxOutput = 64 << 10

// A run scores one collection under one set of options.
type run struct {
	*collection
	opt *options
}

// numeric is the numeric comparison of item i of rep under the
// tolerance: "correct", "incorrect", or "" when not comparable.
func (r *run) numeric(rep *report, i int) string {
	k := r.numIdx[i]
	if k < 0 {
		return ""
	}
	return compare(r.quantity(rep, i), r.truthQ[rep.ci*r.nNum+k], r.opt.tol)
}

// grade is item i's score under the options: the numeric comparison
// replaces the judge's verdict on accuracy items when asked; numeric is
// its verdict then ("correct", "incorrect"), else "".
func (r *run) grade(rep *report, i int) (score float64, numeric string) {
	if r.opt.numeric && rep.marks[i].judge() != notJudged {
		if n := r.numeric(rep, i); n != "" {
			if n == "correct" {
				return 1, n
			}
			return 0, n
		}
	}
	return r.judgeScore(rep, i), ""
}

// A grading is what an item's score depends on besides the report: the
// numeric comparison and its tolerance, when it replaces the judge.
type grading struct {
	numeric bool
	tol     Tolerance
}

// itemScores returns the score of every item of rep under the options
// (grade's), which the caller must not change: under the judge's
// grading, read from the collection's scores; under another, graded
// once per report and grading.
func (r *run) itemScores(rep *report) []float64 {
	if !r.opt.numeric {
		x := make([]float64, len(r.in.Items))
		for i := range x {
			x[i] = r.judgeScore(rep, i)
		}
		return x
	}
	g := grading{numeric: true, tol: r.opt.tol}
	c := r.collection
	ni := len(r.in.Items)
	c.gradesMu.Lock()
	defer c.gradesMu.Unlock()
	if c.grades == nil {
		c.grades = map[grading]*grades{}
	}
	gs := c.grades[g]
	if gs == nil {
		gs = &grades{all: make([]float64, len(c.reports)*ni), done: make([]bool, len(c.reports))}
		c.grades[g] = gs
	}
	x := gs.all[rep.n*ni : (rep.n+1)*ni : (rep.n+1)*ni]
	if !gs.done[rep.n] {
		for i := range x {
			x[i], _ = r.grade(rep, i)
		}
		gs.done[rep.n] = true
	}
	return x
}

// scores of one complete report, in points 0-100.
type scores struct {
	acc float64
	cap []float64 // by capability, in Capabilities order
	sec []float64 // by section, in structure order
}

func (r *run) score(rep *report) scores {
	nSec := len(r.in.Structure.Sections)
	s := scores{cap: make([]float64, len(Capabilities)), sec: make([]float64, nSec)}
	// Sums of marks earned and full marks: overall, by capability and by
	// section, in item order.
	var num, den float64
	capNum, capDen := make([]float64, len(Capabilities)), make([]float64, len(Capabilities))
	secNum, secDen := make([]float64, nSec), make([]float64, nSec)
	for i, score := range r.itemScores(rep) {
		w := r.opt.weights[r.in.Items[i].Capability]
		num += w * score
		den += w
		if c := r.itemCap[i]; c >= 0 {
			capNum[c] += w * score
			capDen[c] += w
		}
		if k := r.itemSec[i]; k >= 0 {
			secNum[k] += w * score
			secDen[k] += w
		}
	}
	pct := func(num, den float64) float64 {
		if den == 0 {
			return 0
		}
		return 100 * num / den
	}
	s.acc = pct(num, den)
	for c := range Capabilities {
		s.cap[c] = pct(capNum[c], capDen[c])
	}
	for k := range s.sec {
		// Capped at 100 as in the paper (Figure 6); with marks over the
		// section's own maximum the cap never binds.
		s.sec[k] = min(pct(secNum[k], secDen[k]), 100)
	}
	return s
}

// structureScore is a report's structure score in [-1, 1] (normally 0 to 1).
func (r *run) structureScore(rep *report) float64 {
	if r.opt.fractional {
		return rep.check.Fraction / float64(rep.check.Max)
	}
	return rep.check.Score / float64(rep.check.Max)
}

func (r *run) result() *analysis.Result {
	in := r.in
	res := &analysis.Result{Benchmark: Name, Title: "FinDeepResearch", Headline: "accuracy", Synthetic: r.synth, Missing: r.missing, Scores: map[string]float64{}}
	nSys := len(in.Config.Systems)
	per := make([][]*report, nSys) // complete reports per system
	sc := map[*report]scores{}
	for _, rep := range r.reports {
		if rep.complete {
			per[rep.sys] = append(per[rep.sys], rep)
			sc[rep] = r.score(rep)
		}
	}
	markets := r.markets()
	meanBy := func(reps []*report, f func(*report) float64, keep func(*report) bool) (float64, int) {
		var xs []float64
		for _, rep := range reps {
			if keep == nil || keep(rep) {
				xs = append(xs, f(rep))
			}
		}
		if len(xs) == 0 {
			return 0, 0
		}
		return stats.Mean(xs), len(xs)
	}
	acc := func(rep *report) float64 { return sc[rep].acc }
	overall := make([]float64, nSys)
	defined := make([]bool, nSys)
	for si := range in.Config.Systems {
		reps := per[si]
		if r.opt.byMarket {
			var ms []float64
			for _, m := range markets {
				if v, n := meanBy(reps, acc, func(rep *report) bool { return rep.company.Market == m }); n > 0 {
					ms = append(ms, v)
				}
			}
			if len(ms) > 0 {
				overall[si], defined[si] = stats.Mean(ms), true
			}
		} else if v, n := meanBy(reps, acc, nil); n > 0 {
			overall[si], defined[si] = v, true
		}
	}
	num := func(v float64, ok bool) analysis.Cell {
		if !ok {
			return analysis.Undefined("no scored reports")
		}
		return analysis.Number(v)
	}
	numN := func(v float64, n int) analysis.Cell { return num(v, n > 0) }
	pctCol := func(name, title, doc string) analysis.Column {
		return analysis.Column{Name: name, Title: title, Unit: "pts", Decimals: 1, Better: analysis.Higher, Doc: doc}
	}
	sysCol := analysis.Column{Name: "system", Doc: "evaluated system"}
	groupCol := analysis.Column{Name: "group", Doc: "thinking, thinking+search or deep-research"}

	// accuracy
	accT := &analysis.Table{Benchmark: Name, Name: "accuracy", Title: "Information precision: accuracy score",
		Caption: "Accuracy score (0-100): marks earned over full marks per report, averaged over each system's scored reports, with a 95% bootstrap interval over reports (1000 resamples), and the clustered statistics of the accuracy over companies.",
		Columns: []analysis.Column{sysCol, groupCol,
			pctCol("accuracy", "Accuracy", "mean accuracy score"),
			{Name: "ci_low", Title: "CI low", Decimals: 1, Doc: "2.5% bootstrap quantile"},
			{Name: "ci_high", Title: "CI high", Decimals: 1, Doc: "97.5% bootstrap quantile"},
			{Name: "tier", Decimals: 0, Doc: "tie group: systems not resolved from the tier's best by a paired sign-flip test over companies (p < 0.05) share its tier"},
			{Name: "structure", Title: "Structure", Decimals: 3, Better: analysis.Higher, Doc: "mean structure score (0-1)"},
			{Name: "reports", Decimals: 0, Doc: "scored reports"},
			{Name: "unscored", Decimals: 0, Doc: "reports missing or not fully graded"},
		},
		Charts: []analysis.Chart{{ID: "accuracy_bars", Kind: analysis.Bar, Title: "Accuracy score with 95% interval", X: "system", Y: []string{"accuracy"}, Low: "ci_low", High: "ci_high", YName: "accuracy score"}},
	}
	lo, hi := make([]float64, nSys), make([]float64, nSys)
	hasCI := make([]bool, nSys)
	for si := range in.Config.Systems {
		reps := per[si]
		if len(reps) == 0 {
			continue
		}
		accs := make([]float64, len(reps))
		for i, rep := range reps {
			accs[i] = sc[rep].acc
		}
		l, h, err := stats.Bootstrap(len(reps), bootReps, bootSeed, bootLevel, func(idx []int) float64 {
			s := 0.0
			for _, i := range idx {
				s += accs[i]
			}
			return s / float64(len(idx))
		})
		if err == nil {
			lo[si], hi[si], hasCI[si] = l, h, true
		}
	}
	for si, s := range in.Config.Systems {
		if defined[si] {
			res.Scores[s.Name] = overall[si]
		}
	}
	res.Ranking = sortedByScore(res.Scores)
	// Tiers are the tie groups of the paired tests over companies, in
	// ranking order (docs/findeepresearch.md).
	bd := r.board(res.Ranking, per)
	accT.Columns = append(accT.Columns, bd.Columns()...)
	for si, s := range in.Config.Systems {
		reps := per[si]
		ci := func(v float64) analysis.Cell {
			if !hasCI[si] {
				return analysis.Undefined("no interval")
			}
			return analysis.Number(v)
		}
		tier := bd.Tier(s.Name)
		// Structure needs only the report, not the judge: all reports count.
		var xs []float64
		for _, rep := range r.reports {
			if rep.sys == si && rep.present {
				xs = append(xs, r.structureScore(rep))
			}
		}
		stCell := analysis.Undefined("no reports")
		if len(xs) > 0 {
			stCell = analysis.Number(stats.Mean(xs))
		}
		row := []analysis.Cell{analysis.Text(s.Name), analysis.Text(s.Group), num(overall[si], defined[si]), ci(lo[si]), ci(hi[si]), tier,
			stCell, analysis.Int(len(reps)), analysis.Int(len(in.Companies) - len(reps))}
		accT.AddRow(append(row, bd.Cells(s.Name)...)...)
	}
	accT.Notes = append(accT.Notes, bd.Notes()...)
	if r.opt.byMarket {
		accT.Notes = append(accT.Notes, "A system's accuracy is the mean of its market means (knob overall=markets); the clustered statistics, tiers and paired comparisons are of the mean over companies.")
	}

	// markets
	mCols := []analysis.Column{{Name: "method", Doc: "evaluated system"}, groupCol}
	for _, m := range markets {
		mCols = append(mCols, pctCol(m, m, "mean accuracy score over the market's companies"))
	}
	mCols = append(mCols, pctCol("overall", "Overall", "the system's accuracy score"))
	mT := &analysis.Table{Benchmark: Name, Name: "markets", Title: "Accuracy score by market", Columns: mCols,
		Caption: "Normalised accuracy score (0-100) per financial market; best bold, second underlined.",
		Charts:  []analysis.Chart{{ID: "market_heatmap", Kind: analysis.Heatmap, Title: "Accuracy score: system x market", X: "method", Y: markets, XName: "system", YName: "market"}},
	}
	for si, s := range in.Config.Systems {
		row := []analysis.Cell{analysis.Text(s.Name), analysis.Text(s.Group)}
		for _, m := range markets {
			row = append(row, numN(meanBy(per[si], acc, func(rep *report) bool { return rep.company.Market == m })))
		}
		mT.AddRow(append(row, num(overall[si], defined[si]))...)
	}

	// languages and industries
	byAttr := func(name, title, plural string, keys []string, attr func(*Company) string) *analysis.Table {
		cols := []analysis.Column{sysCol}
		for _, k := range keys {
			cols = append(cols, pctCol(k, k, "mean accuracy score over the "+name+"'s companies"))
		}
		t := &analysis.Table{Benchmark: Name, Name: plural, Title: "Accuracy score by " + title, Columns: cols,
			Caption: "Accuracy score (0-100) by " + title + "."}
		for si, s := range in.Config.Systems {
			row := []analysis.Cell{analysis.Text(s.Name)}
			for _, k := range keys {
				row = append(row, numN(meanBy(per[si], acc, func(rep *report) bool { return attr(rep.company) == k })))
			}
			t.AddRow(row...)
		}
		return t
	}
	langs := r.present(func(c *Company) string { return c.Language }, Languages)
	inds := r.present(func(c *Company) string { return c.Industry }, nil)

	// capabilities and sections
	capCols := []analysis.Column{sysCol}
	for _, c := range Capabilities {
		capCols = append(capCols, pctCol(string(c), strings.ToUpper(string(c)[:1])+string(c)[1:], "marks earned over full marks of the capability's items"))
	}
	capT := &analysis.Table{Benchmark: Name, Name: "capabilities", Title: "Accuracy score by capability", Columns: capCols,
		Caption: "Accuracy score (0-100) normalised per capability.",
		Charts:  []analysis.Chart{{ID: "capability_bars", Kind: analysis.Bar, Title: "Accuracy score by capability", X: "system", Y: capNames(), YName: "accuracy score"}}}
	secCols := []analysis.Column{sysCol}
	var secNames []string
	for _, sec := range in.Structure.Sections {
		n := "section_" + sec.ID
		secNames = append(secNames, n)
		secCols = append(secCols, pctCol(n, "S"+sec.ID+" "+sec.Title, "marks earned over full marks of the section's items, capped at 100"))
	}
	secT := &analysis.Table{Benchmark: Name, Name: "sections", Title: "Accuracy score by section", Columns: secCols,
		Caption: "Accuracy score (0-100) normalised per section, capped at 100.",
		Charts:  []analysis.Chart{{ID: "section_bars", Kind: analysis.Bar, Title: "Accuracy score by section", X: "system", Y: secNames, YName: "accuracy score"}}}
	for si, s := range in.Config.Systems {
		row := []analysis.Cell{analysis.Text(s.Name)}
		for c := range Capabilities {
			row = append(row, numN(meanBy(per[si], func(rep *report) float64 { return sc[rep].cap[c] }, nil)))
		}
		capT.AddRow(row...)
		row = []analysis.Cell{analysis.Text(s.Name)}
		for k := range in.Structure.Sections {
			row = append(row, numN(meanBy(per[si], func(rep *report) float64 { return sc[rep].sec[k] }, nil)))
		}
		secT.AddRow(row...)
	}

	res.Tables = []*analysis.Table{accT, bd.PairTable(Name, "Accuracy: paired comparisons of adjacent systems"), mT, r.structureScores(), capT, secT,
		byAttr("language", "language", "languages", langs, func(c *Company) string { return c.Language }),
		byAttr("industry", "industry", "industries", inds, func(c *Company) string { return c.Industry }),
		r.headline(accT, capT, secT), r.structureTable(), r.deductions()}
	res.Tables = append(res.Tables, r.numericTables()...)
	res.Tables = append(res.Tables, bd.RequestedTable(Name)...)
	res.LazyDetails = r.details(sc)
	res.Problems = slices.Clone(r.problems)
	return res
}

func capNames() []string {
	var out []string
	for _, c := range Capabilities {
		out = append(out, string(c))
	}
	return out
}

// markets lists the markets of the companies: the paper's order first,
// then others sorted.
func (r *run) markets() []string {
	return r.present(func(c *Company) string { return c.Market }, Markets)
}

// present lists the values of attr over the companies, those in order
// first (in that order), then the rest sorted.
func (r *run) present(attr func(*Company) string, order []string) []string {
	seen := map[string]bool{}
	for i := range r.in.Companies {
		seen[attr(&r.in.Companies[i])] = true
	}
	var out []string
	for _, x := range order {
		if seen[x] {
			out = append(out, x)
			delete(seen, x)
		}
	}
	return append(out, sortedKeys(seen)...)
}

func sortedByScore(m map[string]float64) []string {
	names := sortedKeys(m)
	sort.SliceStable(names, func(i, j int) bool { return m[names[i]] > m[names[j]] })
	return names
}

func (r *run) structureScores() *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "structure_scores", Title: "Structural rigor: structure score",
		Caption: fmt.Sprintf("Rule-based structure score per system, mean over its reports: +1 per section, subsection and table present and correct, -1 when wrong, over the maximum %d (not clipped at 0). The fractional variant scores a table found by the mean of its row-field and column coverage.", r.in.Structure.MaxScore()),
		Columns: []analysis.Column{{Name: "system"},
			{Name: "structure", Title: "Structure", Decimals: 3, Better: analysis.Higher, Doc: "binary structure score, raw / max"},
			{Name: "fractional", Title: "Fractional", Decimals: 3, Better: analysis.Higher, Doc: "fractional structure score"},
			{Name: "raw", Title: "Raw", Decimals: 1, Doc: fmt.Sprintf("mean binary raw score out of %d", r.in.Structure.MaxScore())},
			{Name: "perfect", Decimals: 0, Doc: "reports with a perfect structure"},
			{Name: "reports", Decimals: 0, Doc: "reports checked"}},
		Charts: []analysis.Chart{{ID: "structure_bars", Kind: analysis.Bar, Title: "Structure score", X: "system", Y: []string{"structure", "fractional"}, YName: "structure score"}},
	}
	for si, s := range r.in.Config.Systems {
		var bin, frac, raw []float64
		perfect := 0
		for _, rep := range r.reports {
			if rep.sys != si || !rep.present {
				continue
			}
			m := float64(rep.check.Max)
			bin, frac, raw = append(bin, rep.check.Score/m), append(frac, rep.check.Fraction/m), append(raw, rep.check.Score)
			if rep.check.Score == m {
				perfect++
			}
		}
		cell := func(xs []float64) analysis.Cell {
			if len(xs) == 0 {
				return analysis.Undefined("no reports")
			}
			return analysis.Number(stats.Mean(xs))
		}
		t.AddRow(analysis.Text(s.Name), cell(bin), cell(frac), cell(raw), analysis.Int(perfect), analysis.Int(len(bin)))
	}
	return t
}

func (r *run) deductions() *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "structure_deductions", Title: "Structure deductions",
		Caption: "Every section, subsection and table that did not score +1, per report, with the reason.",
		Columns: []analysis.Column{{Name: "system"}, {Name: "company"}, {Name: "element"}, {Name: "id"}, {Name: "title"},
			{Name: "score", Decimals: 2, Doc: "binary score"}, {Name: "fraction", Decimals: 2, Doc: "fractional score"}, {Name: "line", Decimals: 0}, {Name: "reason"}}}
	for _, rep := range r.byTask {
		if !rep.present {
			continue
		}
		for _, e := range rep.check.Elements {
			if e.Score == 1 && e.Fraction == 1 {
				continue
			}
			line := analysis.Undefined("missing")
			if e.Line > 0 {
				line = analysis.Int(e.Line)
			}
			t.AddRow(analysis.Text(r.in.Config.Systems[rep.sys].Name), analysis.Text(rep.company.ID), analysis.Text(e.Kind), analysis.Text(e.ID),
				analysis.Text(e.Title), analysis.Number(e.Score), analysis.Number(e.Fraction), line, analysis.Text(e.Reason))
		}
	}
	return t
}

// headline picks the figures the paper states in its text.
func (r *run) headline(acc, capT, secT *analysis.Table) *analysis.Table {
	t := &analysis.Table{Benchmark: Name, Name: "headline", Title: "Headline figures",
		Caption: "The best (and second best) systems on the figures the paper states in its text.",
		Columns: []analysis.Column{{Name: "figure"}, {Name: "method"}, {Name: "value", Decimals: 1, Unit: "pts"}}}
	add := func(fig string, rank int, tab *analysis.Table, col string) {
		if tab == nil {
			return
		}
		c := tab.Col(col)
		if c < 0 {
			return
		}
		type kv struct {
			name string
			v    float64
		}
		var xs []kv
		for _, row := range tab.Rows {
			if row[c].IsNum {
				xs = append(xs, kv{row[0].Text, row[c].Num})
			}
		}
		sort.SliceStable(xs, func(i, j int) bool {
			if xs[i].v != xs[j].v {
				return xs[i].v > xs[j].v
			}
			return xs[i].name < xs[j].name
		})
		if rank < len(xs) {
			t.AddRow(analysis.Text(fig), analysis.Text(xs[rank].name), analysis.Number(xs[rank].v))
		} else {
			t.AddRow(analysis.Text(fig), analysis.Text(""), analysis.Undefined("too few systems"))
		}
	}
	add("overall_accuracy_best", 0, acc, "accuracy")
	add("overall_accuracy_second", 1, acc, "accuracy")
	for _, c := range Capabilities {
		add(string(c)+"_best", 0, capT, string(c))
	}
	add("section6_best", 0, secT, "section_6")
	add("section3_best", 0, secT, "section_3")
	return t
}

// structureTable describes the benchmark as loaded, item by item as in
// the paper's Table 1.
func (r *run) structureTable() *analysis.Table {
	in := r.in
	t := &analysis.Table{Benchmark: Name, Name: "structure", Title: "Benchmark structure",
		Caption: "The benchmark's structure as loaded from the inputs (paper, Table 1).",
		Columns: []analysis.Column{{Name: "item"}, {Name: "value", Decimals: 0}}}
	count := func(attr func(*Company) string) int { return len(r.present(attr, nil)) }
	perMarket := map[string]int{}
	for _, c := range in.Companies {
		perMarket[c.Market]++
	}
	cpm := analysis.Undefined("markets differ in size")
	if n := slices.Compact(slices.Sorted(func(yield func(int) bool) {
		for _, k := range sortedKeys(perMarket) {
			if !yield(perMarket[k]) {
				return
			}
		}
	})); len(n) == 1 {
		cpm = analysis.Int(n[0])
	}
	marks := 0.0
	for _, it := range in.Items {
		marks += r.opt.weights[it.Capability]
	}
	subs := len(in.Structure.Subsections())
	rows := []struct {
		item string
		v    analysis.Cell
	}{
		{"languages", analysis.Int(count(func(c *Company) string { return c.Language }))},
		{"markets", analysis.Int(count(func(c *Company) string { return c.Market }))},
		{"industries", analysis.Int(count(func(c *Company) string { return c.Industry }))},
		{"companies", analysis.Int(len(in.Companies))},
		{"companies_per_market", cpm},
		{"major_sections", analysis.Int(len(in.Structure.Sections))},
		{"subsections", analysis.Int(subs)},
		{"markdown_tables", analysis.Int(subs)},
		{"grading_items_per_report", analysis.Int(len(in.Items))},
		{"full_marks_per_report", analysis.Number(marks)},
		{"total_grading_items", analysis.Int(len(in.Items) * len(in.Companies))},
		{"structure_score_max", analysis.Int(in.Structure.MaxScore())},
	}
	for _, x := range rows {
		t.AddRow(analysis.Text(x.item), x.v)
	}
	return t
}

// numericTables compare the judge's verdicts on numeric items with the
// deterministic numeric comparison.
func (r *run) numericTables() []*analysis.Table {
	sum := &analysis.Table{Benchmark: Name, Name: "numeric_check", Title: "Numeric comparison versus the judge",
		Caption: fmt.Sprintf("Numeric items graded by the judge and compared deterministically (relative tolerance %g, absolute %g, multipliers normalised, signs %s).",
			r.opt.tol.Rel, r.opt.tol.Abs, map[bool]string{true: "ignored", false: "compared"}[r.opt.tol.IgnoreSign]),
		Columns: []analysis.Column{{Name: "system"},
			{Name: "compared", Decimals: 0, Doc: "items both graded by the judge and comparable as numbers"},
			{Name: "agree", Decimals: 0},
			{Name: "judge_only", Decimals: 0, Doc: "judge correct, numeric comparison incorrect"},
			{Name: "numeric_only", Decimals: 0, Doc: "numeric comparison correct, judge incorrect"},
			{Name: "not_comparable", Decimals: 0, Doc: "judge-graded numeric items that are not a single quantity"},
			{Name: "agreement", Unit: "%", Decimals: 1, Doc: "share of compared items that agree"},
			{Name: "kappa", Decimals: 3, Doc: "Cohen's kappa between judge and numeric verdicts"}}}
	dis := &analysis.Table{Benchmark: Name, Name: "numeric_disagreements", Title: "Where the numeric comparison disagrees with the judge",
		Columns: []analysis.Column{{Name: "system"}, {Name: "company"}, {Name: "item"}, {Name: "prediction"}, {Name: "truth"}, {Name: "judge"}, {Name: "numeric"}}}
	type counts struct{ agree, jOnly, nOnly, nc int }
	cs := make([]counts, len(r.in.Config.Systems))
	agreement := make([]stats.Agreement[string], len(cs)) // judge against numeric
	total := 0
	for _, rep := range r.byTask {
		if !rep.present {
			continue
		}
		c := &cs[rep.sys]
		var texts []string // the report's item texts, read once a row needs them
		for i := range r.in.Items {
			judge := rep.marks[i].judge()
			if judge == notJudged || !r.in.Items[i].Numeric {
				continue
			}
			num := r.numeric(rep, i)
			if num == "" {
				c.nc++
				continue
			}
			agreement[rep.sys].Add(judge.String(), num)
			switch {
			case judge.String() == num:
				c.agree++
				continue
			case judge == judgedCorrect:
				c.jOnly++
			default:
				c.nOnly++
			}
			total++
			if total <= maxDisagreements {
				it := &r.in.Items[i]
				if texts == nil {
					texts = r.texts.Get(rep.itemTexts)
				}
				// The truth is cloned: the table outlives the collection,
				// and the truths share one string (see truthTable).
				dis.AddRow(analysis.Text(r.in.Config.Systems[rep.sys].Name), analysis.Text(rep.company.ID), analysis.Text(it.ID),
					analysis.Text(clip(itemText(texts, i, answerText), 200)), analysis.Text(strings.Clone(r.in.answer(rep.ci, i))), analysis.Text(judge.String()), analysis.Text(num))
			}
		}
	}
	if total > maxDisagreements {
		dis.Notes = append(dis.Notes, fmt.Sprintf("First %d of %d disagreements, by company and system.", maxDisagreements, total))
	}
	for si, s := range r.in.Config.Systems {
		c := cs[si]
		n := c.agree + c.jOnly + c.nOnly
		agr, kap := analysis.Undefined("nothing compared"), analysis.Undefined("nothing compared")
		if n > 0 {
			agr = analysis.Number(100 * float64(c.agree) / float64(n))
			if k, err := agreement[si].Kappa(); err == nil {
				kap = analysis.Number(k)
			} else {
				kap = analysis.Undefined(err.Error())
			}
		}
		sum.AddRow(analysis.Text(s.Name), analysis.Int(n), analysis.Int(c.agree), analysis.Int(c.jOnly), analysis.Int(c.nOnly), analysis.Int(c.nc), agr, kap)
	}
	return []*analysis.Table{sum, dis}
}

// details yields the per-report drill-downs: the report, the structure
// deductions, and every item's answer, truth and verdict, generated as
// they are asked for (see analysis.Result.LazyDetails).
func (r *run) details(sc map[*report]scores) iter.Seq[analysis.Detail] {
	return func(yield func(analysis.Detail) bool) { r.eachDetail(sc, yield) }
}

// eachDetail yields the details until yield returns false.
func (r *run) eachDetail(sc map[*report]scores, yield func(analysis.Detail) bool) {
	judge := r.in.Config.Judge.Name
	// heads[i] starts item i's verdicts: "id [capability, protocol]: ".
	heads := make([]string, len(r.in.Items))
	for i, it := range r.in.Items {
		heads[i] = it.ID + " [" + string(it.Capability) + ", " + string(it.Protocol) + "]: "
	}
	var buf []byte
	var ends []int // where each item's verdict and reason end in buf
	for _, rep := range r.byTask {
		c := rep.company
		d := analysis.Detail{Task: c.ID, System: r.in.Config.Systems[rep.sys].Name,
			Question: fmt.Sprintf("Research report on %s (%s, %s market, %s)", c.Name, c.Ticker, c.Market, languageNames[c.Language])}
		if !rep.present {
			d.Score = "missing"
			if !yield(d) {
				return
			}
			continue
		}
		if out := r.texts.Get(rep.output); len(out) > 0 {
			d.Output = out[0]
		}
		d.Call = rep.call
		texts := r.texts.Get(rep.itemTexts)
		st := fmt.Sprintf("structure %s/%d", trimFloat(rep.check.Score), rep.check.Max)
		if s, ok := sc[rep]; ok {
			d.Score = fmt.Sprintf("accuracy %.1f/100, %s", s.acc, st)
		} else {
			d.Score = "not scored (" + strings.Join(rep.why, "; ") + "), " + st
		}
		for _, e := range rep.check.Elements {
			if e.Score != 1 {
				d.Verdicts = append(d.Verdicts, analysis.Verdict{Judge: "structure check", Verdict: fmt.Sprintf("%s %s: %+g", e.Kind, e.ID, e.Score), Reasoning: e.Reason})
			}
		}
		// The items' verdicts and reasons are written into one string.
		buf = buf[:0]
		ends = ends[:0]
		for i := range r.in.Items {
			v := itemText(texts, i, verdictText)
			if _, n := r.grade(rep, i); n != "" {
				v = n + " (numeric)"
			}
			if v == "" {
				v = "not graded"
			}
			buf = append(append(buf, heads[i]...), v...)
			ends = append(ends, len(buf))
			buf = append(append(buf, "answer: "...), clip(itemText(texts, i, answerText), 300)...)
			buf = append(append(buf, " | truth: "...), clip(r.in.answer(rep.ci, i), 300)...)
			if num := r.numeric(rep, i); num != "" {
				buf = append(append(buf, " | numeric: "...), num...)
			}
			if reason := itemText(texts, i, reasonText); reason != "" {
				buf = append(append(buf, " | judge: "...), clip(reason, 300)...)
			}
			ends = append(ends, len(buf))
		}
		all, start := string(buf), 0
		d.Verdicts = slices.Grow(d.Verdicts, len(r.in.Items))
		for i := range r.in.Items {
			who := judge
			if !rep.marks[i].found() {
				who = "extraction"
			}
			v, reason := all[start:ends[2*i]], all[ends[2*i]:ends[2*i+1]]
			start = ends[2*i+1]
			vd := analysis.Verdict{Judge: who, Verdict: v, Reasoning: reason}
			if rep.marks[i].found() {
				vd.Call = rep.calls[stageIndex(r.in.Items[i].Protocol)]
			}
			d.Verdicts = append(d.Verdicts, vd)
		}
		if !yield(d) {
			return
		}
	}
}

// itemText is text k of item i in texts (see textsPer), "" when the
// texts are not there (a report whose items were never graded).
func itemText(texts []string, i, k int) string {
	if j := textsPer*i + k; j < len(texts) {
		return texts[j]
	}
	return ""
}
