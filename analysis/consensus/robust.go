package consensus

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// addStability builds the stability table from the repeated runs.
func (a *analyzer) addStability() {
	t := a.newTable("stability", "Within-model stability",
		"Repeated runs of the same judge on the same batched prompt. Per rubric evaluation: consistency = majority share of the valid labels; full consistency = identical valid labels in every run; flip = at least one yes/no disagreement.",
		[]analysis.Column{
			{Name: "scope"},
			{Name: "rubrics", Doc: "rubric evaluations with at least 2 valid labels"},
			{Name: "mean_consistency", Decimals: 3, Better: analysis.Higher},
			{Name: "full_consistency", Unit: "%", Decimals: 2, Better: analysis.Higher},
			{Name: "flip_rate", Unit: "%", Decimals: 2, Better: analysis.Lower},
			{Name: "error_rate", Unit: "%", Decimals: 2, Better: analysis.Lower, Doc: "share of labels that were invalid or missing"},
		})
	a.tables = append(a.tables, t)
	js := stabilityJudges(a.in, a.cfg.judges)
	if len(js) == 0 {
		t.Notes = append(t.Notes, "The inputs hold no repeated runs for the selected judges.")
		return
	}
	type acc struct {
		n, full, flip, labels, bad int
		cons                       float64
	}
	accs := map[string]*acc{}
	get := func(scope string) *acc {
		if accs[scope] == nil {
			accs[scope] = &acc{}
		}
		return accs[scope]
	}
	runs := a.in.Panel.Stability.Runs
	for _, j := range js {
		for _, it := range a.in.Panel.Stability.Items {
			q, p := a.in.queryIdx[it.Query], a.in.prodIdx[it.Product]
			rr := a.c.reruns[slot{j, q, p, 0}]
			for r, rub := range a.in.Rubrics[q] {
				var y, n, bad int
				for run := range runs {
					l := missing
					if run == 0 {
						l = a.ls.lab[j][q][r*a.np+p]
					} else if rr != nil && rr[run] != nil {
						l = rr[run][r]
					}
					switch l {
					case yes:
						y++
					case no:
						n++
					default:
						bad++
					}
				}
				for _, scope := range []string{"overall", rub.Dimension} {
					s := get(scope)
					s.labels += runs
					s.bad += bad
					if y+n < 2 {
						continue
					}
					s.n++
					s.cons += float64(max(y, n)) / float64(y+n)
					if bad == 0 && (y == 0 || n == 0) {
						s.full++
					}
					if y > 0 && n > 0 {
						s.flip++
					}
				}
			}
		}
	}
	scopes := []string{"overall"}
	for s := range accs {
		if s != "overall" {
			scopes = append(scopes, s)
		}
	}
	slices.Sort(scopes[1:])
	for _, s := range scopes {
		x := accs[s]
		mc := analysis.Undefined("no rubric with 2 valid labels")
		if x.n > 0 {
			mc = analysis.Number(x.cons / float64(x.n))
		}
		t.AddRow(analysis.Text(s), analysis.Int(x.n), mc, pct(x.full, x.n), pct(x.flip, x.n), pct(x.bad, x.labels))
	}
	var names []string
	for _, j := range js {
		names = append(names, a.in.Panel.Judges[a.cfg.judges[j]].Name)
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%d runs of %s on %d reports.", runs, strings.Join(names, ", "), len(a.in.Panel.Stability.Items)))
}

// addValidation builds the human-LLM validation tables.
func (a *analyzer) addValidation() {
	conf := a.newTable("validation_confusion", "Human vs LLM unanimity",
		"Validation items by whether the human raters and the LLM judges are unanimous; shares are within each LLM column.",
		[]analysis.Column{
			{Name: "human"},
			{Name: "llm_unanimous"},
			{Name: "llm_not_unanimous"},
			{Name: "llm_unanimous_share", Unit: "%", Decimals: 1},
			{Name: "llm_not_unanimous_share", Unit: "%", Decimals: 1},
		})
	conf.Charts = []analysis.Chart{{ID: "frb2_unanimity", Kind: analysis.Heatmap, Title: "Human vs LLM unanimity (items)",
		X: "human", Y: []string{"llm_unanimous", "llm_not_unanimous"}, XName: "human raters", YName: "LLM judges"}}
	t := a.newTable("validation", "Human-LLM validation",
		"Agreement between the LLM judges and the human raters on the validation sample.",
		[]analysis.Column{{Name: "metric"}, {Name: "value", Decimals: 4}, {Name: "items", Doc: "items or rater pairs the value is computed over"}})
	a.tables = append(a.tables, t, conf)
	if len(a.in.humans) == 0 {
		t.Notes = append(t.Notes, "The inputs hold no human labels.")
		return
	}
	var cm [2][2]int // [human unanimous][llm unanimous]
	var jointH, jointL, majH, majL []bool
	nj, nh := len(a.cfg.judges), len(a.in.Panel.Humans)
	type pairs struct{ a, b []bool } // two raters' labels, true for yes
	jh := make([]pairs, nj*nh)
	hh := make([]pairs, nh*nh)
	skipped, used := 0, 0
	for _, it := range a.in.humans {
		ll := make([]int8, nj)
		ok := true
		for j := range nj {
			ll[j] = a.ls.lab[j][it.q][it.r*a.np+it.p]
			ok = ok && (ll[j] == yes || ll[j] == no)
		}
		if !ok {
			skipped++
			continue
		}
		used++
		hu, lu := unanimous(it.labels), unanimous(ll)
		cm[b2i(hu)][b2i(lu)]++
		if hu && lu {
			jointH, jointL = append(jointH, it.labels[0] == yes), append(jointL, ll[0] == yes)
		}
		if mh, ok1 := majority(it.labels); ok1 {
			if ml, ok2 := majority(ll); ok2 {
				majH, majL = append(majH, mh), append(majL, ml)
			}
		}
		for j := range nj {
			for h := range nh {
				pr := &jh[j*nh+h]
				pr.a = append(pr.a, ll[j] == yes)
				pr.b = append(pr.b, it.labels[h] == yes)
			}
		}
		for h1 := range nh {
			for h2 := h1 + 1; h2 < nh; h2++ {
				pr := &hh[h1*nh+h2]
				pr.a = append(pr.a, it.labels[h1] == yes)
				pr.b = append(pr.b, it.labels[h2] == yes)
			}
		}
	}
	if skipped > 0 {
		a.problems = append(a.problems, fmt.Sprintf("validation: %d human-labelled items left out because a judge's label is invalid or missing", skipped))
	}
	colU, colN := cm[0][1]+cm[1][1], cm[0][0]+cm[1][0]
	conf.AddRow(analysis.Text("human_unanimous"), analysis.Int(cm[1][1]), analysis.Int(cm[1][0]), pct(cm[1][1], colU), pct(cm[1][0], colN))
	conf.AddRow(analysis.Text("human_not_unanimous"), analysis.Int(cm[0][1]), analysis.Int(cm[0][0]), pct(cm[0][1], colU), pct(cm[0][0], colN))

	agree := func(x, y []bool) (int, int) {
		n := 0
		for i := range x {
			if x[i] == y[i] {
				n++
			}
		}
		return n, len(x)
	}
	jAgree, jN := agree(jointH, jointL)
	jKappa := num(stats.CohenKappa(jointH, jointL))
	mAgree, mN := agree(majH, majL)
	mKappa := num(stats.CohenKappa(majH, majL))
	meanPairs := func(ps []pairs) (ag, kp analysis.Cell, n int) {
		var ags, kps []float64
		kUndef := 0
		for _, pr := range ps {
			if len(pr.a) == 0 {
				continue
			}
			x, y := pr.a, pr.b
			g, m := agree(x, y)
			ags = append(ags, float64(g)/float64(m))
			if k, err := stats.CohenKappa(x, y); err == nil {
				kps = append(kps, k)
			} else {
				kUndef++
			}
			n++
		}
		ag, kp = analysis.Undefined("no rater pairs"), analysis.Undefined("no rater pairs")
		if len(ags) > 0 {
			ag = analysis.Number(stats.Mean(ags))
		}
		if len(kps) > 0 && kUndef == 0 {
			kp = analysis.Number(stats.Mean(kps))
		} else if kUndef > 0 {
			kp = analysis.Undefined("kappa undefined for a rater pair")
		}
		return ag, kp, n
	}
	lhA, lhK, lhN := meanPairs(jh)
	hhA, hhK, hhN := meanPairs(hh)
	rows := []struct {
		fig string
		c   analysis.Cell
		n   int
	}{
		{"validation_items", analysis.Int(used), used},
		{"validation_llm_unanimous", analysis.Int(colU), used},
		{"validation_both_unanimous", analysis.Int(cm[1][1]), used},
		{"validation_llm_not_unanimous", analysis.Int(colN), used},
		{"validation_both_not_unanimous", analysis.Int(cm[0][0]), used},
		{"validation_label_agreement_joint_unanimous", pct(jAgree, jN), jN},
		{"validation_label_agreement_joint_unanimous_kappa", jKappa, jN},
		{"validation_majority_label_agreement", pct(mAgree, mN), mN},
		{"validation_majority_label_kappa", mKappa, mN},
		{"llm_human_pairwise_agreement_mean", lhA, lhN},
		{"llm_human_pairwise_kappa_mean", lhK, lhN},
		{"human_human_pairwise_agreement_mean", hhA, hhN},
		{"human_human_pairwise_kappa_mean", hhK, hhN},
	}
	for _, r := range rows {
		t.AddRow(analysis.Text(r.fig), r.c, analysis.Int(r.n))
		a.figure(r.fig, r.c)
	}
	t.Notes = append(t.Notes, "Agreements are percentages of items except the pairwise means, which are fractions; pairwise rows count rater pairs.")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func unanimous(l []int8) bool {
	for _, v := range l {
		if v != l[0] {
			return false
		}
	}
	return true
}

// majority returns the strict majority label (true for yes) of l.
func majority(l []int8) (bool, bool) {
	y := 0
	for _, v := range l {
		if v == yes {
			y++
		}
	}
	switch {
	case 2*y > len(l):
		return true, true
	case 2*y < len(l):
		return false, true
	}
	return false, false
}

// compare returns Spearman's rho (average ranks for ties) and Kendall's
// tau-b between the baseline gold item pass rates and another set of item
// pass rates (nil when the other selection has no gold rubric), product
// by product, as the protocol computes them: from the rates, never from
// positions in a ranking whose ties were broken.
func (a *analyzer) compare(item []float64) (rho, tau analysis.Cell) {
	if item == nil || len(a.base.scored) == 0 {
		u := analysis.Undefined("no gold rubrics")
		return u, u
	}
	return num(stats.Spearman(a.baseItem, item)), num(stats.KendallTauB(a.baseItem, item))
}

// moves lists the products whose competition rank differs from the
// baseline's, as "name 2->=3".
func (a *analyzer) moves(g *goldRanking) string {
	if g == nil {
		return "no gold rubrics"
	}
	baseShared := analysis.Shared(a.baseRank)
	shared := analysis.Shared(g.rank)
	var out []string
	for _, p := range a.ranking {
		if g.rank[p] != a.baseRank[p] {
			out = append(out, fmt.Sprintf("%s %s->%s", a.names[p], analysis.FormatRank(a.baseRank[p], baseShared[p]), analysis.FormatRank(g.rank[p], shared[p])))
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// addLeaveOneOut builds leave_one_judge_out and returns each dropped
// judge's ranking by judge position.
func (a *analyzer) addLeaveOneOut() []*goldRanking {
	t := a.newTable("leave_one_judge_out", "Leave one judge out",
		"Both filters rerun without one judge (the rest must agree as the consistency rule says, at most all of them); products re-ranked on the new gold rubrics; their gold item pass rates are compared with the full panel's (Spearman with average ranks for ties, Kendall tau-b).",
		[]analysis.Column{
			{Name: "dropped_judge"},
			{Name: "consistency_passed"},
			{Name: "gold"},
			{Name: "spearman", Decimals: 3, Better: analysis.Higher, Doc: "Spearman's rho (average ranks for ties) of the gold item pass rates against the full panel's"},
			{Name: "kendall_tau_b", Decimals: 3, Doc: "Kendall's tau-b of the gold item pass rates against the full panel's"},
			{Name: "changed", Doc: "products whose rank changed (full panel -> without the judge; =2 is a shared rank)"},
			{Name: "ranking"},
		})
	t.Charts = []analysis.Chart{{ID: "frb2_leave_one_judge_out", Kind: analysis.Bar, Title: "Spearman rho without each judge",
		X: "dropped_judge", Y: []string{"spearman"}, XName: "judge left out", YName: "Spearman rho"}}
	a.tables = append(a.tables, t)
	n := len(a.cfg.judges)
	if n < 2 {
		t.Notes = append(t.Notes, "Only one judge is selected: nothing to leave out.")
		return nil
	}
	out := make([]*goldRanking, n)
	var rhos []float64
	for d := range n {
		var js []int
		for j := range n {
			if j != d {
				js = append(js, j)
			}
		}
		vs := a.ls.tally(a.nr, js, min(a.cfg.k, n-1))
		sel := selectRubrics(vs, len(a.in.Queries), a.np, a.all, a.cfg.dist, a.cfg.minR, false)
		out[d] = rankGold(sel, a.np, a.names)
		rho, tau := a.compare(out[d].itemRates())
		if rho.IsNum {
			rhos = append(rhos, rho.Num)
		}
		ranking := "no gold rubrics" // else "A > B = C" when B and C share a rank
		if g := out[d]; g != nil {
			ranking = analysis.RankingText(namesOf(g.order, a.names), a.ranksInOrder(g.order, g.rank))
		}
		t.AddRow(analysis.Text(a.in.Panel.Judges[a.cfg.judges[d]].Name), analysis.Int(sel.nCons), analysis.Int(sel.gold.total()), rho, tau,
			analysis.Text(a.moves(out[d])), analysis.Text(ranking))
	}
	if len(rhos) == n {
		a.figure("leave_one_judge_out_spearman", analysis.Number(stats.Mean(rhos)))
		t.Notes = append(t.Notes, "The leave_one_judge_out_spearman figure is the mean over the dropped judges.")
	}
	return out
}

// addSplits builds splits and split_detail: gold rubrics selected on all
// products but a held-out triple, every product ranked on them.
func (a *analyzer) addSplits() {
	sum := a.newTable("splits", "Held-out split test",
		"For every held-out triple of products, gold rubrics are selected using only the other products and all products are ranked on them; Spearman's rho (average ranks for ties) is of their gold item pass rates against the baseline's.",
		[]analysis.Column{{Name: "statistic"}, {Name: "value", Decimals: 3}})
	det := a.newTable("split_detail", "Held-out splits",
		"One row per held-out triple.",
		[]analysis.Column{
			{Name: "held_out"},
			{Name: "gold"},
			{Name: "spearman", Decimals: 3, Better: analysis.Higher},
			{Name: "kendall_tau_b", Decimals: 3},
			{Name: "order_preserved", Doc: "the held-out products keep their baseline relative order by gold item pass rate (a tie stays a tie)"},
		})
	det.Charts = []analysis.Chart{{ID: "frb2_splits", Kind: analysis.Bar, Title: "Spearman rho per held-out triple",
		X: "held_out", Y: []string{"spearman"}, XName: "held-out products", YName: "Spearman rho"}}
	a.tables = append(a.tables, sum, det)
	if a.np < 5 {
		sum.Notes = append(sum.Notes, "Fewer than 5 products: no split leaves 2 products to select rubrics with.")
		return
	}
	// A rubric passes a split's consistency filter only when the products
	// the judges disagree on are among the 3 held out: the rubrics are
	// grouped by those products, and a split filters only the groups of
	// subsets of its held-out ones. Gold counts do not depend on the order.
	groups := map[uint64][]votes{}
	for _, v := range a.baseVote {
		if m := a.all &^ v.cons; bits.OnesCount64(m) <= 3 {
			groups[m] = append(groups[m], v)
		}
	}
	var rhos []float64
	splits, kept, undef := 0, 0, 0
	for x := 0; x < a.np; x++ {
		for y := x + 1; y < a.np; y++ {
			for z := y + 1; z < a.np; z++ {
				splits++
				held := uint64(1)<<x | uint64(1)<<y | uint64(1)<<z
				sel := newSelection(len(a.in.Queries), a.np, false)
				bx, by, bz := uint64(1)<<x, uint64(1)<<y, uint64(1)<<z
				for _, m := range [...]uint64{0, bx, by, bz, bx | by, bx | bz, by | bz, held} {
					sel.filter(groups[m], a.all&^held, a.cfg.dist)
				}
				sel.finish(len(a.in.Queries), a.cfg.minR)
				item, _, ok := sel.gold.rates(sel.scored, a.np)
				if !ok {
					item = nil
				}
				rho, tau := a.compare(item)
				if rho.IsNum {
					rhos = append(rhos, rho.Num)
				} else {
					undef++
				}
				preserved := analysis.Text("n/a")
				if item != nil {
					b := a.baseItem
					same := cmp.Compare(b[x], b[y]) == cmp.Compare(item[x], item[y]) &&
						cmp.Compare(b[x], b[z]) == cmp.Compare(item[x], item[z]) &&
						cmp.Compare(b[y], b[z]) == cmp.Compare(item[y], item[z])
					preserved = analysis.Text("no")
					if same {
						preserved = analysis.Text("yes")
						kept++
					}
				}
				det.AddRow(analysis.Text(a.names[x]+" + "+a.names[y]+" + "+a.names[z]), analysis.Int(sel.gold.total()), rho, tau, preserved)
			}
		}
	}
	mean, mn, share := analysis.Undefined("no defined rho"), analysis.Undefined("no defined rho"), analysis.Undefined("no defined rho")
	if len(rhos) > 0 {
		mean, mn = analysis.Number(stats.Mean(rhos)), analysis.Number(slices.Min(rhos))
		ge := 0
		for _, r := range rhos {
			if r >= 0.95-1e-12 {
				ge++
			}
		}
		share = pct(ge, len(rhos))
	}
	for _, r := range []struct {
		name, fig string
		c         analysis.Cell
	}{
		{"splits", "split_test_splits", analysis.Int(splits)},
		{"mean_spearman", "split_test_mean_spearman", mean},
		{"min_spearman", "split_test_min_spearman", mn},
		{"share_ge_0.95", "split_test_share_ge_0.95", share},
		{"heldout_order_preserved", "split_test_heldout_triples_order_preserved", analysis.Int(kept)},
	} {
		sum.AddRow(analysis.Text(r.name), r.c)
		a.figure(r.fig, r.c)
	}
	sum.Notes = append(sum.Notes, "share_ge_0.95 is a percentage of the splits with a defined rho.")
	if undef > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d splits left no gold rubric: their rho is undefined.", undef))
	}
}

func (rs *rateSet) total() int {
	n := 0
	for _, x := range rs.n {
		n += x
	}
	return n
}

// addAblation compares rankings on consistency-passed and gold rubrics.
func (a *analyzer) addAblation() {
	t := a.newTable("ablation", "Filter ablation",
		"Products ranked by item pass rate on the consistency-passed rubrics (no distinguishability filter; every query with such a rubric) and on the gold rubrics (the scored queries); rho and tau compare the item pass rates with the gold ones.",
		[]analysis.Column{
			{Name: "rubric_set"},
			{Name: "rubrics"},
			{Name: "top"},
			{Name: "top_item", Unit: "%", Decimals: 2},
			{Name: "bottom"},
			{Name: "bottom_item", Unit: "%", Decimals: 2},
			{Name: "spread_pp", Unit: "pp", Decimals: 2, Doc: "top minus bottom item pass rate, percentage points"},
			{Name: "spearman_vs_gold", Decimals: 3},
			{Name: "kendall_vs_gold", Decimals: 3},
		})
	a.tables = append(a.tables, t)
	for _, s := range []struct {
		name, fig string
		rs        *rateSet
	}{{"consistency", "consistency_item_spread_pp", a.base.cons}, {"gold", "gold_item_spread_pp", a.base.gold}} {
		qs := a.base.scored
		if s.rs == a.base.cons {
			qs = a.allQueries() // as consistency_item in pass_rates
		}
		item, macro, ok := s.rs.rates(qs, a.np)
		if !ok {
			u := analysis.Undefined("no rubrics")
			t.AddRow(analysis.Text(s.name), analysis.Int(0), u, u, u, u, u, u, u)
			a.figure(s.fig, u)
			if s.name == "consistency" {
				a.figure("spearman_consistency_vs_gold_ranking", u)
			}
			continue
		}
		order := rank(item, macro, a.names)
		top, bot := order[0], order[len(order)-1]
		spread := analysis.Number(item[top] - item[bot])
		rho, tau := a.compare(item)
		n := 0
		for _, q := range qs {
			n += s.rs.n[q]
		}
		t.AddRow(analysis.Text(s.name), analysis.Int(n), analysis.Text(a.names[top]), analysis.Number(item[top]),
			analysis.Text(a.names[bot]), analysis.Number(item[bot]), spread, rho, tau)
		a.figure(s.fig, spread)
		if s.name == "consistency" {
			a.figure("spearman_consistency_vs_gold_ranking", rho)
		}
	}
}

// addSelfPreference checks each judge whose vendor makes an evaluated
// product.
func (a *analyzer) addSelfPreference(lojo []*goldRanking) {
	t := a.newTable("self_preference", "Self-preference",
		"For each judge whose vendor also makes an evaluated product: that product's gold rank with the full panel and without the judge.",
		[]analysis.Column{
			{Name: "judge"},
			{Name: "vendor"},
			{Name: "product"},
			{Name: "rank_full_panel", Doc: "competition rank by gold item pass rate, =2 when shared"},
			{Name: "rank_without_judge", Doc: "the same without the judge"},
			{Name: "rank_change", Doc: "rank without the judge minus rank with it: positive means the product falls without its vendor's judge"},
		})
	a.tables = append(a.tables, t)
	rankCell := func(rank []int, p int) analysis.Cell { return analysis.RankCells(rank)[p] }
	for d, j := range a.cfg.judges {
		jd := a.in.Panel.Judges[j]
		if jd.Vendor == "" {
			continue
		}
		for p, pr := range a.in.Panel.Products {
			if !strings.EqualFold(pr.Vendor, jd.Vendor) {
				continue
			}
			without, change := analysis.Undefined("one judge selected"), analysis.Undefined("one judge selected")
			if lojo != nil && lojo[d] != nil {
				without, change = rankCell(lojo[d].rank, p), analysis.Int(lojo[d].rank[p]-a.baseRank[p])
			}
			t.AddRow(analysis.Text(jd.Name), analysis.Text(jd.Vendor), analysis.Text(pr.Name), rankCell(a.baseRank, p), without, change)
		}
	}
	if len(t.Rows) == 0 {
		t.Notes = append(t.Notes, "No selected judge's vendor makes an evaluated product.")
	}
}

// eachDetail yields every report with each judge's labels on the query's
// gold rubrics, made as they are asked for (see analysis.Result's
// LazyDetails): a sweep's variants never make them.
func (a *analyzer) eachDetail(yield func(analysis.Detail) bool) {
	byName := make([]int, a.np)
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(x, y int) int { return strings.Compare(a.names[x], a.names[y]) })
	start := 0
	for q := range a.in.Queries {
		fates := a.base.fates[start : start+a.nr[q]]
		votes := a.baseVote[start : start+a.nr[q]]
		start += a.nr[q]
		nGold := 0
		for _, f := range fates {
			if f == fateGold {
				nGold++
			}
		}
		var why []string // "[ID] text" by rubric, once a detail needs them
		if nGold > 0 {
			why = reasons(a.in.rubricsOf(q))
		}
		for _, p := range byName {
			d := analysis.Detail{Task: a.in.Queries[q].ID, System: a.names[p], Question: a.in.Queries[q].Text, Output: a.in.report(q, p)}
			if nGold > 0 {
				d.Verdicts = make([]analysis.Verdict, 0, nGold*len(a.cfg.judges))
			}
			gold, pass := 0, 0
			for r, f := range fates {
				if f != fateGold {
					continue
				}
				gold++
				if votes[r].myes>>p&1 == 1 {
					pass++
				}
				for j, ji := range a.cfg.judges {
					d.Verdicts = append(d.Verdicts, analysis.Verdict{
						Judge:     a.in.Panel.Judges[ji].Name,
						Verdict:   labelName(a.ls.lab[j][q][r*a.np+p]),
						Reasoning: why[r],
						Call:      a.c.calls[j][q][p],
					})
				}
			}
			d.Score = "no gold rubrics"
			if gold > 0 {
				d.Score = fmt.Sprintf("passes %d of %d gold rubrics", pass, gold)
			}
			if !yield(d) {
				return
			}
		}
	}
}

// labelName is a label's name on the drill-down pages: itemLabel's, with
// a missing label as "no reply".
func labelName(l int8) string {
	if l == missing {
		return "no reply"
	}
	return itemLabel(l)
}
