package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/finrepro/finrepro/report"
)

const sweepDoc = `Sensitivity sweeps from the cache alone: each --knob varies one scoring
setting of one benchmark (judge subsets, filter rules, tolerances, weights,
decay alpha, calibration bin size, averaging conventions) and prints every
variant's ranking, its Kendall tau-b and Spearman rho against the baseline and
the systems whose rank moved. No API is called: a request missing from the
cache fails the sweep with exit code 3. Without --knob, every benchmark's
default sweep runs. "finrepro sweep --list" prints the knobs.`

func runSweep(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("sweep", "sweep [BUNDLE] [--knob benchmark.knob=V1,V2,...]...", sweepDoc)
	knobs := fs.StringArray("knob", nil, "knob to sweep, `benchmark.knob=V1,V2,...` (repeatable)")
	sets := fs.StringArray("set", nil, "baseline setting `benchmark.knob=value` (repeatable)")
	list := fs.Bool("list", false, "list every benchmark's knobs and exit")
	sha := fs.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL of a .tar.zst (required then)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *list {
		for _, b := range benchmarks() {
			for _, k := range b.Knobs() {
				swept := "not swept by default"
				if len(k.Sweep) > 0 {
					swept = "reproduce sweeps " + strings.Join(k.Sweep, ",")
				}
				def := k.Default
				if def == "" {
					def = `""`
				}
				fmt.Fprintf(env.Stdout, "%s.%s (default %s; %s): %s\n", b.Name(), k.Name, def, swept, k.Doc)
			}
		}
		return nil
	}
	if fs.NArg() > 1 {
		return usageErr("at most one BUNDLE")
	}
	var only map[string][]string
	for _, k := range *knobs {
		name, vals, ok := strings.Cut(k, "=")
		bench, knob, ok2 := strings.Cut(name, ".")
		if !ok || !ok2 || vals == "" {
			return usageErr("--knob %q: want benchmark.knob=V1,V2,...", k)
		}
		if _, err := parseSettings([]string{bench + "." + knob + "=x"}); err != nil {
			return err
		}
		if only == nil {
			only = map[string][]string{}
		}
		only[name] = splitValues(vals)
	}
	arg, err := resolveBundle(ctx, env, fs.Arg(0), *sha)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, env, arg, *sets, nil)
	if err != nil {
		return err
	}
	defer s.close()
	tables, err := sweepAll(ctx, s.bundle, s.benches, s.client, s.settings, only, nil, nil)
	if err != nil {
		return err
	}
	if misses := s.client.Misses(); len(misses) > 0 {
		return reportMisses(env.Stderr, misses)
	}
	if s.bundle.Manifest.Synthetic {
		fmt.Fprintln(env.Stdout, "SYNTHETIC DATA: every exchange in this bundle was simulated.")
	}
	width := terminalWidth(env)
	for _, t := range tables {
		sayf(env.Stdout, "%s: %s", t.Benchmark, t.Title)
		if err := report.WriteTerminal(env.Stdout, t, width); err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

// splitValues splits a comma-separated value list; a value holding commas
// (a judge subset) is written with '+' instead: "a+b,a+c".
func splitValues(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		out = append(out, strings.ReplaceAll(v, "+", ","))
	}
	return out
}
