package cli

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
	mode := fs.String("mode", "offline", "offline (replay only) or record (record what is missing)")
	yes := fs.Bool("yes", false, "record without asking for confirmation")
	baseURLs := fs.StringArray("base-url", nil, "in record mode, the base URL of a provider, `NAME=URL` (repeatable), e.g. vllm=http://gpu:8000/v1")
	sets := fs.StringArray("set", nil, "scoring setting `benchmark.knob=value` (repeatable)")
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
	if !*quiet && isTerminal(env.Stderr) {
		progress = env.Stderr
	}
	if *mode == "record" && (fs.NArg() == 0 || strings.HasSuffix(fs.Arg(0), ".tar.zst")) {
		return usageErr("--mode record needs a bundle folder to record into; the built-in demo is an archive whose judges are simulated: make a folder with \"finrepro bundle create --out mine --from @demo\", add your system with \"finrepro system add mine ...\" (README, \"Adding your own agent\")")
	}
	arg, err := resolveBundle(ctx, env, fs.Arg(0), *sha)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, env, arg, *sets, progress)
	if err != nil {
		return err
	}
	defer s.close()
	if *mode == "record" {
		providers, err := providerOverrides(*baseURLs)
		if err != nil {
			return err
		}
		if err := recordMissing(ctx, env, s, providers, *yes, progress); err != nil {
			return err
		}
	}
	a, err := s.analyse(ctx, env, *tol, !*noSweep)
	if err != nil {
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
	files, err := writeOutputs(*out, a.res, extra, a.sens, comps, a.comps, aliases, prov)
	if err != nil {
		return err
	}

	w := env.Stdout
	if prov.Synthetic {
		fmt.Fprintln(w, "SYNTHETIC DATA: every exchange in this bundle was simulated; the numbers show how finrepro works, not how the systems perform.")
		fmt.Fprintln(w)
	}
	if !*quiet {
		width := terminalWidth(env.Stdout)
		for _, r := range a.res {
			// the headline with the rank interval next to the rank
			if t := uncertainty.Terminal(r); t != nil {
				fmt.Fprintf(w, "[%s]\n", r.Title)
				if err := report.WriteTerminal(w, t, width); err != nil {
					return err
				}
				fmt.Fprintln(w)
			}
		}
	}
	printVerdicts(w, a.comps)
	printLateSystems(w, a.res)
	fmt.Fprintf(w, "Replayed %d exchanges from the cache with no API call (recording them cost $%.2f", a.replayed, a.avoided)
	if prov.Synthetic {
		fmt.Fprint(w, "; simulated exchanges cost nothing")
	}
	fmt.Fprintln(w, ").")
	fmt.Fprintf(w, "Wrote %d files to %s (site: %s/site/index.html; hashes: %s/SHA256SUMS).\n", len(files), *out, *out, *out)
	return nil
}

func printVerdicts(w io.Writer, comps []analysis.Comparison) {
	if len(comps) == 0 {
		return
	}
	fmt.Fprintln(w, "Published tables:")
	for _, c := range comps {
		line := fmt.Sprintf("  %-18s %-22s %s", c.Benchmark, c.Table, c.Verdict)
		switch c.Verdict {
		case analysis.NotComparable:
			line += " (" + c.Reason + ")"
		case analysis.Differs:
			line += fmt.Sprintf(" (%d of %d cells", len(c.Cells), c.Compared)
			if len(c.Cells) > 0 {
				d := c.Cells[0]
				line += fmt.Sprintf("; e.g. %s/%s published %s, computed %s", d.Row, d.Column, d.Published, d.Computed)
			}
			line += ")"
		case analysis.Reproduced:
			line += fmt.Sprintf(" (%d cells)", c.Compared)
		}
		sayf(w, "%s", line)
	}
	fmt.Fprintln(w)
}

// recordMissing records the bundle's missing requests: a dry run counts
// them and estimates the cost, the user confirms (unless yes), then every
// benchmark runs through a recording client. Calls that depend on replies
// not yet recorded (a judge grading a report not yet written) appear only
// in the recording run, so the estimate is a lower bound.
func recordMissing(ctx context.Context, env *Env, s *session, providers map[string]replay.ProviderConfig, yes bool, progress io.Writer) error {
	dry := replay.New(s.store, replay.Config{Mode: replay.Offline, Providers: providers, Unknown: customProvider()})
	asked := &callLog{next: dry}
	_, _, err := collectAll(ctx, s.bundle, s.benches, asked, s.settings, false)
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
	var cost float64
	for _, m := range misses {
		cost += m.CostUSD
	}
	fmt.Fprintf(env.Stderr, "%d requests are missing; recording them costs about $%.2f, or %s (a lower bound: calls that depend on their replies are not counted yet).\n", len(misses), cost, batchPrice(misses, providers))
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
	rec := replay.New(s.store, replay.Config{Mode: replay.Record, Providers: providers, Unknown: customProvider(), Getenv: env.Getenv, Progress: progress, Clock: time.Now})
	if _, _, err := collectAll(ctx, s.bundle, s.benches, rec, s.settings, false); err != nil {
		return err
	}
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
	sealed, err := results.Seal(s.bundle.Dir, m)
	if err != nil {
		return err
	}
	s.bundle.Manifest = sealed
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

// terminalWidth is the width of w when it is a terminal, else 120.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if wd, _, err := term.GetSize(int(f.Fd())); err == nil && wd > 20 {
			return wd
		}
	}
	return 120
}

// confirm asks a yes/no question on a terminal.
func confirm(env *Env, question string) bool {
	fmt.Fprintf(env.Stderr, "%s [y/N] ", question)
	line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(line)), "y")
}
