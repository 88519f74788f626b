package cli

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/results"
	"golang.org/x/term"
)

const reproduceDoc = `Verify a bundle, replay every benchmark it holds from its cache, run the
analyses, compare with the paper's published tables when the bundle carries
them, run the default sensitivity sweeps, print the headline leaderboards and
write DIR/site/, DIR/xlsx/, DIR/csv/, DIR/json/, DIR/latex/ and DIR/SHA256SUMS.

BUNDLE is a bundle folder, a .tar.zst archive or an https:// URL of one
(with --sha256 HEX: downloaded once, checked, kept in $FINREPRO_DOWNLOADS or
the user cache folder); without it, the built-in
synthetic demo bundle is used. The default mode is offline: no API call is
made, and a request missing from the cache fails the run (exit 3) with a list
of what is missing and what recording it would cost. With --mode record the
missing requests are recorded through the providers after a cost estimate and
a confirmation (--yes skips it); everything already stored replays for free.`

func runReproduce(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("reproduce", "reproduce [BUNDLE] [flags]", reproduceDoc)
	out := fs.String("out", "finrepro-out", "output `DIR`")
	force := fs.Bool("force", false, "write into a non-empty --out folder that finrepro did not write (no file there is removed)")
	mode := fs.String("mode", "offline", "offline (replay only) or record (record what is missing)")
	yes := fs.Bool("yes", false, "record without asking for confirmation")
	baseURLs := fs.StringArray("base-url", nil, "in record mode, the base URL of a provider, `NAME=URL` (repeatable), e.g. vllm=http://gpu:8000/v1")
	sets := fs.StringArray("set", nil, "scoring setting `benchmark.knob=value` (repeatable)")
	pairs := fs.StringArray("pair", nil, "also compare two systems, `benchmark:SYSTEM_A,SYSTEM_B` (repeatable; the requested_pairs table)")
	noSweep := fs.Bool("no-sweep", false, "skip the default sensitivity sweeps")
	tol := fs.Float64("tolerance", -1, "tolerance for published cells (default: half a unit in the last printed digit)")
	quiet := fs.Bool("quiet", false, "print only the verdicts and errors")
	sha := fs.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL of a .tar.zst (required then)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usageErr("at most one BUNDLE")
	}
	if *mode != "offline" && *mode != "record" {
		return usageErr("--mode %q: want offline or record", *mode)
	}
	progress := io.Writer(nil)
	if !*quiet {
		progress = terminalProgress(env)
	}
	if *mode == "record" && (fs.NArg() == 0 || strings.HasSuffix(fs.Arg(0), ".tar.zst")) {
		return usageErr("--mode record needs a bundle folder to record into; the built-in demo is an archive whose judges are simulated: make a folder with \"finrepro bundle create --out mine --from @demo\", add your system with \"finrepro system add mine ...\" (README, \"Adding your own agent\")")
	}
	allSets, err := pairSettings(*sets, *pairs)
	if err != nil {
		return err
	}
	folder, err := claimOutputFolder(*out, *force)
	if err != nil {
		return err
	}
	arg, err := resolveBundle(ctx, env, fs.Arg(0), *sha)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, env, arg, allSets, progress)
	if err != nil {
		return err
	}
	defer s.close()
	recorded := 0
	if *mode == "record" {
		providers, err := providerOverrides(*baseURLs)
		if err != nil {
			return err
		}
		if err := recordMissing(ctx, env, s, providers, *yes, progress, &recorded); err != nil {
			return err
		}
	}
	a, err := s.analyse(ctx, env, folder, analyseOptions{tolerance: *tol, sweep: !*noSweep, items: true, earlyPages: true})
	if err != nil {
		return err
	}
	defer a.close()
	if err := checkPairs(s.settings, a.res); err != nil {
		return err
	}
	var extra []*analysis.Result
	comps := a.comparisonTables()
	if comps != nil {
		extra = append(extra, &analysis.Result{Benchmark: "comparison", Title: "Published tables", Tables: comps})
	}
	aliases, err := loadAliases(s.bundle)
	if err != nil {
		return err
	}
	prov := provenance(s.bundle, s.benches, a.res, s.settings)
	end := phase(progress, "writing outputs to %s", *out)
	files, err := writeOutputs(folder, a, extra, comps, aliases, prov, exchangeLookup(s.store))
	if err != nil {
		return err
	}
	end()

	w := env.Stdout
	if prov.Synthetic {
		sayWrapped(w, terminalWidth(env), "SYNTHETIC DATA: every exchange in this bundle was simulated; the numbers show how finrepro works, not how the systems perform.")
		fmt.Fprintln(w)
	}
	if !*quiet {
		width := terminalWidth(env)
		for _, r := range a.res {
			// the headline with the rank interval next to the rank
			if t := uncertainty.Terminal(r); t != nil {
				fmt.Fprintf(w, "[%s]\n", r.Title)
				if err := report.WriteTerminal(w, t, width); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
			if err := printRequested(w, r, width); err != nil {
				return err
			}
		}
	}
	if err := printVerdicts(w, a.comps, terminalWidth(env)); err != nil {
		return err
	}
	printLateSystems(w, a.res)
	width := terminalWidth(env)
	line := fmt.Sprintf("Replayed %d exchanges from the cache", a.replayed)
	switch {
	case prov.Synthetic && a.avoided == 0:
		line += " (simulated: recording them cost nothing)"
	default:
		line += fmt.Sprintf(" (recording them cost $%.2f; models without a price count as $0)", a.avoided)
	}
	if recorded > 0 {
		line += fmt.Sprintf("; this run made %d API calls while recording (see above).", recorded)
	} else {
		line += "; no API call was made."
	}
	sayWrapped(w, width, "%s", line)
	sayf(w, "Wrote %d files to %s", len(files), *out)
	sayf(w, "  site:   %s", filepath.Join(*out, "site", "index.html"))
	sayf(w, "  hashes: %s", filepath.Join(*out, report.SumsName))
	return nil
}

// printVerdicts prints the verdict of every published table (with the
// count of cells of each verdict and of the published rows the bundle
// does not have), then a table of the numbers that differ most, published
// and computed side by side, and a line for each text cell that differs.
func printVerdicts(w io.Writer, comps []analysis.Comparison, width int) error {
	if len(comps) == 0 {
		return nil
	}
	verdicts := &analysis.Table{Benchmark: "comparison", Name: "verdicts", Title: "Published tables: reproduced or not",
		Caption: "cells: compared; 2x: within twice the tolerance; absent: published rows (systems) the bundle does not have, not compared. A table's verdict is its worst cell's.",
		Columns: []analysis.Column{{Name: "table"}, {Name: "verdict"}, {Name: "cells"}, {Name: "reproduced"}, {Name: "2x"}, {Name: "differ"}, {Name: "absent"}}}
	var reasons []string
	for _, c := range comps {
		within := 0
		for _, d := range c.Cells {
			if d.Verdict == analysis.WithinTwice {
				within++
			}
		}
		verdicts.AddRow(analysis.Text(results.Printable(c.Benchmark+"/"+c.Table)), analysis.Text(c.Verdict), analysis.Int(c.Compared),
			analysis.Int(c.Compared-len(c.Cells)), analysis.Int(within), analysis.Int(len(c.Cells)-within), analysis.Int(len(c.Absent)))
		if c.Reason != "" {
			reasons = append(reasons, fmt.Sprintf("%s/%s: %s.", c.Benchmark, c.Table, c.Reason))
		}
	}
	worst, texts := worstCells(comps, 2)
	texts = append(reasons, texts...)
	for _, t := range []*analysis.Table{verdicts, worst} {
		if len(t.Rows) == 0 {
			continue
		}
		if err := report.WriteTerminal(w, t, width); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	for _, line := range texts {
		sayWrapped(w, width, "%s", line)
	}
	if len(texts) > 0 {
		fmt.Fprintln(w)
	}
	return nil
}

// worstCells returns a table of up to n numeric cells per published table
// that differ (by more than twice their tolerance), the furthest off first
// (in multiples of their tolerance), published and computed side by side at the published
// precision with the signed difference; and a line for each of up to n
// text cells per table that differ. Texts are made printable
// (results.Printable).
func worstCells(comps []analysis.Comparison, n int) (*analysis.Table, []string) {
	t := &analysis.Table{Benchmark: "comparison", Name: "worst_cells",
		Title:   "Published numbers that differ most from the computed ones (up to " + strconv.Itoa(n) + " per table)",
		Caption: "difference = computed - published, at the published precision. Every cell compared, with its verdict: csv/comparison/cells.csv, xlsx/comparison.xlsx.",
		Columns: []analysis.Column{{Name: "table"}, {Name: "row"}, {Name: "column"}, {Name: "published"}, {Name: "computed"}, {Name: "difference"}},
	}
	var texts []string
	text := func(s string) analysis.Cell { return analysis.Text(results.Printable(s)) }
	for _, c := range comps {
		var nums []analysis.CellDiff
		nt := 0
		for _, d := range c.Cells {
			switch {
			case d.Numeric && d.Verdict == analysis.Differs:
				nums = append(nums, d)
			case d.Numeric:
			case nt < n:
				nt++
				texts = append(texts, fmt.Sprintf("%s/%s %s, %s: published \"%s\", computed \"%s\".", c.Benchmark, c.Table, d.Row, d.Column, d.Published, d.Computed))
			}
		}
		off := func(d analysis.CellDiff) float64 {
			if d.Tolerance == 0 {
				return math.Inf(1)
			}
			return math.Abs(d.Delta) / d.Tolerance
		}
		slices.SortStableFunc(nums, func(a, b analysis.CellDiff) int { return cmp.Compare(off(b), off(a)) })
		for _, d := range nums[:min(n, len(nums))] {
			t.AddRow(text(c.Benchmark+"/"+c.Table), text(d.Row), text(d.Column),
				analysis.NumberDecimals(d.PubValue, d.Decimals), analysis.NumberDecimals(d.CompValue, d.Decimals), analysis.NumberDecimals(d.Delta, d.Decimals))
		}
	}
	return t, texts
}

// recordMissing records the bundle's missing requests: a dry run counts
// them and estimates the cost, the user confirms (unless yes), then every
// benchmark runs through a recording client. Calls that depend on replies
// not yet recorded (a judge grading a report not yet written) appear only
// in the recording run, so the estimate is a lower bound.
// recorded is set to the number of calls recorded.
func recordMissing(ctx context.Context, env *Env, s *session, providers map[string]replay.ProviderConfig, yes bool, progress io.Writer, recorded *int) error {
	dry := replay.New(s.store, replay.Config{Mode: replay.Offline, Providers: providers, Unknown: customProvider()})
	asked := &callLog{next: dry}
	_, _, err := collectAll(ctx, s.bundle, s.benches, asked, s.settings, false, nil, nil)
	if cerr := dry.Corrupt(); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	if err := reportFailures(env.Stderr, dry.Failures(), "keyed"); err != nil {
		return err
	}
	misses := dry.Misses()
	if len(misses) == 0 {
		return nil
	}
	if custom := customProviders(misses, providers); len(custom) > 0 {
		for _, p := range custom {
			var names []string
			n := 0
			for _, m := range misses {
				if m.Provider == p {
					n++
					if !slices.Contains(names, m.Label.Name) {
						names = append(names, m.Label.Name)
					}
				}
			}
			slices.Sort(names)
			fmt.Fprintf(env.Stderr, "provider %q of %s is not built in and has no --base-url %s=URL: %d calls cannot be recorded\n", p, strings.Join(names, ", "), p, n)
		}
		return fmt.Errorf("nothing recorded: %d providers cannot be reached (%s)", len(custom), strings.Join(custom, ", "))
	}
	if err := explainSimulated(env.Stderr, asked.all(), misses); err != nil {
		return err
	}
	fmt.Fprintf(env.Stderr, "%d requests are missing; recording them costs %s, or %s (a lower bound: calls that depend on their replies are not counted yet).\n", len(misses), costEstimate(misses), batchPrice(misses, providers))
	if !yes {
		if !isTerminal(env.Stdin) {
			return usageErr("refusing to record without --yes when standard input is not a terminal")
		}
		if !confirm(env, "Record them now?") {
			return errors.New("recording cancelled")
		}
	}
	if err := s.reopenForWriting(); err != nil {
		return err
	}
	// The wall clock is what recorded_at must say for a real recording.
	rec := replay.New(s.store, replay.Config{Mode: replay.Record, Providers: providers, Unknown: customProvider(), Getenv: env.Getenv, Progress: terminalOf(progress), Clock: env.clock()})
	if _, _, err := collectAll(ctx, s.bundle, s.benches, rec, s.settings, false, nil, nil); err != nil && ctx.Err() == nil {
		return err
	}
	// Interrupted or not, what was recorded is merged and sealed below.
	if lerr := storeLoss(rec); lerr != nil {
		reportFailures(env.Stderr, rec.Failures(), "recorded") // the loss is the error that matters
		return lerr
	}
	// The bundle has grown, even when some requests failed: merge the new
	// packs and list them in the manifest, so that it verifies again and
	// what was recorded is kept.
	if _, err := s.store.GC(); err != nil {
		return err
	}
	m := *s.bundle.Manifest
	if !strings.Contains(m.Producer, recordedNote) {
		m.Producer += recordedNote
	}
	// the session verified every file; recording wrote only the cache
	sealed, err := results.Seal(s.bundle.Dir, m, s.bundle.Manifest.Files, []string{results.CacheDir + "/"})
	if err != nil {
		return err
	}
	s.bundle.Manifest = sealed
	*recorded = rec.Counts().Recorded
	fmt.Fprintf(env.Stderr, "Recording: %s.\n", recordedSummary(rec.Counts(), rec.SpentUSD(), misses))
	if canceled := countCause(rec.Failures(), replay.CauseCanceled); canceled > 0 && ctx.Err() != nil {
		fmt.Fprintf(env.Stderr, "Interrupted: %d calls were not sent; what was recorded is kept and sealed into the bundle. Run the same command again to record the rest (stored calls are not sent again).\n", canceled)
		return fmt.Errorf("interrupted while recording (%d calls recorded, %d not sent)", *recorded, canceled)
	}
	if err := reportFailures(env.Stderr, rec.Failures(), "recorded"); err != nil {
		return fmt.Errorf("%w (what was recorded is kept and sealed)", err)
	}
	return nil
}

// recordedNote marks a bundle's producer line once reproduce has recorded
// into it.
const recordedNote = "; grown by finrepro reproduce --mode record"

// providerOverrides turns NAME=URL flags into provider configurations:
// a known provider keeps its API shape and key variable, an unknown one
// is taken as OpenAI-compatible chat completions without a key.
func providerOverrides(flags []string) (map[string]replay.ProviderConfig, error) {
	out := map[string]replay.ProviderConfig{}
	for _, f := range flags {
		name, url, ok := strings.Cut(f, "=")
		if !ok || name == "" || url == "" {
			return nil, usageErr("--base-url %q: want NAME=URL", f)
		}
		pc, known := replay.DefaultProviders()[name]
		if !known {
			pc = replay.ProviderConfig{Kind: replay.KindChat}
		}
		if err := checkBaseURL(url); err != nil {
			return nil, usageErr("--base-url %q: %v", f, err)
		}
		pc.BaseURL = url
		out[name] = pc
	}
	return out, nil
}

// provenance says where the outputs come from: the bundle, its hash, the
// cache digest (over the manifest's cache entries), the finrepro version,
// the effective value of every knob and whether any data is synthetic.
func provenance(b *results.Bundle, benches []analysis.Benchmark, res []*analysis.Result, settings map[string]analysis.Settings) report.Provenance {
	manifest, _ := os.ReadFile(filepath.Join(b.Dir, results.ManifestName)) // read and verified by verifyBundle
	h := sha256.Sum256(manifest)
	c := sha256.New()
	for _, f := range b.Manifest.Files {
		if strings.HasPrefix(f.Path, results.CacheDir+"/") {
			fmt.Fprintf(c, "%s  %s\n", f.SHA256, f.Path)
		}
	}
	p := report.Provenance{
		Bundle:       b.Manifest.Name,
		BundleSHA256: hex.EncodeToString(h[:]),
		Producer:     b.Manifest.Producer,
		Version:      Version,
		CacheDigest:  hex.EncodeToString(c.Sum(nil)),
		Synthetic:    b.Manifest.Synthetic,
	}
	for _, r := range res {
		p.Synthetic = p.Synthetic || r.Synthetic
	}
	for _, bm := range benches {
		for _, k := range bm.Knobs() {
			p.Settings = append(p.Settings, [2]string{bm.Name() + "." + k.Name, settings[bm.Name()].Get(k.Name, k.Default)})
		}
	}
	p.Settings = append(p.Settings, systemProvenance(b)...)
	return p
}

// isTerminal reports whether x is a file that is a terminal.
func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalProgress is env.Stderr when it is a terminal, where progress
// lines go; nil otherwise, so that logs and tests stay quiet.
func terminalProgress(env *Env) io.Writer {
	if isTerminal(env.Stderr) {
		return progressOut{env.Stderr, env.clock()}
	}
	return nil
}

// terminalWidth is the width tables are printed for: COLUMNS when it
// holds a width, else the terminal's width when stdout is a terminal,
// else 120, so that piped output is the same whatever the terminal.
func terminalWidth(env *Env) int {
	if n, err := strconv.Atoi(strings.TrimSpace(env.Getenv("COLUMNS"))); err == nil && n > 0 {
		return max(n, minWidth)
	}
	if f, ok := env.Stdout.(*os.File); ok {
		if wd, _, err := term.GetSize(int(f.Fd())); err == nil && wd > 0 {
			return max(wd, minWidth)
		}
	}
	return 120
}

// minWidth is the narrowest width tables are printed for.
const minWidth = 20

// confirm asks a yes/no question on a terminal.
func confirm(env *Env, question string) bool {
	fmt.Fprintf(env.Stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
}
