// Package uncertainty puts the clustered statistics of analysis/stats on a
// benchmark's headline leaderboard: for each system the CR1
// cluster-robust and naive standard errors, the design effect, the
// effective number of clusters, the cluster bootstrap percentile interval
// and the 95 % rank interval; paired comparisons of adjacent systems with
// sign-flip p-values, Holm-adjusted across the table; tie groups from
// those tests; and the minimum detectable difference at 80 % power.
//
// A benchmark hands New its item scores, one slice per system in ranking
// order (best first) over the same items, NaN where a system has no
// score, and the cluster of each item: the unit that was sampled (a
// company, a query, a task); or it hands NewFrom a Source that makes one
// system's scores at a time, when all of them would be large. The
// headline score must be the item mean, so a benchmark whose score
// averages reports of many items weights each item to make it so (see
// Weighted). The conventions are those of docs/scores.md.
package uncertainty

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// The fixed conventions of every benchmark's tables.
const (
	// DefaultReps is the number of cluster bootstrap resamples and sampled
	// sign patterns of a benchmark's cluster_bootstrap knob.
	DefaultReps = 10000
	// Seed seeds every resampling of a Config without a Seed of its own,
	// so that each table reproduces.
	Seed  = 20
	Level = 0.95 // of every interval
	Alpha = 0.05 // of every test, two-sided
	Power = 0.8  // of the minimum detectable difference
)

// KnobReps is the name of the knob every benchmark gives the resample
// count of these statistics.
const KnobReps = "cluster_bootstrap"

// Knob is the resample-count knob of a benchmark that uses this package.
func Knob() analysis.Knob {
	return analysis.Knob{Name: KnobReps, Default: fmt.Sprint(DefaultReps), Resamples: true,
		Doc: "resamples of the cluster bootstrap, rank intervals and sign-flip tests of the headline table (0 skips them)"}
}

// Reps parses the KnobReps knob of s: a count from 0 to 1,000,000.
func Reps(benchmark string, s analysis.Settings) (int, error) {
	v := s.Get(KnobReps, fmt.Sprint(DefaultReps))
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1_000_000 {
		return 0, fmt.Errorf("%s: knob %s: bad value %q (want 0 to 1000000)", benchmark, KnobReps, v)
	}
	return n, nil
}

// A Config sets what New computes and how its cells print.
type Config struct {
	// Reps is the number of resamples; 0 skips the bootstrap, rank
	// intervals, paired tests and tie groups (their cells say so).
	Reps int
	// Unit names the clusters in the plural ("companies").
	Unit string
	// Decimals of means and differences; standard errors get one more.
	Decimals int
	// Points names the unit of the scores in the power note ("points"),
	// if they have one.
	Points string
	// Requested are pairs of systems (by name) to compare on request
	// (RequestedTable), from the KnobPairs knob.
	Requested [][2]string
	// Seed seeds every resampling (the package's Seed when 0).
	Seed uint64
}

// A Pair is the paired comparison of system A with the next, B.
type Pair struct {
	A, B int
	stats.Paired
	Err  error
	Holm float64
}

// A Board holds the statistics of one ranking.
type Board struct {
	cfg      Config
	Names    []string
	Clusters int
	Means    []stats.ClusterMean
	meanErr  []error
	Lo, Hi   []float64
	bootErr  []error
	Ranks    []stats.RankInterval
	rankErr  error
	// Groups are the tie groups (from 1), nil when not computed.
	Groups []int
	// Pairs compare adjacent systems of the ranking.
	Pairs []Pair
	mdd   float64
	mddOK bool
	// scored counts each system's items with a score.
	scored []int
	// scores and cluster are NewFrom's arguments and labels the
	// clusters with a score (Clusters of them, in order), kept for
	// compare; scores only when pairs are requested (cfg.Requested).
	scores  Source
	cluster []int
	labels  []int
}

// A Source gives the item scores of the systems of a ranking one system
// at a time: Source(s, buf) returns system s's score on every item (NaN
// when missing), either buf (whose length is the number of items) filled
// in or a slice of its own that it does not change. NewFrom calls it
// more than once for a system, and holds the items of at most two
// systems and of their difference at once.
type Source func(s int, buf []float64) []float64

// New computes the statistics of a ranking. names are the systems best
// first, scores[s][i] system s's score on item i (NaN when missing) and
// cluster[i] the cluster of item i. It is NewFrom with the scores in
// memory.
func New(names []string, scores [][]float64, cluster []int, cfg Config) *Board {
	return NewFrom(names, func(s int, _ []float64) []float64 { return scores[s] }, cluster, cfg)
}

// NewFrom computes the statistics of a ranking from its systems' item
// scores, given one system at a time by scores: names are the systems
// best first and cluster[i] the cluster of item i. The analytic errors
// are those of stats.NewClusterMean; the resampled statistics
// (resample.go) draw, in each of cfg.Reps resamples, the clusters holding
// any system's item with replacement, the same draw for every system and
// pair (a cluster where a system has no item adds nothing to its mean),
// and one sign pattern for every pair's sign-flip test. Tie groups come
// from stats.TieGroups over the unadjusted sign-flip p-values of each
// group's leader against the systems below it; a pair sharing fewer than
// 2 clusters counts as not resolved.
//
// Only the clusters' sums are kept of a system or a pair: at 8x the
// full-scale demo, FinDeepResearch's systems' items held 19 MB when
// they were all given at once, and a cluster label per scored item
// another 35 MB.
func NewFrom(names []string, scores Source, cluster []int, cfg Config) *Board {
	if cfg.Seed == 0 {
		cfg.Seed = Seed
	}
	b := &Board{cfg: cfg, Names: names, scores: scores, cluster: cluster}
	S := len(names)
	b.Means, b.meanErr = make([]stats.ClusterMean, S), make([]error, S)
	b.Lo, b.Hi, b.bootErr = make([]float64, S), make([]float64, S), make([]error, S)
	b.scored = make([]int, S)
	// Each system's clusters and those of the differences of adjacent
	// systems, by label, from one pass over the systems in ranking
	// order (a system and the one before it at a time), then numbered
	// by the clusters with a score of some system, in label order.
	bufs := [2][]float64{make([]float64, len(cluster)), make([]float64, len(cluster))}
	var dbuf []float64
	groups := make([]stats.Clusters, S)
	adjGroups := make([]stats.Clusters, max(S-1, 0))
	var labels []int
	var prev []float64
	for s := range S {
		y := scores(s, bufs[s%2])
		for _, v := range y {
			if !math.IsNaN(v) {
				b.scored[s]++
			}
		}
		b.Means[s], b.meanErr[s] = stats.NewClusterMean(y, cluster)
		groups[s] = stats.Group(y, cluster)
		labels = append(labels, groups[s].Labels...)
		if s > 0 {
			dbuf = diffInto(dbuf, prev, y)
			p := Pair{A: s - 1, B: s}
			m, err := stats.NewClusterMean(dbuf, cluster)
			p.Diff, p.Items, p.Clusters, p.SE, p.Err = m.Mean, m.Items, m.Clusters, m.SE, err
			b.Pairs = append(b.Pairs, p)
			adjGroups[s-1] = stats.Group(dbuf, cluster)
		}
		prev = y
	}
	slices.Sort(labels)
	labels = slices.Compact(labels)
	b.labels = labels
	G := len(labels)
	b.Clusters = G
	sys := make([]sums, S)
	for s := range S {
		sys[s] = sumsByLabel(groups[s], labels)
	}
	var adj []sums
	for i := range adjGroups {
		adj = append(adj, sumsByLabel(adjGroups[i], labels))
	}
	// pairSums returns the cluster sums of the differences of systems i
	// and j: the leader i stays in bufs[0] from pair to pair.
	leader := -1
	var ly []float64
	pairSums := func(i, j int) sums {
		if i != leader {
			ly, leader = scores(i, bufs[0]), i
		}
		dbuf = diffInto(dbuf, ly, scores(j, bufs[1]))
		return sumsByLabel(stats.Group(dbuf, cluster), labels)
	}
	var noReps error
	switch {
	case cfg.Reps < 1:
		noReps = &stats.UndefinedError{Reason: "no resamples"}
	case G < 2:
		noReps = &stats.UndefinedError{Reason: "fewer than 2 clusters to resample"}
	}
	if noReps != nil {
		b.rankErr = noReps
		for s := range S {
			b.bootErr[s] = noReps
		}
		for i := range b.Pairs {
			b.Pairs[i].Err = noReps
		}
		return b
	}
	vals, counts := bootstrapPass(append(slices.Clone(sys), adj...), S, G, cfg.Reps, cfg.Seed)
	b.Ranks = make([]stats.RankInterval, S)
	full := make([]float64, S)
	for s := range S {
		if sys[s].clusters() < 2 {
			b.bootErr[s] = &stats.UndefinedError{Reason: "fewer than 2 units to resample"}
		} else {
			b.Lo[s], b.Hi[s], b.bootErr[s] = interval(vals[s])
		}
		full[s] = mean(sys[s])
	}
	a := (1 - Level) / 2
	for s := range S {
		rank := 1
		for t := range S {
			if stats.Above(full[t], full[s]) {
				rank++
			}
		}
		b.Ranks[s] = stats.RankInterval{Rank: rank, Lo: stats.RankQuantile(counts[s], cfg.Reps, a), Hi: stats.RankQuantile(counts[s], cfg.Reps, 1-a)}
	}
	// sign-flip p-values: the adjacent pairs and the pairs (0, j) first,
	// then, as the tie groups need them, the pairs of each new leader
	ps := map[[2]int]float64{}
	exact := map[[2]int]bool{}
	test := func(keys [][2]int) {
		var series [][]float64
		var todo [][2]int
		for _, k := range keys {
			if _, ok := ps[k]; ok {
				continue
			}
			var d sums
			if k[1] == k[0]+1 {
				d = adj[k[0]]
			} else {
				d = pairSums(k[0], k[1])
			}
			if d.clusters() < 2 {
				ps[k] = 1 // too little shared to compare: not resolved
				continue
			}
			series, todo = append(series, d.sum), append(todo, k)
		}
		p, ex := signFlips(series, cfg.Reps, cfg.Seed)
		for i, k := range todo {
			ps[k], exact[k] = p[i], ex[i]
		}
	}
	// pairs (l, j) of leader l from j on, a few at a time: a tie group
	// seldom runs far
	const chunk = 4
	leaderPairs := func(l, j int) [][2]int {
		var keys [][2]int
		for ; j < S && len(keys) < chunk; j++ {
			keys = append(keys, [2]int{l, j})
		}
		return keys
	}
	first := leaderPairs(0, 2)
	for i := 0; i+1 < S; i++ {
		first = append(first, [2]int{i, i + 1})
	}
	test(first)
	for i := range b.Pairs {
		p := &b.Pairs[i]
		if p.Err != nil {
			continue
		}
		k := [2]int{p.A, p.B}
		p.P, p.Exact = ps[k], exact[k]
		p.Lo, p.Hi, p.Err = interval(vals[S+i])
	}
	var pv []float64
	var sumSE2 float64
	for _, p := range b.Pairs {
		if p.Err == nil {
			pv = append(pv, p.P)
			sumSE2 += p.SE * p.SE
		}
	}
	holm := stats.Holm(pv)
	k := 0
	for i := range b.Pairs {
		if b.Pairs[i].Err == nil {
			b.Pairs[i].Holm = holm[k]
			k++
		}
	}
	if k > 0 {
		b.mdd = stats.MinDetectable(math.Sqrt(sumSE2/float64(k)), float64(b.Clusters-1), Alpha, Power)
		b.mddOK = true
	}
	b.Groups = stats.TieGroups(S, func(l, i int) float64 {
		key := [2]int{l, i}
		if _, ok := ps[key]; !ok {
			test(leaderPairs(l, i))
		}
		return ps[key]
	}, Alpha)
	if len(cfg.Requested) == 0 {
		b.scores = nil // compare is not called
	}
	return b
}

// diffInto returns the differences x - y, item by item, in buf (grown
// to their length): NaN where either is missing.
func diffInto(buf, x, y []float64) []float64 {
	buf = slices.Grow(buf[:0], len(x))[:len(x)]
	for k := range buf {
		buf[k] = x[k] - y[k]
	}
	return buf
}

// sumsByLabel returns the sums and counts of c by cluster index, the
// position of a cluster's label in labels (all of c's labels are there),
// zero for a cluster c does not hold.
func sumsByLabel(c stats.Clusters, labels []int) sums {
	s := sums{sum: make([]float64, len(labels)), cnt: make([]float64, len(labels))}
	for k, l := range c.Labels {
		g, _ := slices.BinarySearch(labels, l)
		s.sum[g], s.cnt[g] = c.Sum[k], float64(c.Count[k])
	}
	return s
}

// mean is the item mean of s, NaN without items.
func mean(s sums) float64 {
	var sum, n float64
	for g := range s.sum {
		sum += s.sum[g]
		n += s.cnt[g]
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / n
}

// Weighted returns the item scores whose item mean is the mean of report
// scores, when every report has the same n items with weights w: item i
// of a report scores n·w_i·x_i/Σw, so a report's items average to its
// weighted mean Σ w_i·x_i/Σw. scale multiplies every score (100 for
// points). The scores are written at the start of dst when it has room
// for len(x) of them (a new slice otherwise) and returned.
func Weighted(dst, x, w []float64, scale float64) []float64 {
	var sw float64
	for _, v := range w {
		sw += v
	}
	out := slices.Grow(dst[:0], len(x))[:len(x)]
	n := float64(len(x))
	for i := range x {
		out[i] = scale * n * w[i] * x[i] / sw
	}
	return out
}

// Columns are the columns Cells fills, to append to a headline table.
func (b *Board) Columns() []analysis.Column {
	d, u := b.cfg.Decimals, b.cfg.Unit
	return []analysis.Column{
		{Name: "rank_lo", Title: "rank lo", Doc: "lower end of the 95 % rank interval (cluster bootstrap of the ranking, resampling " + u + ")"},
		{Name: "rank_hi", Title: "rank hi", Doc: "upper end of the 95 % rank interval"},
		{Name: "cluster_lo", Title: "cluster 95% lo", Decimals: d, Doc: "cluster bootstrap percentile interval (resampling " + u + "), lower end"},
		{Name: "cluster_hi", Title: "cluster 95% hi", Decimals: d, Doc: "cluster bootstrap percentile interval, upper end"},
		{Name: "se_cluster", Title: "SE cluster", Decimals: d + 1, Doc: "CR1 cluster-robust standard error of the mean, clustered by " + u + " (Stata vce(cluster), statsmodels cov_type='cluster')"},
		{Name: "se_naive", Title: "SE naive", Decimals: d + 1, Doc: "standard error treating items as independent, s/√n"},
		{Name: "design_effect", Title: "design effect", Decimals: 2, Doc: "(SE cluster / SE naive)²"},
		{Name: "eff_clusters", Title: "eff. clusters", Decimals: 1, Doc: "effective number of clusters G* (Carter, Schnepel and Steigerwald 2017, ρ = 1)"},
		{Name: "clusters", Doc: u + " with a scored item"},
	}
}

// Cell is x as a number, or an undefined cell saying why when err is
// not nil: the reason of a *stats.UndefinedError, else err's text.
func Cell(x float64, err error) analysis.Cell {
	var u *stats.UndefinedError
	switch {
	case errors.As(err, &u):
		return analysis.Undefined(u.Reason)
	case err != nil:
		return analysis.Undefined(err.Error())
	}
	return analysis.Number(x)
}

// Index returns the position of the named system in the ranking, or -1.
func (b *Board) Index(name string) int { return slices.Index(b.Names, name) }

// Cells returns the cells of Columns for the named system; undefined
// cells for a system not in the ranking.
func (b *Board) Cells(name string) []analysis.Cell {
	s := b.Index(name)
	if s < 0 {
		out := make([]analysis.Cell, len(b.Columns()))
		for i := range out {
			out[i] = analysis.Undefined("not ranked")
		}
		return out
	}
	rlo, rhi := Cell(0, b.rankErr), Cell(0, b.rankErr)
	if b.rankErr == nil {
		rlo, rhi = analysis.Int(b.Ranks[s].Lo), analysis.Int(b.Ranks[s].Hi)
	}
	m, err := b.Means[s], b.meanErr[s]
	clusters := analysis.Int(m.Clusters)
	if err != nil {
		clusters = Cell(0, err)
	}
	return []analysis.Cell{rlo, rhi, Cell(b.Lo[s], b.bootErr[s]), Cell(b.Hi[s], b.bootErr[s]),
		Cell(m.SE, err), Cell(m.NaiveSE, err), Cell(m.DesignEffect, err), Cell(m.EffectiveClusters, err), clusters}
}

// Tier returns the tie group of the named system as a cell.
func (b *Board) Tier(name string) analysis.Cell {
	s := b.Index(name)
	switch {
	case s < 0:
		return analysis.Undefined("not ranked")
	case b.scored[s] == 0:
		return analysis.Undefined("no scored item")
	case b.Groups == nil:
		return analysis.Undefined("no resamples")
	}
	return analysis.Int(b.Groups[s])
}

// PowerNote is the note on the minimum detectable difference, "" when no
// pair could be compared.
func (b *Board) PowerNote() string {
	if !b.mddOK {
		return ""
	}
	points := b.cfg.Points
	if points != "" {
		points = " " + points
	}
	return fmt.Sprintf("Power: differences below %.*f%s are not resolvable with %d %s at 80 %% power (two-sided α = 0.05, Student's t with %d degrees of freedom, from the root mean square CR1 standard error of the adjacent paired differences).",
		b.cfg.Decimals, b.mdd, points, b.Clusters, b.cfg.Unit, b.Clusters-1)
}

// Notes are the notes to add to the headline table: the cluster unit,
// what the tier is, and the power note.
func (b *Board) Notes() []string {
	n := []string{fmt.Sprintf("Clustered by %s (%d): cluster bootstrap with %d resamples (seed %d); tiers are tie groups: walking down the ranking, a system shares the tier of the tier's best system unless a paired sign-flip test over %s resolves them (p < 0.05); rank intervals hold the middle 95 %% of the bootstrap ranks.",
		b.cfg.Unit, b.Clusters, b.cfg.Reps, b.cfg.Seed, b.cfg.Unit)}
	if s := b.PowerNote(); s != "" {
		n = append(n, s)
	}
	return n
}

// PairTable is the table of paired comparisons of adjacent systems.
func (b *Board) PairTable(benchmark, title string) *analysis.Table {
	t := b.pairsTable(benchmark, "pairs", title,
		fmt.Sprintf("Each system against the next in the headline ranking, on the items both scored: mean paired difference with its 95 %% paired cluster bootstrap interval and CR1 standard error (clustered by %s), two-sided p-value of the sign-flip permutation test over %s (seed %d), and the p-value Holm-adjusted across the table's pairs.", b.cfg.Unit, b.cfg.Unit, b.cfg.Seed),
		b.Names, b.Pairs, "Holm-adjusted across the adjacent pairs")
	if s := b.PowerNote(); s != "" {
		t.Notes = append(t.Notes, s)
	}
	return t
}

// PairColumns are the columns of a table of paired comparisons, with
// differences to decimals places: shared and clusters document the count
// columns, over says what a difference is the mean over, holmDoc the
// family of the Holm adjustment.
func PairColumns(decimals int, shared, clusters, over, holmDoc string) []analysis.Column {
	d := decimals
	return []analysis.Column{
		{Name: "system", Doc: "the higher-ranked system"},
		{Name: "next", Doc: "the next system in the ranking"},
		{Name: "shared", Doc: shared},
		{Name: "clusters", Doc: clusters},
		{Name: "difference", Decimals: d, Doc: "mean of system - next over " + over},
		{Name: "ci_lo", Title: "95% lo", Decimals: d, Doc: "paired cluster bootstrap percentile interval, lower end"},
		{Name: "ci_hi", Title: "95% hi", Decimals: d, Doc: "paired cluster bootstrap percentile interval, upper end"},
		{Name: "se_cluster", Title: "SE cluster", Decimals: d + 1, Doc: "CR1 cluster-robust standard error of the difference"},
		{Name: "p", Decimals: 4, Doc: "two-sided p-value, paired sign-flip permutation test over clusters"},
		{Name: "p_method", Title: "p method", Doc: "exact (every sign pattern) or sampled (seeded patterns)"},
		{Name: "p_holm", Title: "p Holm", Decimals: 4, Doc: holmDoc},
		{Name: "resolved", Doc: "yes when the Holm-adjusted p-value is below 0.05"},
	}
}

// pairsTable is a table of paired comparisons, one row per pair.
func (b *Board) pairsTable(benchmark, name, title, caption string, names []string, pairs []Pair, holmDoc string) *analysis.Table {
	d := b.cfg.Decimals
	t := &analysis.Table{Benchmark: benchmark, Name: name, Title: title, Caption: caption,
		Columns: PairColumns(d, "items both scored", b.cfg.Unit+" of the shared items", "the shared items", holmDoc)}
	for _, p := range pairs {
		a, n := analysis.Text(names[p.A]), analysis.Text(names[p.B])
		if p.Err != nil {
			u := Cell(0, p.Err)
			t.AddRow(a, n, u, u, u, u, u, u, u, analysis.Text(""), u, analysis.Text("no"))
			continue
		}
		method := "sampled"
		if p.Exact {
			method = "exact"
		}
		resolved := "no"
		if p.Holm < Alpha {
			resolved = "yes"
		}
		t.AddRow(a, n, analysis.Int(p.Items), analysis.Int(p.Clusters), analysis.Number(p.Diff), analysis.Number(p.Lo), analysis.Number(p.Hi),
			analysis.Number(p.SE), analysis.Number(p.P), analysis.Text(method), analysis.Number(p.Holm), analysis.Text(resolved))
	}
	return t
}

// ProportionColumns are the columns of ProportionCells: the Wilson
// interval of a proportion beside the Wald one.
func ProportionColumns(decimals int, wald bool) []analysis.Column {
	c := []analysis.Column{
		{Name: "wilson_lo", Title: "Wilson lo", Unit: "%", Decimals: decimals, Doc: "95 % Wilson score interval of the proportion, lower end (items independent)"},
		{Name: "wilson_hi", Title: "Wilson hi", Unit: "%", Decimals: decimals, Doc: "95 % Wilson score interval, upper end"},
	}
	if wald {
		c = append(c,
			analysis.Column{Name: "wald_lo", Title: "Wald lo", Unit: "%", Decimals: decimals, Doc: "95 % Wald interval p ± 1.96·√(p(1-p)/n), the paper's toolkit convention, lower end"},
			analysis.Column{Name: "wald_hi", Title: "Wald hi", Unit: "%", Decimals: decimals, Doc: "95 % Wald interval, upper end"})
	}
	return c
}

// ProportionCells are the cells of ProportionColumns for successes out of
// n, in percent.
func ProportionCells(successes, n int, wald bool) []analysis.Cell {
	lo, hi, err := stats.Wilson(successes, n, Level)
	out := []analysis.Cell{Cell(100*lo, err), Cell(100*hi, err)}
	if wald {
		lo, hi := math.NaN(), math.NaN()
		if n > 0 {
			p := float64(successes) / float64(n)
			h := stats.NormalQuantile(1-(1-Level)/2) * math.Sqrt(p*(1-p)/float64(n))
			lo, hi = p-h, p+h
		}
		out = append(out, Cell(100*lo, err), Cell(100*hi, err))
	}
	return out
}

// Terminal returns the headline table of res narrowed for the terminal
// when it carries Columns: a leading "rank (95%)" column ("2 (1-3)", the
// rank of res.Ranks with its interval) in place of any rank column,
// without the rank interval, naive error, cluster count and proportion
// interval columns (they stay in the files and the notes give the
// cluster count). Its rows are in ranking order, and its columns put
// first what a narrow terminal must keep: the rank, the system, the
// headline score (the column that holds res.Scores), its cluster
// interval and error and the tier; the per-track and per-part columns
// follow, so that a terminal too narrow for all drops those. A headline
// without rank intervals is returned as it is.
func Terminal(res *analysis.Result) *analysis.Table {
	t := res.Table(res.Headline)
	if t == nil {
		return nil
	}
	lo, hi := t.Col("rank_lo"), t.Col("rank_hi")
	if lo < 0 || hi < 0 {
		return t
	}
	rankOf, rankText := map[string]int{}, map[string]string{}
	ranks := res.Ranks()
	shared := analysis.Shared(ranks)
	for i, r := range ranks {
		rankOf[res.Ranking[i]] = r
		rankText[res.Ranking[i]] = analysis.FormatRank(r, shared[i])
	}
	drop := map[int]bool{lo: true, hi: true, t.Col("rank"): true}
	for _, name := range []string{"se_naive", "eff_clusters", "clusters", "wilson_lo", "wilson_hi", "wald_lo", "wald_hi"} {
		drop[t.Col(name)] = true
	}
	out := &analysis.Table{Benchmark: t.Benchmark, Name: t.Name, Title: t.Title, Caption: t.Caption, Notes: t.Notes,
		Columns: []analysis.Column{{Name: "rank", Title: "rank (95%)", Doc: "rank and its 95 % rank interval"}}}
	order := columnOrder(t, res.Scores, drop)
	for _, i := range order {
		out.Columns = append(out.Columns, t.Columns[i])
	}
	rows := slices.Clone(t.Rows)
	slices.SortStableFunc(rows, func(a, b []analysis.Cell) int {
		ra, oka := rankOf[a[0].Text]
		rb, okb := rankOf[b[0].Text]
		switch {
		case oka && okb:
			return cmp.Compare(ra, rb)
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	for _, r := range rows {
		rank := analysis.Undefined("not ranked")
		if s, ok := rankText[r[0].Text]; ok {
			if r[lo].IsNum && r[hi].IsNum {
				s += fmt.Sprintf(" (%s-%s)", r[lo].Format(0), r[hi].Format(0))
			}
			rank = analysis.Text(s)
		}
		row := []analysis.Cell{rank}
		for _, i := range order {
			row = append(row, r[i])
		}
		out.AddRow(row...)
	}
	return out
}

// columnOrder lists the columns of t that are not dropped: the system
// (the first column), then the headline score, its cluster interval and
// error and the tier, then the others in their order. The headline score
// is the first numeric column whose every value is the row's system's
// score in scores.
func columnOrder(t *analysis.Table, scores map[string]float64, drop map[int]bool) []int {
	score := -1
	for c := 1; c < len(t.Columns) && score < 0 && len(scores) > 0; c++ {
		matched := 0
		for _, r := range t.Rows {
			v, ok := scores[r[0].Text]
			if !ok {
				continue
			}
			if !r[c].IsNum || math.Abs(r[c].Num-v) > 1e-9*math.Max(1, math.Abs(v)) {
				matched = -1
				break
			}
			matched++
		}
		if matched > 0 {
			score = c
		}
	}
	first := []int{0}
	for _, c := range []int{score, t.Col("cluster_lo"), t.Col("cluster_hi"), t.Col("se_cluster"), t.Col("tier")} {
		if c > 0 && !drop[c] && !slices.Contains(first, c) {
			first = append(first, c)
		}
	}
	order := first
	for i := range t.Columns {
		if !drop[i] && !slices.Contains(first, i) {
			order = append(order, i)
		}
	}
	return order
}
