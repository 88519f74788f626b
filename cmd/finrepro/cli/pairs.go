package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/report"
)

// pairSettings turns the --pair flags "benchmark:A,B" of reproduce into
// one "benchmark.pairs=A,B;C,D" setting per benchmark, in the order
// given, and appends them to sets; a --set of the same knob comes first.
func pairSettings(sets, pairs []string) ([]string, error) {
	if len(pairs) == 0 {
		return sets, nil
	}
	joined := map[string][]string{}
	var order []string
	for _, s := range sets {
		k, v, _ := strings.Cut(s, "=")
		if bench, knob, ok := strings.Cut(k, "."); ok && knob == uncertainty.KnobPairs && v != "" {
			if _, seen := joined[bench]; !seen {
				order = append(order, bench)
			}
			joined[bench] = append(joined[bench], v)
		}
	}
	for _, p := range pairs {
		bench, pair, ok := strings.Cut(p, ":")
		if !ok || bench == "" || !strings.Contains(pair, ",") || strings.Contains(pair, ";") {
			return nil, usageErr("--pair %q: want benchmark:SYSTEM_A,SYSTEM_B", p)
		}
		if findBenchmark(bench) == nil {
			return nil, usageErr("--pair %q: unknown benchmark %q", p, bench)
		}
		if _, seen := joined[bench]; !seen {
			order = append(order, bench)
		}
		joined[bench] = append(joined[bench], pair)
	}
	out := slices.DeleteFunc(slices.Clone(sets), func(s string) bool {
		k, _, _ := strings.Cut(s, "=")
		_, knob, _ := strings.Cut(k, ".")
		return knob == uncertainty.KnobPairs
	})
	for _, bench := range order {
		out = append(out, bench+"."+uncertainty.KnobPairs+"="+strings.Join(joined[bench], ";"))
	}
	return out, nil
}

// checkPairs reports a requested pair that names a system missing from
// its benchmark's ranking.
func checkPairs(settings map[string]analysis.Settings, res []*analysis.Result) error {
	for _, r := range res {
		pairs, err := uncertainty.ParsePairs(r.Benchmark, settings[r.Benchmark])
		if err != nil {
			return err // already parsed by the benchmark
		}
		for _, p := range pairs {
			for _, name := range p {
				if !slices.Contains(r.Ranking, name) {
					return usageErr("%s: pair %s,%s: no system %q (systems: %s)", r.Benchmark, p[0], p[1], name, strings.Join(r.Ranking, ", "))
				}
			}
		}
	}
	return nil
}

// printRequested prints the requested_pairs table of r, if any, narrowed
// (see compactRequested).
func printRequested(w io.Writer, r *analysis.Result, width int) error {
	t := r.Table("requested_pairs")
	if t == nil {
		return nil
	}
	if err := report.WriteTerminal(w, compactRequested(t), width); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w)
	return err
}

// compactRequested puts each pair in one cell ("A - B") and its interval
// in another ("[-3.14, 5.00]"), leaving out the cluster count, standard
// error and p method, which stay in the files.
func compactRequested(t *analysis.Table) *analysis.Table {
	col := func(name string) analysis.Column { return t.Columns[t.Col(name)] }
	diff := col("difference")
	out := &analysis.Table{Benchmark: t.Benchmark, Name: t.Name, Title: t.Title, Caption: t.Caption, Notes: t.Notes,
		Columns: []analysis.Column{{Name: "pair", Doc: "first - second"}, col("shared"), diff,
			{Name: "ci", Title: "95% interval"}, col("p"), col("p_holm"), col("resolved")}}
	for _, r := range t.Rows {
		at := func(name string) analysis.Cell { return r[t.Col(name)] }
		ci := analysis.Undefined("no interval")
		if lo, hi := at("ci_lo"), at("ci_hi"); lo.IsNum && hi.IsNum {
			ci = analysis.Text("[" + lo.Format(diff.Decimals) + ", " + hi.Format(diff.Decimals) + "]")
		}
		out.AddRow(analysis.Text(at("system").Text+" - "+at("next").Text), at("shared"), at("difference"), ci, at("p"), at("p_holm"), at("resolved"))
	}
	return out
}
