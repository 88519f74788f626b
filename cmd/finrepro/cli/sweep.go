package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

const sweepDoc = `Sensitivity sweeps from the cache alone: each --knob varies one scoring
setting of one benchmark (judge subsets, filter rules, tolerances, weights,
decay alpha, calibration bin size, averaging conventions). The baseline
ranking is printed with its scores, then every variant's scores, ranks and
rank changes, and a summary with each variant's Kendall tau-b and Spearman
rho against the baseline. No API is called: a request missing from the
cache fails the sweep with exit code 3. Without --knob, every benchmark's
default sweep runs.

Values: a value is written as in --set (a list is comma-separated, as in
icbcbench.weights=1,0,0); the values to sweep are separated by ";" (quote
it for the shell) or given by repeating --knob:
  --knob 'icbcbench.weights=1,0,0;0.6,0.2,0.2'
  --knob icbcbench.beta=20 --knob icbcbench.beta=100
"finrepro sweep --list" prints every knob as a --knob argument that this
command accepts, with its default and what it means after "#".

With --out DIR, the sweep tables are also written as CSV, JSON, LaTeX and
XLSX into DIR (see "reproduce" for the folder's rules); reproduce and site
put the default sweeps into the site and the workbooks.`

func runSweep(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("sweep", "sweep [BUNDLE] [--knob 'benchmark.knob=V1;V2;...']...", sweepDoc)
	knobs := fs.StringArray("knob", nil, "knob to sweep and its values, `benchmark.knob=V1;V2;...` (repeatable)")
	sets := fs.StringArray("set", nil, "baseline setting `benchmark.knob=value` (repeatable)")
	list := fs.Bool("list", false, "list every benchmark's knobs, as --knob arguments, and exit")
	out := fs.String("out", "", "also write the sweep tables (CSV, JSON, LaTeX, XLSX) into `DIR`")
	force := fs.Bool("force", false, "write into a non-empty --out folder that finrepro did not write (no file there is removed)")
	sha := fs.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL of a .tar.zst (required then)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *list {
		for _, b := range benchmarks() {
			for _, k := range b.Knobs() {
				fmt.Fprintln(env.Stdout, knobListLine(b.Name(), k))
			}
		}
		return nil
	}
	if fs.NArg() > 1 {
		return usageErr("at most one BUNDLE")
	}
	only, err := parseKnobs(*knobs)
	if err != nil {
		return err
	}
	var folder *outputFolder
	if *out != "" {
		if folder, err = claimOutputFolder(*out, *force); err != nil {
			return err
		}
	}
	arg, err := resolveBundle(ctx, env, fs.Arg(0), *sha)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, env, arg, *sets, terminalProgress(env))
	if err != nil {
		return err
	}
	defer s.close()
	tables, err := sweepAll(ctx, s.bundle, s.benches, s.client, s.settings, only, s.progress)
	if err != nil {
		return knobHint(err, *knobs)
	}
	if misses := s.client.Misses(); len(misses) > 0 {
		return reportMisses(env.Stderr, misses)
	}
	synthetic := s.bundle.Manifest.Synthetic
	if synthetic {
		fmt.Fprintln(env.Stdout, "SYNTHETIC DATA: every exchange in this bundle was simulated.")
	}
	if err := printSweeps(env.Stdout, tables, terminalWidth(env)); err != nil {
		return err
	}
	if folder == nil {
		return nil
	}
	var res []*analysis.Result
	for _, t := range tables {
		if n := len(res); n == 0 || res[n-1].Benchmark != t.Benchmark {
			res = append(res, &analysis.Result{Benchmark: t.Benchmark, Title: t.Benchmark + " sensitivity", Synthetic: synthetic})
		}
		res[len(res)-1].Tables = append(res[len(res)-1].Tables, t)
	}
	prov := provenance(s.bundle, s.benches, res, s.settings)
	prov.Synthetic = synthetic
	for _, k := range *knobs {
		prov.Settings = append(prov.Settings, [2]string{"--knob", k})
	}
	end := phase(s.progress, "writing the sweep tables to %s", *out)
	sums, err := report.WriteAllHashed(*out, res, prov)
	end()
	if err != nil {
		return err
	}
	if err := report.WriteSumsOf(*out, sums); err != nil {
		return err
	}
	files := report.Paths(sums)
	if err := folder.finish(append(slices.Clone(files), report.SumsName)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Wrote %d files to %s (hashes: %s).\n", len(files)+1, *out, filepath.Join(*out, report.SumsName))
	return nil
}

// printSweeps prints, per benchmark, the baseline ranking with its
// scores, every variant's scores, ranks and rank changes, and the summary
// of the variants (rho, tau, systems moved).
func printSweeps(w io.Writer, tables []*analysis.Table, width int) error {
	for _, name := range []string{"sensitivity_scores", "sensitivity"} {
		for _, t := range tables {
			if t.Name != name {
				continue
			}
			// the scores first, then the summary, benchmark by benchmark
			if name == "sensitivity_scores" {
				if err := printSweepScores(w, t, tables, width); err != nil {
					return err
				}
				for _, u := range tables {
					if u.Benchmark == t.Benchmark && u.Name == "sensitivity" {
						v := *u
						v.Title = "[" + u.Benchmark + "] " + u.Title
						if err := report.WriteTerminal(w, &v, width); err != nil {
							return err
						}
						fmt.Fprintln(w)
					}
				}
			}
		}
	}
	return nil
}

// printSweepScores prints the rows of a sensitivity_scores table t, one
// table for the baseline and one per variant, each titled with the
// variant's rho and tau from the benchmark's sensitivity table.
func printSweepScores(w io.Writer, t *analysis.Table, tables []*analysis.Table, width int) error {
	var summary *analysis.Table
	for _, u := range tables {
		if u.Benchmark == t.Benchmark && u.Name == "sensitivity" {
			summary = u
		}
	}
	cols := t.Columns[2:]
	var part *analysis.Table
	flush := func() error {
		if part == nil {
			return nil
		}
		err := report.WriteTerminal(w, part, width)
		fmt.Fprintln(w)
		return err
	}
	prev := ""
	for _, r := range t.Rows {
		knob, value := r[0].Text, r[1].Text
		if key := knob + "=" + value; key != prev {
			prev = key
			if err := flush(); err != nil {
				return err
			}
			part = &analysis.Table{Benchmark: t.Benchmark, Name: t.Name, Columns: cols}
			if knob == analysis.Baseline {
				part.Title = fmt.Sprintf("[%s] baseline ranking", t.Benchmark)
				part.Columns = []analysis.Column{cols[0], cols[1], cols[3]} // system, score, rank
			} else {
				part.Title = fmt.Sprintf("[%s] %s=%s", t.Benchmark, knob, value)
				if summary != nil {
					for _, s := range summary.Rows {
						if s[0].Text == knob && s[1].Text == value {
							part.Title += fmt.Sprintf(": Spearman rho %s, Kendall tau-b %s; rank changes: %s",
								s[2].Format(3), s[3].Format(3), s[4].Text)
						}
					}
				}
			}
		}
		if knob == analysis.Baseline {
			part.AddRow(r[2], r[3], r[5])
		} else {
			part.AddRow(r[2:]...)
		}
	}
	return flush()
}

// parseKnobs reads the --knob flags: benchmark.knob=V1;V2;... each, the
// values of a knob given twice appended, in order.
func parseKnobs(knobs []string) (map[string][]string, error) {
	var only map[string][]string
	for _, k := range knobs {
		bench, knob, vals, err := parseKnobFlag("--knob", k, "benchmark.knob=V1;V2;...")
		if err != nil {
			return nil, err
		}
		if vals == "" {
			return nil, usageErr("--knob %q: no value to sweep (write an empty value as \"\")", k)
		}
		if only == nil {
			only = map[string][]string{}
		}
		name := bench + "." + knob
		for _, v := range splitAlternatives(vals) {
			if !slices.Contains(only[name], v) {
				only[name] = append(only[name], v)
			}
		}
	}
	return only, nil
}

// splitAlternatives splits the values of a --knob: separated by ';',
// each trimmed of spaces, `""` standing for the empty value.
func splitAlternatives(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ";") {
		v = strings.TrimSpace(v)
		if v == `""` {
			v = ""
		}
		out = append(out, v)
	}
	return out
}

// joinAlternatives is the inverse of splitAlternatives.
func joinAlternatives(vals []string) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		if v == "" {
			v = `""`
		}
		out[i] = v
	}
	return strings.Join(out, ";")
}

// knobListLine is the line "sweep --list" prints for knob k of bench: a
// --knob argument, quoted for a POSIX shell, that sweeps the values
// reproduce sweeps (the default when it sweeps none), then after "#" the
// default and the knob's doc, so that the line pasted after "finrepro
// sweep" is a valid command.
func knobListLine(bench string, k analysis.Knob) string {
	vals, note := k.Sweep, "reproduce sweeps these by default"
	if len(vals) == 0 {
		vals, note = []string{k.Default}, "not swept by default"
	}
	def := k.Default
	if def == "" {
		def = `""`
	}
	return fmt.Sprintf("--knob %s  # default %s; %s; %s", shellQuote(bench+"."+k.Name+"="+joinAlternatives(vals)), def, note, oneLineText(k.Doc))
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_.,=+/:@%.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,=+/:@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// oneLineText joins the lines of s with spaces.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// knobHint adds to a usage error about a --knob value holding a comma
// the reminder that values to sweep are separated by ';'.
func knobHint(err error, knobs []string) error {
	var ue *usageError
	if !errors.As(err, &ue) {
		return err
	}
	for _, k := range knobs {
		if _, vals, _ := strings.Cut(k, "="); strings.Contains(vals, ",") && !strings.Contains(vals, ";") && strings.Contains(ue.msg, "not accepted") {
			return usageErr("%s (values to sweep are separated by \";\", as in --knob '%s', or given by repeating --knob)", ue.msg, strings.Replace(k, ",", ";", -1))
		}
	}
	return err
}
