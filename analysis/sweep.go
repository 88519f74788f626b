package analysis

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/results"
)

// A Variant is one run of a sensitivity sweep: a knob set to a value.
type Variant struct {
	Knob, Value string
	Ranking     []string
	// Rho and Tau compare Ranking with the baseline's; Undefined says why
	// they are not defined (fewer than 3 systems, ...), empty otherwise.
	Rho, Tau  float64
	Undefined string
	// Moved lists the systems whose rank changed, as "name a->b".
	Moved []string
	// Missing counts calls without a reply in this variant's run.
	Missing int
}

// A SweepResult is a benchmark's baseline ranking and its variants.
type SweepResult struct {
	Benchmark string
	Baseline  []string
	Variants  []Variant
}

// Sweep runs b once with base settings and once per (knob, value) pair,
// and compares every variant's ranking with the baseline's. Each run
// reads the cache alone when in.Answer is an offline client.
func Sweep(ctx context.Context, b Benchmark, in Input, knobs []Knob) (*SweepResult, error) {
	in.Answer = &memo{next: in.Answer, replies: map[[32]byte]results.Reply{}}
	base, err := b.Run(ctx, in)
	if err != nil {
		return nil, err
	}
	sr := &SweepResult{Benchmark: b.Name(), Baseline: base.Ranking}
	for _, k := range knobs {
		for _, v := range k.Sweep {
			s := Settings{}
			for name, val := range in.Settings {
				s[name] = val
			}
			s[k.Name] = v
			vin := in
			vin.Settings = s
			r, err := b.Run(ctx, vin)
			if err != nil {
				return nil, fmt.Errorf("sweep %s=%s: %w", k.Name, v, err)
			}
			sr.Variants = append(sr.Variants, variant(k.Name, v, base.Ranking, r))
		}
	}
	return sr, nil
}

// memo answers every call once: a sweep's variants mostly repeat the
// baseline's calls, which need not be read and decoded again.
type memo struct {
	next    results.Answerer
	replies map[[32]byte]results.Reply // by SHA-256 of the prompt's JSON
}

func (m *memo) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	keys := make([][32]byte, len(calls))
	keyed := make([]bool, len(calls))
	var todo []results.Call
	var at []int
	for i, c := range calls {
		b, err := json.Marshal(c.Prompt)
		if err != nil {
			todo, at = append(todo, c), append(at, i) // not memoised
			continue
		}
		keys[i], keyed[i] = sha256.Sum256(b), true
		if r, ok := m.replies[keys[i]]; ok {
			out[i] = r
			continue
		}
		todo, at = append(todo, c), append(at, i)
	}
	if len(todo) > 0 {
		for j, r := range m.next.Answer(ctx, todo) {
			i := at[j]
			out[i] = r
			if keyed[i] && r.Err == nil {
				m.replies[keys[i]] = r
			}
		}
	}
	return out
}

func variant(knob, value string, base []string, r *Result) Variant {
	v := Variant{Knob: knob, Value: value, Ranking: r.Ranking, Missing: r.Missing}
	rho, tau, err := stats.CompareRankings(base, r.Ranking)
	if err != nil {
		v.Undefined = err.Error()
	} else {
		v.Rho, v.Tau = rho, tau
	}
	pos := stats.RankOrder(r.Ranking)
	for i, s := range base {
		if p, ok := pos[s]; ok && p != i+1 {
			v.Moved = append(v.Moved, fmt.Sprintf("%s %d->%d", s, i+1, p))
		}
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
			{Name: "moved", Title: "rank changes"},
			{Name: "ranking", Title: "ranking (best first)"},
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
		variants.AddRow(Text(v.Knob), Text(v.Value), rho, tau, Text(moved), Text(strings.Join(v.Ranking, " > ")))
		name := v.Knob + "=" + v.Value
		changes.Columns = append(changes.Columns, Column{Name: name})
		ys = append(ys, name)
	}
	for i, s := range sr.Baseline {
		row := []Cell{Text(s)}
		for _, v := range sr.Variants {
			if p := slices.Index(v.Ranking, s); p >= 0 {
				row = append(row, Int(p-i))
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
