package analysis

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/results"
)

// A Variant is one run of a sensitivity sweep: a knob set to a value.
type Variant struct {
	Knob, Value string
	Ranking     []string
	// Ranks are the competition ranks of Ranking (Result.Ranks): exactly
	// tied systems share one.
	Ranks []int
	// Scores are the headline scores by system (Result.Scores).
	Scores map[string]float64
	// Rho and Tau compare Ranks with the baseline's over the systems both
	// rank (Spearman with average ranks for ties, Kendall's tau-b);
	// Undefined says why they are not defined (fewer than 2 systems, ...),
	// empty otherwise.
	Rho, Tau  float64
	Undefined string
	// Moved lists the systems whose rank changed, as "name a->b", a
	// shared rank written "=b".
	Moved []string
	// Missing counts calls without a reply in this variant's run.
	Missing int
}

// A SweepResult is a benchmark's baseline ranking and its variants.
type SweepResult struct {
	Benchmark string
	Baseline  []string
	// BaselineRanks are the competition ranks of Baseline, and
	// BaselineScores its headline scores by system.
	BaselineRanks  []int
	BaselineScores map[string]float64
	Variants       []Variant
}

// Sweep collects b once under in.Settings, scores the baseline and every
// (knob, value) variant, and compares every variant's ranking with the
// baseline's. It reads the cache alone when in.Answer is an offline
// client.
func Sweep(ctx context.Context, b Benchmark, in Input, knobs []Knob) (*SweepResult, error) {
	in.Answer = &memo{next: in.Answer, replies: map[[32]byte]results.Reply{}}
	c, err := b.Collect(ctx, in)
	if err != nil {
		return nil, err
	}
	base, err := b.Score(ctx, c, in.Settings)
	if err != nil {
		return nil, err
	}
	return SweepFrom(ctx, b, in, knobs, c, base)
}

// SweepFrom is Sweep over a collection c and its baseline base, both
// already computed under in.Settings. Knobs without values to sweep cost
// nothing; variants skip the bootstrap (see Knob.Resamples). A variant of a knob that only Score reads is scored from c,
// GOMAXPROCS variants at a time; a variant of a knob marked Calls
// collects again, one at a time, through a memo of replies so that a
// call repeated across variants is read and decoded once.
func SweepFrom(ctx context.Context, b Benchmark, in Input, knobs []Knob, c Collection, base *Result) (*SweepResult, error) {
	type job struct {
		knob, value string
		calls       bool
	}
	var jobs []job
	for _, k := range knobs {
		for _, v := range k.Sweep {
			jobs = append(jobs, job{k.Name, v, k.Calls})
		}
	}
	sr := &SweepResult{Benchmark: b.Name(), Baseline: base.Ranking, BaselineRanks: base.Ranks(), BaselineScores: base.Scores}
	if len(jobs) == 0 {
		return sr, nil
	}
	var resamples []string
	for _, k := range b.Knobs() {
		if k.Resamples {
			resamples = append(resamples, k.Name)
		}
	}
	sr.Variants = make([]Variant, len(jobs))
	errs := make([]error, len(jobs))
	runOne := func(i int) {
		s := Settings{}
		maps.Copy(s, in.Settings)
		for _, name := range resamples {
			s[name] = "0" // a ranking needs no interval
		}
		s[jobs[i].knob] = jobs[i].value
		var r *Result
		var err error
		if jobs[i].calls {
			vin := in
			vin.Settings = s
			r, err = Run(ctx, b, vin)
		} else {
			r, err = b.Score(ctx, c, s)
		}
		if err != nil {
			errs[i] = fmt.Errorf("sweep %s=%s: %w", jobs[i].knob, jobs[i].value, err)
			return
		}
		sr.Variants[i] = variant(jobs[i].knob, jobs[i].value, base, r)
	}
	if _, ok := in.Answer.(*memo); !ok && slices.ContainsFunc(jobs, func(j job) bool { return j.calls }) {
		in.Answer = &memo{next: in.Answer, replies: map[[32]byte]results.Reply{}}
	}
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, j := range jobs {
		if j.calls {
			runOne(i)
			continue
		}
		g.Go(func() error { runOne(i); return nil })
	}
	g.Wait() // errors are in errs, reported in order
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return sr, nil
}

// memo answers every call once: a sweep's variants mostly repeat the
// baseline's calls, which need not be read and decoded again. It is safe
// for concurrent use.
type memo struct {
	next    results.Answerer
	mu      sync.Mutex
	replies map[[32]byte]results.Reply // by promptKey
}

func (m *memo) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	keys := make([][32]byte, len(calls))
	keyed := make([]bool, len(calls))
	var todo []results.Call
	var at []int
	for i, c := range calls {
		k, err := promptKey(&c.Prompt)
		if err != nil {
			todo, at = append(todo, c), append(at, i) // not memoised
			continue
		}
		keys[i], keyed[i] = k, true
		m.mu.Lock()
		r, ok := m.replies[k]
		m.mu.Unlock()
		if ok {
			out[i] = r
			continue
		}
		todo, at = append(todo, c), append(at, i)
	}
	if len(todo) > 0 {
		replies := m.next.Answer(ctx, todo)
		m.mu.Lock()
		for j, r := range replies {
			i := at[j]
			out[i] = r
			if keyed[i] && r.Err == nil {
				m.replies[keys[i]] = r
			}
		}
		m.mu.Unlock()
	}
	return out
}

// promptKey identifies a prompt: the SHA-256 of its fields, each preceded
// by its length, the parameters as JSON. It fails when the parameters do
// not encode.
func promptKey(p *results.Prompt) ([32]byte, error) {
	params, err := json.Marshal(p.Params)
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	var n [8]byte
	for _, f := range []string{p.Provider, p.Model, p.System, p.User, string(params), strconv.Itoa(p.Sample)} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		io.WriteString(h, f)
	}
	return [32]byte(h.Sum(nil)), nil
}

func variant(knob, value string, base, r *Result) Variant {
	v := Variant{Knob: knob, Value: value, Ranking: r.Ranking, Ranks: r.Ranks(), Scores: r.Scores, Missing: r.Missing}
	baseRanks := base.Ranks()
	baseShared, shared := Shared(baseRanks), Shared(v.Ranks)
	var x, y []float64
	for i, s := range base.Ranking {
		j := slices.Index(r.Ranking, s)
		if j < 0 {
			continue
		}
		x, y = append(x, float64(baseRanks[i])), append(y, float64(v.Ranks[j]))
		if baseRanks[i] != v.Ranks[j] {
			v.Moved = append(v.Moved, fmt.Sprintf("%s %s->%s", s, FormatRank(baseRanks[i], baseShared[i]), FormatRank(v.Ranks[j], shared[j])))
		}
	}
	rho, err := stats.Spearman(x, y)
	if err == nil {
		v.Tau, err = stats.KendallTauB(x, y)
	}
	if err != nil {
		v.Undefined = err.Error()
	} else {
		v.Rho = rho
	}
	return v
}

// Tables renders a sweep as two tables: one row per variant (ranking, rho,
// tau, moved systems) and the rank change of every system in every variant
// (variant rank minus baseline rank), drawn as a heatmap.
func (sr *SweepResult) Tables() (variants, changes *Table) {
	variants = &Table{
		Benchmark: sr.Benchmark, Name: "sensitivity",
		Title:   "Sensitivity: rankings under every swept setting",
		Caption: "Each variant changes one knob from the baseline; rho and tau compare its ranking with the baseline ranking. Computed from the cache alone.",
		Columns: []Column{
			{Name: "knob"}, {Name: "value"},
			{Name: "spearman_rho", Title: "Spearman rho", Decimals: 3},
			{Name: "kendall_tau", Title: "Kendall tau-b", Decimals: 3},
			{Name: "moved", Title: "rank changes", Doc: "systems whose rank changed, baseline -> variant; =2 is a shared rank"},
			{Name: "ranking", Title: "ranking (best first)", Doc: "A = B: exactly tied, sharing a rank"},
			{Name: "scores", Title: "scores (in ranking order)", Doc: "each system's headline score under the variant, n/a where it has none"},
		},
	}
	changes = &Table{
		Benchmark: sr.Benchmark, Name: "rank_changes",
		Title:   "Rank change per system and variant",
		Caption: "Variant rank minus baseline rank: negative moved up, positive moved down.",
		Columns: []Column{{Name: "system"}},
	}
	var ys []string
	for _, v := range sr.Variants {
		rho, tau := Number(v.Rho), Number(v.Tau)
		if v.Undefined != "" {
			rho, tau = Undefined(v.Undefined), Undefined(v.Undefined)
		}
		moved := strings.Join(v.Moved, "; ")
		if moved == "" {
			moved = "none"
		}
		scores := make([]string, len(v.Ranking))
		for k, s := range v.Ranking {
			scores[k] = "n/a"
			if x, ok := v.Scores[s]; ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
				scores[k] = strconv.FormatFloat(x, 'f', 2, 64)
			}
		}
		variants.AddRow(Text(v.Knob), Text(v.Value), rho, tau, Text(moved), Text(RankingText(v.Ranking, v.Ranks)), Text(strings.Join(scores, ", ")))
		name := v.Knob + "=" + v.Value
		changes.Columns = append(changes.Columns, Column{Name: name})
		ys = append(ys, name)
	}
	for i, s := range sr.Baseline {
		row := []Cell{Text(s)}
		for _, v := range sr.Variants {
			if p := slices.Index(v.Ranking, s); p >= 0 {
				row = append(row, Int(v.Ranks[p]-sr.BaselineRanks[i]))
			} else {
				row = append(row, Undefined("not ranked"))
			}
		}
		changes.AddRow(row...)
	}
	if len(ys) > 0 {
		changes.Charts = []Chart{{ID: "rank_changes", Kind: Heatmap, Title: "Rank changes against the baseline", X: "system", Y: ys}}
	}
	return variants, changes
}

// Baseline is the knob of the baseline's rows in ScoreTable.
const Baseline = "baseline"

// ScoreTable renders a sweep's scores: for the baseline (knob Baseline,
// no value) and then every variant, each system's headline score and
// rank, best first, with their changes from the baseline (variant minus
// baseline; n/a for a system the baseline does not rank).
func (sr *SweepResult) ScoreTable() *Table {
	t := &Table{
		Benchmark: sr.Benchmark, Name: "sensitivity_scores",
		Title:   "Sensitivity: headline scores under every swept setting",
		Caption: "The baseline, then every variant: each system's headline score and rank, and their change from the baseline (variant minus baseline).",
		Columns: []Column{
			{Name: "knob"}, {Name: "value"}, {Name: "system"},
			{Name: "score", Decimals: 2}, {Name: "score_change", Title: "score change", Decimals: 2},
			{Name: "rank", Doc: "=2 is a shared rank"}, {Name: "rank_change", Title: "rank change", Doc: "variant rank minus baseline rank: negative moved up"},
		},
	}
	score := func(m map[string]float64, s string) Cell {
		if v, ok := m[s]; ok {
			return Number(v)
		}
		return Undefined("no score")
	}
	add := func(knob, value string, ranking []string, ranks []int, scores map[string]float64) {
		shared := Shared(ranks)
		for i, s := range ranking {
			sc, change, rankChange := score(scores, s), Undefined("not in the baseline"), Undefined("not in the baseline")
			if j := slices.Index(sr.Baseline, s); j >= 0 {
				rankChange = Int(ranks[i] - sr.BaselineRanks[j])
				if b, ok := sr.BaselineScores[s]; ok && sc.IsNum {
					change = Number(sc.Num - b)
				}
			}
			t.AddRow(Text(knob), Text(value), Text(s), sc, change, Text(FormatRank(ranks[i], shared[i])), rankChange)
		}
	}
	add(Baseline, "", sr.Baseline, sr.BaselineRanks, sr.BaselineScores)
	for _, v := range sr.Variants {
		add(v.Knob, v.Value, v.Ranking, v.Ranks, v.Scores)
	}
	return t
}
