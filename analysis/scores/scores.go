// Package scores turns a released per-task score matrix (one row per
// task, one column per system, some cells empty) into a leaderboard with
// honest uncertainty: clustered intervals, paired comparisons of adjacent
// systems with Holm-adjusted p-values, rank intervals, tie groups, group
// breakdowns and the comparison with published means. It needs no
// recorded calls, only the scores. The statistics are those of
// analysis/stats; docs/scores.md states their conventions.
package scores

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// Config sets the statistics of Analyse.
type Config struct {
	// Reps is the number of bootstrap resamples and of sampled sign
	// patterns (10000 when 0).
	Reps int
	// Seed seeds every resampling (uncertainty.Seed when 0).
	Seed uint64
	// Synthetic marks every output as synthetic data.
	Synthetic bool
	// Published are published means to compare with, if any.
	Published []Published
	// Pairs are pairs of systems (by name) to compare on request, in
	// the table requested_pairs.
	Pairs [][2]string
}

const (
	level = uncertainty.Level // of every interval
	// maxGroupValues bounds the columns of a group breakdown.
	maxGroupValues = 50
)

// Benchmark is the machine name of the result, and so of its output
// folders (csv/scores/, json/scores/, xlsx/scores.xlsx).
const Benchmark = "scores"

// systemStats is what the leaderboard shows of one system besides the
// statistics of its uncertainty board.
type systemStats struct {
	name     string
	scores   []float64
	mean     float64 // over the answered tasks
	complete float64 // over the tasks every system answered
	answered int
}

// Analyse computes the tables of m. The result's ranking is by mean over
// each system's answered tasks, best first. The leaderboard's intervals,
// errors, rank intervals, tie groups and paired comparisons are those of
// an uncertainty board, as in the tables of "finrepro reproduce".
func Analyse(m *Matrix, cfg Config) (*analysis.Result, error) {
	if cfg.Reps == 0 {
		cfg.Reps = uncertainty.DefaultReps
	}
	if cfg.Reps < 0 {
		return nil, fmt.Errorf("scores: %d resamples", cfg.Reps)
	}
	if cfg.Seed == 0 {
		cfg.Seed = uncertainty.Seed // the group breakdowns' too
	}
	if err := checkPairs(m, cfg.Pairs); err != nil {
		return nil, err
	}
	cl, nClusters := stats.ClusterIndex(m.Cluster)
	complete := completeTasks(m)
	dec := decimals(m)
	sys := make([]*systemStats, len(m.Systems))
	for s, name := range m.Systems {
		st := &systemStats{name: name, scores: m.Scores[s], mean: math.NaN(), complete: math.NaN()}
		var sum, sumComplete float64
		var n int
		for t, v := range st.scores {
			if !math.IsNaN(v) {
				st.answered++
				sum += v
				if complete[t] {
					sumComplete += v
					n++
				}
			}
		}
		if m, err := stats.NewClusterMean(st.scores, cl); err == nil {
			st.mean = m.Mean // Σ cluster sums / N, as the board's
		} else if st.answered > 0 {
			st.mean = sum / float64(st.answered)
		}
		if n > 0 {
			st.complete = sumComplete / float64(n)
		}
		sys[s] = st
	}
	slices.SortStableFunc(sys, func(a, b *systemStats) int {
		am, bm := a.rankMean(), b.rankMean()
		switch {
		case am > bm:
			return -1
		case am < bm:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	res := &analysis.Result{Benchmark: Benchmark, Title: "Scores of " + filepath.Base(m.File), Headline: "leaderboard",
		Scores: map[string]float64{}, Synthetic: cfg.Synthetic}
	ranked := make([][]float64, len(sys))
	for i, st := range sys {
		res.Ranking = append(res.Ranking, st.name)
		ranked[i] = st.scores
		if st.answered > 0 {
			res.Scores[st.name] = st.mean
		}
	}
	board := uncertainty.New(res.Ranking, ranked, cl, uncertainty.Config{Reps: cfg.Reps, Seed: cfg.Seed, Unit: "clusters", Decimals: dec, Requested: cfg.Pairs})
	lb := leaderboard(m, sys, board, dec, nClusters, complete)
	if s := board.PowerNote(); s != "" {
		lb.Notes = append(lb.Notes, s)
	}
	pt := board.PairTable(Benchmark, "Paired comparisons of adjacent systems")
	relabelPairs(pt, dec, "Each system against the next in the ranking, on the tasks both answered: mean paired difference with its 95 % cluster bootstrap interval and CR1 standard error, two-sided p-value of the cluster-level sign-flip permutation test, and the p-value Holm-adjusted across the table's pairs.",
		"Holm-adjusted across the adjacent pairs")
	res.Tables = append(res.Tables, lb, pt)
	for _, rt := range board.RequestedTable(Benchmark) {
		relabelPairs(rt, dec, "Each requested pair on the tasks both answered: mean paired difference (first - second) with its 95 % cluster bootstrap interval and CR1 standard error, two-sided p-value of the cluster-level sign-flip permutation test, and the p-value Holm-adjusted across the requested pairs (not together with the adjacent pairs).",
			"Holm-adjusted across the requested pairs")
		res.Tables = append(res.Tables, rt)
	}
	names := map[string]bool{"leaderboard": true, "pairs": true, "requested_pairs": true, "published": true}
	for g := range m.Groups {
		t, err := groupTable(m, g, sys, cl, cfg, dec, names)
		if err != nil {
			return nil, err
		}
		res.Tables = append(res.Tables, t)
	}
	if len(cfg.Published) > 0 {
		res.Tables = append(res.Tables, publishedTable(cfg.Published, sys, board, dec))
	}
	if cfg.Synthetic {
		for _, t := range res.Tables {
			t.Title = "SYNTHETIC DATA: " + t.Title
		}
	}
	return res, nil
}

// relabelPairs words a table of paired comparisons of the board in tasks
// rather than items.
func relabelPairs(t *analysis.Table, dec int, caption, holmDoc string) {
	first, second := t.Columns[0].Doc, t.Columns[1].Doc
	t.Caption = caption
	t.Columns = uncertainty.PairColumns(dec, "tasks both answered", "clusters of the shared tasks", "the shared tasks", holmDoc)
	t.Columns[0].Doc, t.Columns[1].Doc = first, second
}

// rankMean is the mean a system is ranked by; a system with no score
// ranks last.
func (st *systemStats) rankMean() float64 {
	if st.answered == 0 {
		return math.Inf(-1)
	}
	return st.mean
}

// completeTasks marks the tasks every system answered.
func completeTasks(m *Matrix) []bool {
	c := make([]bool, len(m.Tasks))
	for t := range c {
		c[t] = true
		for s := range m.Systems {
			if math.IsNaN(m.Scores[s][t]) {
				c[t] = false
				break
			}
		}
	}
	return c
}

// decimals is the number of decimals of means: 3 for scores within
// [-1, 1] (proportions), 2 otherwise (points out of 100).
func decimals(m *Matrix) int {
	for _, row := range m.Scores {
		for _, v := range row {
			if math.Abs(v) > 1 {
				return 2
			}
		}
	}
	return 3
}

// binary says whether every score is 0 or 1, so that means are
// proportions with Wilson intervals.
func binary(m *Matrix) bool {
	some := false
	for _, row := range m.Scores {
		for _, v := range row {
			if math.IsNaN(v) {
				continue
			}
			if v != 0 && v != 1 {
				return false
			}
			some = true
		}
	}
	return some
}

// leaderboard is the headline table: the board's statistics of each
// system with its counts and its mean over the complete tasks.
func leaderboard(m *Matrix, sys []*systemStats, board *uncertainty.Board, dec, nClusters int, complete []bool) *analysis.Table {
	t := &analysis.Table{Benchmark: Benchmark, Name: "leaderboard", Title: "Leaderboard with clustered intervals",
		Caption: fmt.Sprintf("%s: %d tasks in %d clusters, %d systems. Mean over each system's answered tasks with its 95 %% cluster bootstrap percentile interval, CR1 cluster-robust and naive standard errors; rank interval from the cluster bootstrap of the ranking; tie group from paired sign-flip tests against the group's best (α = 0.05).",
			filepath.Base(m.File), len(m.Tasks), nClusters, len(m.Systems)),
		Columns: []analysis.Column{
			{Name: "rank", Doc: "rank by mean over answered tasks, 1 the best"},
			{Name: "rank_lo", Title: "rank lo", Doc: "lower end of the 95 % rank interval (cluster bootstrap of the ranking)"},
			{Name: "rank_hi", Title: "rank hi", Doc: "upper end of the 95 % rank interval"},
			{Name: "system", Doc: "system (column of the score matrix)"},
			{Name: "tie_group", Title: "tie group", Doc: "systems not resolved from the group's best by a paired sign-flip test at α = 0.05 share a group"},
			{Name: "mean", Decimals: dec, Better: analysis.Higher, Doc: "mean over the system's answered tasks"},
			{Name: "ci_lo", Title: "95% lo", Decimals: dec, Doc: "cluster bootstrap percentile interval, lower end"},
			{Name: "ci_hi", Title: "95% hi", Decimals: dec, Doc: "cluster bootstrap percentile interval, upper end"},
			{Name: "se_cluster", Title: "SE cluster", Decimals: dec + 1, Doc: "CR1 cluster-robust standard error of the mean (Stata vce(cluster), statsmodels cov_type='cluster')"},
			{Name: "se_naive", Title: "SE naive", Decimals: dec + 1, Doc: "standard error treating tasks as independent, s/√n"},
			{Name: "design_effect", Title: "design effect", Decimals: 2, Doc: "(SE cluster / SE naive)²"},
			{Name: "eff_clusters", Title: "eff. clusters", Decimals: 1, Doc: "effective number of clusters G* (Carter, Schnepel and Steigerwald 2017, ρ = 1)"},
			{Name: "clusters", Doc: "clusters with an answered task"},
			{Name: "answered", Doc: "tasks with a score"},
			{Name: "missing", Doc: "tasks without a score"},
			{Name: "mean_complete", Title: "mean (complete)", Decimals: dec, Better: analysis.Higher, Doc: "mean over the tasks every system answered"},
		},
	}
	bin := binary(m)
	if bin {
		t.Columns = append(t.Columns,
			analysis.Column{Name: "wilson_lo", Title: "Wilson lo", Decimals: dec, Doc: "95 % Wilson score interval of the proportion, lower end (treats tasks as independent)"},
			analysis.Column{Name: "wilson_hi", Title: "Wilson hi", Decimals: dec, Doc: "95 % Wilson score interval, upper end"})
	}
	nComplete := 0
	for _, c := range complete {
		if c {
			nComplete++
		}
	}
	for i, st := range sys {
		rank := analysis.Int(i + 1)
		if board.Ranks != nil {
			rank = analysis.Int(board.Ranks[i].Rank)
		}
		meanCell := analysis.Undefined("no answered task")
		if st.answered > 0 {
			meanCell = analysis.Number(st.mean)
		}
		// rank_lo, rank_hi, cluster_lo, cluster_hi, se_cluster, se_naive,
		// design_effect, eff_clusters, clusters
		c := board.Cells(st.name)
		row := []analysis.Cell{rank, c[0], c[1], analysis.Text(st.name), board.Tier(st.name), meanCell,
			c[2], c[3], c[4], c[5], c[6], c[7], c[8],
			analysis.Int(st.answered), analysis.Int(len(m.Tasks) - st.answered), uncertainty.Cell(st.complete, completeErr(nComplete))}
		if bin {
			succ := 0
			for _, v := range st.scores {
				if v == 1 {
					succ++
				}
			}
			lo, hi, err := stats.Wilson(succ, st.answered, level)
			row = append(row, uncertainty.Cell(lo, err), uncertainty.Cell(hi, err))
		}
		t.AddRow(row...)
	}
	t.Notes = append(t.Notes,
		fmt.Sprintf("Missing cells: %d of %d tasks were answered by every system; \"mean\" is over each system's answered tasks, \"mean (complete)\" over those %d.", nComplete, len(m.Tasks), nComplete),
		"Ranks: equal means share the better rank; the rank interval holds the middle 95 % of the ranks in the cluster bootstrap (a system with no answered task in a resample ranks last there).")
	if nClusters == len(m.Tasks) {
		t.Notes = append(t.Notes, "No cluster column: every task is its own cluster, so the clustered and naive standard errors differ only by the small-sample factor.")
	}
	if bin {
		t.Notes = append(t.Notes, "Scores are 0/1: Wilson intervals treat tasks as independent; with clustered tasks the cluster interval is the one to read.")
	}
	return t
}

func completeErr(n int) error {
	if n == 0 {
		return fmt.Errorf("no task answered by every system")
	}
	return nil
}

// groupTable breaks the means down by the values of group column g: one
// mean and count per value, and, when the column has exactly two values,
// their difference with its cluster bootstrap interval (tasks of both
// values in one cluster, such as the two language versions of a task,
// resampled together).
func groupTable(m *Matrix, g int, sys []*systemStats, cl []int, cfg Config, dec int, names map[string]bool) (*analysis.Table, error) {
	grp := m.Groups[g]
	vals := slices.Clone(grp.Values)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	if len(vals) > maxGroupValues {
		return nil, fmt.Errorf("scores: group column %q has %d values, at most %d", grp.Name, len(vals), maxGroupValues)
	}
	name := "by_" + fileName(grp.Name)
	for names[name] {
		name += "_"
	}
	names[name] = true
	t := &analysis.Table{Benchmark: Benchmark, Name: name, Title: "Means by " + grp.Name,
		Caption: fmt.Sprintf("Each system's mean over its answered tasks for each value of %s, with the number of tasks.", grp.Name),
		Columns: []analysis.Column{{Name: "system", Doc: "system"}}}
	label := func(v string) string {
		if v == "" {
			return "(empty)"
		}
		return v
	}
	for _, v := range vals {
		t.Columns = append(t.Columns,
			analysis.Column{Name: label(v), Decimals: dec, Better: analysis.Higher, Doc: fmt.Sprintf("mean over tasks with %s = %s", grp.Name, label(v))},
			analysis.Column{Name: label(v) + " n", Doc: fmt.Sprintf("answered tasks with %s = %s", grp.Name, label(v))})
	}
	two := len(vals) == 2
	if two {
		d := label(vals[0]) + " - " + label(vals[1])
		t.Caption += fmt.Sprintf(" %q is the difference of the two means with its 95 %% cluster bootstrap percentile interval.", d)
		t.Columns = append(t.Columns,
			analysis.Column{Name: d, Decimals: dec, Doc: "difference of the two group means"},
			analysis.Column{Name: d + " lo", Decimals: dec, Doc: "cluster bootstrap percentile interval, lower end"},
			analysis.Column{Name: d + " hi", Decimals: dec, Doc: "cluster bootstrap percentile interval, upper end"})
	}
	_, nClusters := stats.ClusterIndex(m.Cluster)
	for _, st := range sys {
		row := []analysis.Cell{analysis.Text(st.name)}
		sub := make([][]float64, len(vals))
		for k, v := range vals {
			y := make([]float64, len(st.scores))
			var s float64
			var n int
			for i, x := range st.scores {
				y[i] = math.NaN()
				if grp.Values[i] == v && !math.IsNaN(x) {
					y[i] = x
					s += x
					n++
				}
			}
			sub[k] = y
			c := analysis.Undefined("no answered task")
			if n > 0 {
				c = analysis.Number(s / float64(n))
			}
			row = append(row, c, analysis.Int(n))
		}
		if two {
			a, b := aligned(sub[0], cl, nClusters), aligned(sub[1], cl, nClusters)
			d := a.Mean(seq(nClusters)) - b.Mean(seq(nClusters))
			lo, hi, err := stats.Bootstrap(nClusters, cfg.Reps, cfg.Seed, level, func(idx []int) float64 { return a.Mean(idx) - b.Mean(idx) })
			dc := analysis.Number(d)
			if math.IsNaN(d) {
				dc = analysis.Undefined("a group without answered tasks")
			}
			row = append(row, dc, uncertainty.Cell(lo, err), uncertainty.Cell(hi, err))
		}
		t.AddRow(row...)
	}
	return t, nil
}

// aligned returns the clusters of y over every cluster index 0..n-1, so
// that two subsets of the tasks resample alike.
func aligned(y []float64, cl []int, n int) stats.Clusters {
	c := stats.Clusters{Labels: seq(n), Sum: make([]float64, n), Count: make([]int, n)}
	for i, v := range y {
		if !math.IsNaN(v) {
			c.Sum[cl[i]] += v
			c.Count[cl[i]]++
		}
	}
	return c
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// fileName keeps the letters, digits, '-' and '_' of s (others become
// '_'), so that a group column names a table file.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// publishedTable compares published means with the computed ones.
func publishedTable(pub []Published, sys []*systemStats, board *uncertainty.Board, dec int) *analysis.Table {
	t := &analysis.Table{Benchmark: Benchmark, Name: "published", Title: "Published against computed means",
		Caption: "Each published mean against the mean computed from the score matrix over the system's answered tasks: reproduced when they agree within half a unit of the published value's last printed digit; \"in interval\" says whether the published mean lies in the computed 95 % cluster bootstrap interval.",
		Columns: []analysis.Column{
			{Name: "system", Doc: "system"},
			{Name: "published", Decimals: dec + 1, Doc: "published mean, as printed"},
			{Name: "computed", Decimals: dec + 1, Doc: "mean over the system's answered tasks"},
			{Name: "difference", Decimals: dec + 1, Doc: "computed - published"},
			{Name: "tolerance", Decimals: dec + 2, Doc: "half a unit of the published value's last printed digit"},
			{Name: "in_interval", Title: "in interval", Doc: "published mean inside the computed 95 % cluster bootstrap interval"},
			{Name: "verdict", Doc: "reproduced, differs or not comparable"},
		}}
	by := map[string]*systemStats{}
	for _, st := range sys {
		by[st.name] = st
	}
	sorted := slices.Clone(pub)
	slices.SortStableFunc(sorted, func(a, b Published) int { return cmp.Compare(a.System, b.System) })
	for _, p := range sorted {
		st, ok := by[p.System]
		if !ok || st.answered == 0 {
			u := analysis.Undefined("not in the score matrix")
			t.AddRow(analysis.Text(p.System), analysis.Number(p.Value), u, u, analysis.Number(p.Tolerance), analysis.Text(""), analysis.Text(analysis.NotComparable))
			continue
		}
		d := st.mean - p.Value
		verdict := analysis.Differs
		if math.Abs(d) <= p.Tolerance*(1+1e-9) {
			verdict = analysis.Reproduced
		}
		in := analysis.Text("n/a")
		if c := board.Cells(st.name); c[2].IsNum && c[3].IsNum {
			in = analysis.Text(map[bool]string{true: "yes", false: "no"}[c[2].Num <= p.Value && p.Value <= c[3].Num])
		}
		t.AddRow(analysis.Text(p.System), analysis.Number(p.Value), analysis.Number(st.mean), analysis.Number(d), analysis.Number(p.Tolerance), in, analysis.Text(verdict))
	}
	return t
}

// A Published is one published mean.
type Published struct {
	System string
	Value  float64
	// Tolerance is half a unit of the value's last printed digit.
	Tolerance float64
}

// tolerance returns half a unit of the last digit of a number as printed.
func tolerance(s string) float64 {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp, _ := strconv.Atoi(s[i+1:])
		return tolerance(s[:i]) * math.Pow(10, float64(exp))
	}
	d := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		d = len(s) - i - 1
	}
	return 0.5 * math.Pow(10, -float64(d))
}

// Terminal returns the tables of a result of Analyse for a terminal:
// the leaderboard and the paired comparisons narrowed (see Compact and
// compactPairs), the others as they are.
func Terminal(res *analysis.Result) []*analysis.Table {
	var out []*analysis.Table
	for _, t := range res.Tables {
		switch t.Name {
		case "leaderboard":
			out = append(out, Compact(res))
		case "pairs", "requested_pairs":
			out = append(out, compactPairs(t))
		default:
			out = append(out, t)
		}
	}
	return out
}

// compactPairs puts each pair in one column and each interval in one
// cell.
func compactPairs(pt *analysis.Table) *analysis.Table {
	col := func(name string) analysis.Column { return pt.Columns[pt.Col(name)] }
	diff := col("difference")
	t := &analysis.Table{Benchmark: pt.Benchmark, Name: "pairs_compact", Title: pt.Title, Caption: pt.Caption, Notes: pt.Notes,
		Columns: []analysis.Column{{Name: "pair", Doc: "system - next"}, col("shared"), diff,
			{Name: "ci", Title: "95% interval"}, col("p"), col("p_holm"), col("resolved")}}
	at := func(row []analysis.Cell, name string) analysis.Cell { return row[pt.Col(name)] }
	for _, r := range pt.Rows {
		ci := analysis.Undefined("no interval")
		if lo, hi := at(r, "ci_lo"), at(r, "ci_hi"); lo.IsNum && hi.IsNum {
			ci = analysis.Text("[" + lo.Format(diff.Decimals) + ", " + hi.Format(diff.Decimals) + "]")
		}
		t.AddRow(analysis.Text(at(r, "system").Text+" - "+at(r, "next").Text), at(r, "shared"), at(r, "difference"), ci,
			at(r, "p"), at(r, "p_holm"), at(r, "resolved"))
	}
	return t
}

// Compact returns the leaderboard of a result of Analyse narrowed for a
// terminal: the rank with its interval in one column ("2 (1-3)"), the
// interval in another ("[66.31, 75.35]"), and the columns that explain
// its width; nil when res has no leaderboard.
func Compact(res *analysis.Result) *analysis.Table {
	lb := res.Table("leaderboard")
	if lb == nil {
		return nil
	}
	col := func(name string) analysis.Column { return lb.Columns[lb.Col(name)] }
	mean := col("mean")
	t := &analysis.Table{Benchmark: lb.Benchmark, Name: "leaderboard_compact", Title: lb.Title, Caption: lb.Caption, Notes: lb.Notes,
		Columns: []analysis.Column{
			{Name: "rank", Title: "rank (95%)", Doc: "rank and its 95 % interval"},
			col("system"), {Name: "tie_group", Title: "tie"}, mean,
			{Name: "ci", Title: "95% interval", Doc: "cluster bootstrap percentile interval"},
			col("se_cluster"), col("se_naive"), {Name: "design_effect", Title: "deff", Decimals: 2},
			col("clusters"), col("answered"),
		}}
	at := func(row []analysis.Cell, name string) analysis.Cell { return row[lb.Col(name)] }
	for _, r := range lb.Rows {
		rank := at(r, "rank").Format(0)
		if lo, hi := at(r, "rank_lo"), at(r, "rank_hi"); lo.IsNum && hi.IsNum {
			rank += fmt.Sprintf(" (%s-%s)", lo.Format(0), hi.Format(0))
		}
		ci := analysis.Undefined("no interval")
		if lo, hi := at(r, "ci_lo"), at(r, "ci_hi"); lo.IsNum && hi.IsNum {
			ci = analysis.Text("[" + lo.Format(mean.Decimals) + ", " + hi.Format(mean.Decimals) + "]")
		}
		t.AddRow(analysis.Text(rank), at(r, "system"), at(r, "tie_group"), at(r, "mean"), ci,
			at(r, "se_cluster"), at(r, "se_naive"), at(r, "design_effect"), at(r, "clusters"), at(r, "answered"))
	}
	return t
}
