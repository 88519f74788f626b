package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/demo"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/results"
	"github.com/finrepro/finrepro/site"
)

// benchmarks lists every benchmark finrepro knows, in display order.
func benchmarks() []analysis.Benchmark {
	return []analysis.Benchmark{
		icbc.Benchmark{},
		hisrubric.Benchmark{},
		forecast.Benchmark{},
		consensus.Benchmark{},
	}
}

// A session is an opened, verified bundle, its store and an offline
// client over it: what reproduce, site and sweep share.
type session struct {
	bundle   *results.Bundle
	benches  []analysis.Benchmark
	store    *cache.Store
	client   *replay.Client
	settings map[string]analysis.Settings
	cleanup  func()
	progress io.Writer
}

// openSession parses the settings, opens and verifies the bundle at arg
// (see openBundle) and opens its store read only: a bundle without a
// cache gets an empty store in a temporary folder, so that every call is
// a miss and the bundle is left as it was. Only recording writes into a
// bundle, through reopenForWriting. The caller must call close.
func openSession(ctx context.Context, env *Env, arg bundleArg, sets []string, progress io.Writer) (*session, error) {
	settings, err := parseSettings(sets)
	if err != nil {
		return nil, err
	}
	b, cleanup, err := openBundle(ctx, arg)
	if err != nil {
		return nil, err
	}
	s := &session{bundle: b, settings: settings, cleanup: cleanup, progress: progress}
	end := phase(progress, "verifying bundle %s (%d files)", b.Manifest.Name, len(b.Manifest.Files))
	if err := verifyOpened(ctx, env, b); err != nil {
		s.close()
		return nil, err
	}
	end()
	if s.benches, err = present(b); err != nil {
		s.close()
		return nil, err
	}
	if s.store, err = openStore(s); err != nil {
		s.close()
		return nil, &results.IntegrityError{Err: err}
	}
	s.client = replay.New(s.store, replay.Config{Mode: replay.Offline, Progress: terminalOf(progress), Unknown: customProvider()})
	return s, nil
}

// reopenForWriting reopens s's store in the bundle's cache folder for
// writing (creating it when the bundle has none), with a new offline
// client over it.
func (s *session) reopenForWriting() error {
	s.store.Close() // read only: nothing to lose on a failed close
	st, err := cache.Open(s.bundle.CachePath(), cache.Options{})
	if err != nil {
		s.store = nil
		return err
	}
	s.store = st
	s.client = replay.New(s.store, replay.Config{Mode: replay.Offline, Progress: terminalOf(s.progress), Unknown: customProvider()})
	return nil
}

// storeFormat is the file that marks a folder as a store (the cache's
// FORMAT file); a bundle whose cache folder lacks it has no cache yet.
const storeFormat = "FORMAT"

// openStore opens the store of s's bundle read only or, when the bundle
// has no cache yet, an empty store in a temporary folder that s's cleanup
// removes. The bundle's files have just been checked against its manifest
// (verifyOpened), so the store need not re-hash the objects of packs whose
// manifest hash is their name.
func openStore(s *session) (*cache.Store, error) {
	dir := s.bundle.CachePath()
	if _, err := os.Stat(filepath.Join(dir, storeFormat)); err == nil {
		return cache.Open(dir, cache.Options{ReadOnly: true, CheckedPacks: checkedPacks(s.bundle)})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "finrepro-empty-cache-")
	if err != nil {
		return nil, err
	}
	prev := s.cleanup
	s.cleanup = func() { os.RemoveAll(tmp); prev() }
	return cache.Open(tmp, cache.Options{})
}

// checkedPacks names the packs of b's cache whose hash in the manifest is
// their name.
func checkedPacks(b *results.Bundle) map[string]bool {
	m := map[string]bool{}
	for _, f := range b.Manifest.Files {
		name, ok := strings.CutSuffix(f.Path[strings.LastIndexByte(f.Path, '/')+1:], ".pack")
		if ok && name == f.SHA256 && len(name) > 2 && f.Path == results.CacheDir+"/packs/"+name[:2]+"/"+name+".pack" {
			m[name] = true
		}
	}
	return m
}

func (s *session) close() {
	if s.store != nil {
		s.store.Close() // read-only use: nothing to lose on a failed close
	}
	s.cleanup()
}

// An analysis is what a session computed offline.
type analysisRun struct {
	res   []*analysis.Result
	comps []analysis.Comparison
	sens  []*analysis.Table
	// replayed counts the exchanges the benchmarks' runs read from the
	// cache (sweeps excluded); avoided is their recorded cost.
	replayed int
	avoided  float64
	// spill holds the results' details (see detailSpill); the caller
	// must call close.
	spill *detailSpill
	// items are the item records written while analysing, nil when
	// they were not written (see analyse).
	items *itemRecords
	// tasks are the task pages written while analysing (see
	// earlyPages).
	tasks []*site.Tasks
}

// close removes the file of the run's details.
func (a *analysisRun) close() { a.spill.close() }

// taskDetails loads the details of one task for the site; release
// gives their buffer back (see detailSpill.taskDetails).
func (a *analysisRun) taskDetails(bench, task string) (ds []analysis.Detail, release func(), err error) {
	return a.spill.taskDetails(bench, task)
}

// analyseOptions say what analyse does beside scoring.
type analyseOptions struct {
	tolerance float64 // of published cells; negative: half a unit in the last printed digit
	// sweep runs the default sensitivity sweeps, whose tables are also
	// appended to their benchmark's result.
	sweep bool
	// items writes each benchmark's item records into the output folder
	// (see itemRecords).
	items bool
	// earlyPages writes the task pages of each benchmark but the last
	// into the output folder's site (see earlyPages), which writeOutputs
	// then need not write again.
	earlyPages bool
}

// analyse runs every benchmark offline, fails with the list of misses
// when a request is not stored, compares with the published tables and
// does what opt says. The results' details are kept in a file in the
// output folder o (see detailSpill), not in memory. A result
// keeps its item records' fields only. On success the caller must call
// the run's close.
//
// The benchmarks are collected one after the other and finished
// (scored, their item records written and their sweep run) in order, as
// a pipeline of two stages (see collectInTurn): while one benchmark is
// finished, the next one is collected, so that both cores are busy, and
// a benchmark's collection (every reply it parsed) is freed once it is
// finished, before the one after the next is collected. What a run holds
// at once is at most two benchmarks' collections, not all of them. A
// finished benchmark's task pages are written beside the next
// benchmarks' collection and finish, by the core the pipeline leaves
// idle part of the time; the last benchmark's are written with the rest
// of the site.
func (s *session) analyse(ctx context.Context, env *Env, o *outputFolder, opt analyseOptions) (_ *analysisRun, err error) {
	a := &analysisRun{}
	if a.spill, err = newDetailSpill(o.dir); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	if opt.items {
		if a.items, err = newItemRecords(o, provenance(s.bundle, s.benches, nil, s.settings)); err != nil {
			return nil, err
		}
	}
	var early *earlyPages
	if opt.earlyPages {
		if err := unvouch(o.dir); err != nil {
			return nil, err
		}
		if early, err = s.startEarlyPages(ctx, o, a); err != nil {
			return nil, err
		}
	}
	// Sweeps that collect again do it through their own client, so that
	// the run's counts are the benchmarks' own calls, as they were when
	// every sweep came after every collection.
	sweeper := replay.New(s.store, replay.Config{Mode: replay.Offline, Unknown: customProvider()})
	res := make([]*analysis.Result, len(s.benches))
	sens := make([][]*analysis.Table, len(s.benches))
	what := "replaying and scoring"
	if opt.sweep {
		what = "replaying, scoring and sweeping"
	}
	end := phase(s.progress, "%s %d benchmarks from the cache", what, len(s.benches))
	err = s.collectInTurn(ctx, a, func(i int, got collected) error {
		bm := s.benches[i]
		var err error
		res[i], err = s.finishBenchmark(ctx, a, bm, got.c, sweeper, opt.sweep, &sens[i])
		if err == nil {
			err = a.spill.failed() // the texts the details and tables were made from
		}
		if err != nil {
			return s.benchmarkErr(bm, err)
		}
		if s.progress != nil {
			phaseLine(s.progress, "finrepro:   [%d/%d] %s: done%s", i+1, len(s.benches), bm.Name(), took(got.elapsed))
		}
		if early != nil && i < len(s.benches)-1 {
			early.add(res[i])
		}
		return nil
	})
	var earlyErr error
	if early != nil {
		failed := err != nil || s.client.Corrupt() != nil || len(s.client.Misses()) > 0 || len(s.client.Failures()) > 0
		a.tasks, earlyErr = early.wait(failed)
	}
	end()
	if err != nil {
		return nil, err
	}
	if cerr := s.client.Corrupt(); cerr != nil {
		return nil, cerr // whatever a benchmark made of it, the store is damaged
	}
	if misses := s.client.Misses(); len(misses) > 0 {
		return nil, reportMisses(env.Stderr, misses)
	}
	if err := reportFailures(env.Stderr, s.client.Failures(), "answered"); err != nil {
		return nil, err
	}
	if earlyErr != nil {
		return nil, earlyErr
	}
	a.res, a.replayed, a.avoided = res, s.client.Counts().Hits, s.client.AvoidedUSD()
	if a.items != nil {
		if err := a.items.finish(res); err != nil {
			return nil, err
		}
	}
	if a.comps, err = compareAll(s.bundle, res, opt.tolerance); err != nil {
		return nil, err
	}
	a.sens = slices.Concat(sens...)
	for _, t := range a.sens {
		for _, r := range res {
			if r.Benchmark == t.Benchmark {
				r.Tables = append(r.Tables, t)
			}
		}
	}
	return a, nil
}

// A collected is a benchmark's collection as collectInTurn hands it on;
// elapsed, when not nil, is the time since its collection started.
type collected struct {
	c       analysis.Collection
	elapsed func() float64
}

// liveCollections is how many benchmarks' collections a run holds at
// once, from the start of a collection to the end of its benchmark's
// finish: two keep both cores busy (one benchmark collected while the
// one before is finished) for at most the memory of two.
const liveCollections = 2

// collectInTurn collects s's benchmarks one after the other through s's
// client, in a goroutine of its own, and calls finish with each
// collection in benchmark order, one at a time, while the next benchmark
// is collected. A benchmark's collection starts once the one before is
// collected and fewer than liveCollections benchmarks are between the
// start of their collection and the end of their finish, and a
// collection is dropped when its finish returns: the next benchmark is
// collected beside the finish of the one before, never beside another
// collection, whose memory while it runs (replies in flight, batches)
// would add to it (collecting two at once raised the peak of a run at 8x
// the full-scale demo, README). Once a call had no reply or the store turned out
// damaged, the benchmarks collected after are collected for the list of
// what is missing but not finished. The error is that of the first
// benchmark, in order, whose collection or finish failed; the
// collection under way is then stopped. What finish starts in the
// background (analyse's task pages, see earlyPages) is not counted
// here: it holds no collection.
func (s *session) collectInTurn(ctx context.Context, a *analysisRun, finish func(i int, got collected) error) error {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		done chan struct{} // closed when the fields below are set
		collected
		err    error
		failed bool // a call so far had no reply or the store is damaged
	}
	slots := make([]slot, len(s.benches))
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	live := make(chan struct{}, liveCollections) // a token per benchmark collected or finished
	var wg sync.WaitGroup
	wg.Go(func() {
		for i, bm := range s.benches {
			select {
			case live <- struct{}{}:
			case <-cctx.Done():
				for k := i; k < len(slots); k++ { // never collected
					slots[k].err = cctx.Err()
					close(slots[k].done)
				}
				return
			}
			sl := &slots[i]
			sl.elapsed = timer(s.progress)
			in := analysis.Input{Bundle: s.bundle, Answer: s.client, Settings: s.settings[bm.Name()], Texts: a.spill}
			sl.c, sl.err = bm.Collect(cctx, in)
			if sl.err == nil {
				sl.err = a.spill.failed()
			}
			sl.failed = s.client.Corrupt() != nil || len(s.client.Misses()) > 0 || len(s.client.Failures()) > 0
			close(sl.done) // the finish owns the collection now
		}
	})
	var first error
	failed := false
	for i := range slots {
		sl := &slots[i]
		<-sl.done
		failed = failed || sl.failed
		switch {
		case sl.err != nil:
			first = s.benchmarkErr(s.benches[i], sl.err)
		case !failed:
			first = finish(i, sl.collected)
		}
		sl.collected = collected{} // the collection is no longer needed
		if first != nil {
			cancel() // the collections under way are not needed
			break
		}
		<-live // the token of benchmark i, which was collected
	}
	wg.Wait()
	return first
}

// finishBenchmark scores benchmark bm's collection c, puts the result's
// details in a's spill, sets (and, when a writes them, writes) its item
// records and, when sweep is true, sets *sens to its sweep's tables,
// collecting again through sweeper where a knob changes the calls.
// Nothing it returns refers to c.
//
// Once scored, the three run at once: each reads c as scoring does (a
// sweep scores c concurrently already) and each sets fields of the
// result of its own (the details, the item records) or only reads it
// (the sweep: the ranking and scores). The error is the first of them in
// that order.
func (s *session) finishBenchmark(ctx context.Context, a *analysisRun, bm analysis.Benchmark, c analysis.Collection, sweeper results.Answerer, sweep bool, sens *[]*analysis.Table) (*analysis.Result, error) {
	set := s.settings[bm.Name()]
	r, err := bm.Score(ctx, c, set)
	if err != nil {
		return nil, err
	}
	var putErr, itemsErr, sweepErr error
	var wg sync.WaitGroup
	wg.Go(func() { putErr = a.spill.put(r) })
	if l, ok := bm.(analysis.ItemLister); ok {
		wg.Go(func() { itemsErr = s.writeItems(a, l, c, set, r) })
	}
	if sweep {
		wg.Go(func() { *sens, sweepErr = sweepOne(ctx, s.bundle, bm, sweeper, s.settings, nil, c, r) })
	}
	wg.Wait()
	if err := cmp.Or(putErr, itemsErr, sweepErr); err != nil {
		return nil, err
	}
	return r, nil
}

// writeItems sets r's item records from c and, when a writes them,
// writes them; r then keeps their fields only, the rows being generated
// from c.
func (s *session) writeItems(a *analysisRun, l analysis.ItemLister, c analysis.Collection, set analysis.Settings, r *analysis.Result) error {
	items, err := l.Items(c, set)
	if err != nil {
		return err
	}
	r.Items = items
	if a.items != nil {
		if err := a.items.write(r); err != nil {
			return err
		}
	}
	r.Items = &analysis.Items{Fields: items.Fields}
	return nil
}

// benchmarkErr is err of benchmark bm as eachBenchmark reports it.
func (s *session) benchmarkErr(bm analysis.Benchmark, err error) error {
	var se *analysis.SettingError
	if errors.As(err, &se) {
		return settingUsage(bm, se)
	}
	return fmt.Errorf("%s: %w", bm.Name(), err)
}

// comparisonTables returns the verdict and cell tables of the published
// comparison, none when the bundle carries no published table.
func (a *analysisRun) comparisonTables() []*analysis.Table {
	if len(a.comps) == 0 {
		return nil
	}
	v, c := analysis.ComparisonTables(a.comps)
	return []*analysis.Table{v, c}
}

// openBundle opens the bundle at arg: a folder, a .tar.zst archive
// (extracted into a temporary folder, see extractArchive) or, when arg is
// empty, the built-in demo bundle. The returned function removes any
// temporary folder.
func openBundle(ctx context.Context, arg bundleArg) (*results.Bundle, func(), error) {
	noop := func() {}
	var archive io.Reader
	switch p := arg.path; {
	case p == "":
		archive = bytes.NewReader(demo.Embedded())
	case strings.HasSuffix(p, ".tar.zst"):
		if err := results.CheckBundlePath(p); err != nil {
			return nil, noop, err
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, noop, err
		}
		defer f.Close()
		archive = f
	default:
		b, err := results.OpenBundle(p)
		return b, noop, err
	}
	tmp, cleanup, err := extractArchive(ctx, archive, bundleName(arg.path), arg.sha256)
	if err != nil {
		return nil, noop, err
	}
	b, err := results.OpenBundle(tmp)
	if err != nil {
		cleanup()
		return nil, noop, err
	}
	return b, cleanup, nil
}

func bundleName(arg string) string {
	if arg == "" {
		return "built-in demo"
	}
	return arg
}

// verifyOpened checks every file of an opened bundle against its manifest
// and reports every problem; any problem is an integrity failure. The
// manifest hashes cover the cache's files, so a changed object is caught
// here too.
func verifyOpened(ctx context.Context, env *Env, b *results.Bundle) error {
	probs, err := b.Verify(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // interrupted, not damaged
		}
		return &results.IntegrityError{Err: err}
	}
	for _, p := range probs {
		sayf(env.Stderr, "bundle: %s", p)
	}
	if len(probs) > 0 {
		return &problemsError{"bundle " + b.Manifest.Name, len(probs)}
	}
	return nil
}

// parseSettings turns "--set benchmark.knob=value" flags into settings
// per benchmark, rejecting unknown benchmarks and knobs.
func parseSettings(sets []string) (map[string]analysis.Settings, error) {
	out := map[string]analysis.Settings{}
	for _, s := range sets {
		bench, knob, v, err := parseKnobFlag("--set", s, "benchmark.knob=value")
		if err != nil {
			return nil, err
		}
		if out[bench] == nil {
			out[bench] = analysis.Settings{}
		}
		out[bench][knob] = v
	}
	return out, nil
}

// parseKnobFlag splits the value of flag, "benchmark.knob=value", and
// checks that the benchmark and its knob exist: a usage error naming the
// flag and listing the valid names when not. form is the flag's syntax,
// for the error.
func parseKnobFlag(flag, arg, form string) (bench, knob, value string, err error) {
	k, v, ok := strings.Cut(arg, "=")
	bench, knob, ok2 := strings.Cut(k, ".")
	if !ok || !ok2 || bench == "" || knob == "" {
		return "", "", "", usageErr("%s %q: want %s", flag, arg, form)
	}
	b := findBenchmark(bench)
	if b == nil {
		return "", "", "", usageErr("%s %q: unknown benchmark %q (benchmarks: %s)", flag, arg, bench, strings.Join(benchmarkNames(), ", "))
	}
	if err := (analysis.Settings{knob: v}).Validate(b); err != nil {
		return "", "", "", usageErr("%s %q: %v", flag, arg, err)
	}
	return bench, knob, v, nil
}

// settingUsage turns a knob value that benchmark b does not accept into a
// usage error naming the benchmark, the knob, the value and what it
// accepts (the error's Want, else the knob's Doc).
func settingUsage(b analysis.Benchmark, se *analysis.SettingError) error {
	want := se.Want
	def := ""
	for _, k := range b.Knobs() {
		if k.Name == se.Knob {
			if want == "" {
				want = k.Doc
			}
			def = k.Default
		}
	}
	msg := fmt.Sprintf("%s.%s: value %q not accepted; want %s", b.Name(), se.Knob, se.Value, want)
	if def != "" {
		msg += fmt.Sprintf(" (default %s)", def)
	}
	return usageErr("%s", msg)
}

func findBenchmark(name string) analysis.Benchmark {
	for _, b := range benchmarks() {
		if b.Name() == name {
			return b
		}
	}
	return nil
}

// present returns the benchmarks the bundle holds, in display order, and
// an error naming any benchmark of the bundle finrepro does not know.
func present(b *results.Bundle) ([]analysis.Benchmark, error) {
	var out []analysis.Benchmark
	for _, bm := range benchmarks() {
		if b.Has(bm.Name()) {
			out = append(out, bm)
		}
	}
	for _, name := range b.Manifest.Benchmarks {
		if findBenchmark(name) == nil {
			return nil, fmt.Errorf("bundle %s: unknown benchmark %q", b.Manifest.Name, name)
		}
	}
	return out, nil
}

// collectAll collects every benchmark over ans and, when score is true,
// scores each under its settings. Benchmarks run concurrently (each
// spends part of its time waiting on its rounds of calls); the results
// are in the order of benches.
//
// When spill is not nil, each result's details go to it as soon as the
// benchmark is scored (see detailSpill).
func collectAll(ctx context.Context, b *results.Bundle, benches []analysis.Benchmark, ans results.Answerer, settings map[string]analysis.Settings, score bool, spill *detailSpill, progress io.Writer) ([]analysis.Collection, []*analysis.Result, error) {
	colls := make([]analysis.Collection, len(benches))
	res := make([]*analysis.Result, len(benches))
	what := "replayed"
	if score {
		what = "replayed and scored"
	}
	err := eachBenchmarkShown(benches, progress, what, func(i int, bm analysis.Benchmark) error {
		in := analysis.Input{Bundle: b, Answer: ans, Settings: settings[bm.Name()]}
		c, err := bm.Collect(ctx, in)
		if err != nil {
			return err
		}
		colls[i] = c
		if !score {
			return nil
		}
		if res[i], err = bm.Score(ctx, c, in.Settings); err != nil || spill == nil {
			return err
		}
		return spill.put(res[i])
	})
	if err != nil {
		return nil, nil, err
	}
	return colls, res, nil
}

// eachBenchmark calls f for every benchmark concurrently and returns the
// error of the first benchmark (in the order of benches) that failed,
// prefixed with its name.
func eachBenchmark(benches []analysis.Benchmark, f func(i int, bm analysis.Benchmark) error) error {
	errs := make([]error, len(benches))
	var wg sync.WaitGroup
	for i, bm := range benches {
		wg.Go(func() {
			err := f(i, bm)
			var se *analysis.SettingError
			switch {
			case errors.As(err, &se):
				errs[i] = settingUsage(bm, se)
			case err != nil:
				errs[i] = fmt.Errorf("%s: %w", bm.Name(), err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// reportMisses prints every missing request and what recording them
// would cost, and returns the miss error (exit 3).
func reportMisses(w io.Writer, misses []replay.Miss) error {
	fmt.Fprintf(w, "%d requests are not in the cache (offline mode makes no API call):\n", len(misses))
	for i, m := range misses {
		if i < 50 {
			sayf(w, "  %s", m)
		}
	}
	if len(misses) > 50 {
		fmt.Fprintf(w, "  ... and %d more\n", len(misses)-50)
	}
	fmt.Fprintf(w, "Recording them would cost %s; run with --mode record to record them.\n", costEstimate(misses))
	for _, p := range customProviders(misses, nil) {
		fmt.Fprintf(w, "Provider %q is not built in: recording its calls needs --base-url %s=URL (an OpenAI-compatible Chat Completions server).\n", p, p)
	}
	return &missesError{len(misses)}
}

// reportFailures prints every request that could not be answered (how:
// "answered", "recorded") with its cause and returns an error (exit 1),
// or nil when there is none: a run never succeeds while calls it needed
// had no reply.
func reportFailures(w io.Writer, fails []replay.Failure, how string) error {
	if len(fails) == 0 {
		return nil
	}
	fmt.Fprintf(w, "%d requests could not be %s:\n", len(fails), how)
	for i, f := range fails {
		if i == 50 {
			fmt.Fprintf(w, "  ... and %d more\n", len(fails)-50)
			break
		}
		sayf(w, "  %v", f)
	}
	return fmt.Errorf("%d requests could not be %s", len(fails), how)
}

// customProvider is how a session takes a provider name that is not
// built in: as OpenAI-compatible Chat Completions, the API every
// --base-url NAME that is not built in is taken to speak, so that its
// calls key, replay and miss as they were or would be recorded.
func customProvider() *replay.ProviderConfig {
	return &replay.ProviderConfig{Kind: replay.KindChat}
}

// customProviders returns, sorted, the providers of misses that are
// neither built in nor configured in providers: their calls cannot be
// recorded.
func customProviders(misses []replay.Miss, providers map[string]replay.ProviderConfig) []string {
	known := replay.DefaultProviders()
	var out []string
	for _, m := range misses {
		_, builtin := known[m.Provider]
		_, given := providers[m.Provider]
		if !builtin && !given && !slices.Contains(out, m.Provider) {
			out = append(out, m.Provider)
		}
	}
	slices.Sort(out)
	return out
}

// sweepAll runs the default sensitivity sweep of every benchmark, or,
// when only is not nil, the sweeps it names ("benchmark.knob" to values).
// A benchmark with no value to sweep is not run. Benchmarks sweep
// concurrently; the tables are in the order of benches.
func sweepAll(ctx context.Context, b *results.Bundle, benches []analysis.Benchmark, ans results.Answerer, settings map[string]analysis.Settings, only map[string][]string, progress io.Writer) ([]*analysis.Table, error) {
	tables := make([][]*analysis.Table, len(benches))
	err := eachBenchmarkShown(benches, progress, "swept", func(i int, bm analysis.Benchmark) error {
		var err error
		tables[i], err = sweepOne(ctx, b, bm, ans, settings, only, nil, nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.Concat(tables...), nil
}

// sweepOne runs the default sensitivity sweep of benchmark bm, or, when
// only is not nil, the sweeps it names (see sweepAll), and returns its
// tables, none when it has no value to sweep. c and base, when not nil,
// are bm's collection and result under settings, which the sweep reuses.
func sweepOne(ctx context.Context, b *results.Bundle, bm analysis.Benchmark, ans results.Answerer, settings map[string]analysis.Settings, only map[string][]string, c analysis.Collection, base *analysis.Result) ([]*analysis.Table, error) {
	knobs := bm.Knobs()
	if only != nil {
		knobs = nil
		for _, k := range bm.Knobs() {
			if vals, ok := only[bm.Name()+"."+k.Name]; ok {
				k.Sweep = vals
				knobs = append(knobs, k)
			}
		}
	}
	if !slices.ContainsFunc(knobs, func(k analysis.Knob) bool { return len(k.Sweep) > 0 }) {
		return nil, nil // no variant: the sweep would have no table
	}
	in := analysis.Input{Bundle: b, Answer: ans, Settings: settings[bm.Name()]}
	var sr *analysis.SweepResult
	var err error
	if base != nil {
		sr, err = analysis.SweepFrom(ctx, bm, in, knobs, c, base)
	} else {
		sr, err = analysis.Sweep(ctx, bm, in, knobs)
	}
	if err != nil {
		return nil, err
	}
	v, vc := sr.Tables()
	return []*analysis.Table{v, sr.ScoreTable(), vc}, nil
}

// compareAll compares every published table of the bundle with the
// computed one.
func compareAll(b *results.Bundle, res []*analysis.Result, tol float64) ([]analysis.Comparison, error) {
	var out []analysis.Comparison
	for _, r := range res {
		pubs, err := b.Published(r.Benchmark)
		if err != nil {
			return nil, err
		}
		for _, p := range pubs {
			name := strings.TrimSuffix(filepath.Base(p.File), ".csv")
			out = append(out, analysis.Compare(r.Benchmark, p, r.Table(name), tol))
		}
	}
	return out, nil
}

// loadAliases reads the bundle's aliases.csv (system,benchmark,name) when
// present.
func loadAliases(b *results.Bundle) ([]site.Alias, error) {
	p := filepath.Join(b.Dir, results.AliasesName)
	f, err := os.Open(p)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := results.ReadCSV(f, results.AliasesName)
	if err != nil {
		return nil, err
	}
	cs, cb, cn := t.Col("system"), t.Col("benchmark"), t.Col("name")
	if cs < 0 || cb < 0 || cn < 0 {
		return nil, results.Errorf(results.AliasesName, 0, "", "header must have system, benchmark and name")
	}
	var out []site.Alias
	for _, r := range t.Rows {
		out = append(out, site.Alias{System: r[cs], Benchmark: r[cb], Name: r[cn]})
	}
	return out, nil
}

// outputDirs are the folders reproduce writes inside its output folder;
// of the files there, a rerun removes those the folder's marker lists
// (see outputFolder) and no other.
var outputDirs = []string{"site", "xlsx", "csv", "json", "latex"}

// writeOutputs writes workbooks, CSV, JSON, LaTeX, the site and
// SHA256SUMS into the output folder o, and returns the files written
// (SHA256SUMS aside), relative to it, sorted. Files of an earlier run are
// overwritten in place (or left alone when they already hold the right
// bytes) and those no longer written removed when the folder's marker
// lists them: emptying the folders first would make the file system free
// and allocate again every inode, which costs more than writing the site.
// SHA256SUMS is made from the hashes the writers computed in memory. The
// site's task pages show the exchanges lookup gives. The item records
// are those the analysis wrote, and so are the task pages of a.tasks,
// unless they changed (see analyse).
func writeOutputs(o *outputFolder, a *analysisRun, extra []*analysis.Result, comps []*analysis.Table, aliases []site.Alias, prov report.Provenance, lookup site.ExchangeLookup) ([]string, error) {
	all := append(slices.Clone(a.res), extra...)
	return writeTablesAndSite(o, all, site.Input{
		Results: a.res, Sensitivity: a.sens, Comparisons: comps, Published: a.comps, Provenance: prov, Aliases: aliases, Downloads: report.Files(all, prov),
		TaskDetails: a.taskDetails, Listings: a.spill.listings(), Exchanges: lookup, Written: a.tasks,
	}, prov, a.items)
}

// writeTablesAndSite writes the workbooks, CSV, JSON and LaTeX of all and
// the site of in into the output folder o, then SHA256SUMS, and returns
// the files written (SHA256SUMS aside), sorted: what reproduce and
// scores share. When items is not nil, the item records are those it
// wrote, and are not written again.
func writeTablesAndSite(o *outputFolder, all []*analysis.Result, in site.Input, prov report.Provenance, items *itemRecords) ([]string, error) {
	out := o.dir
	if err := unvouch(out); err != nil {
		return nil, err
	}
	// The workbooks and the site are written at once: the site links the
	// files report.Files names, which WriteAll is writing meanwhile.
	// Both hash what they write from memory, for SHA256SUMS.
	var itemSums, sums, siteSums []report.FileSum
	writeReport := report.WriteAllHashed
	if items != nil {
		itemSums = items.sums
		writeReport = report.WriteTablesHashed
	}
	var reportErr, siteErr error
	var wg sync.WaitGroup
	wg.Go(func() { sums, reportErr = writeReport(out, all, prov) })
	wg.Go(func() { siteSums, siteErr = site.WriteHashed(filepath.Join(out, "site"), in) })
	wg.Wait()
	if err := cmp.Or(reportErr, siteErr); err != nil {
		return nil, err
	}
	sums = append(sums, itemSums...)
	for _, s := range siteSums {
		s.Path = "site/" + s.Path
		sums = append(sums, s)
	}
	slices.SortFunc(sums, func(a, b report.FileSum) int { return strings.Compare(a.Path, b.Path) })
	files := report.Paths(sums)
	if err := report.WriteSumsOf(out, sums); err != nil {
		return nil, err
	}
	return files, o.finish(append(slices.Clone(files), report.SumsName))
}

// unvouch makes the output folders in out (see makeOutputDirs) and
// removes the SHA256SUMS of an earlier run, which must not vouch for a
// half-written one, before anything is written there.
func unvouch(out string) error {
	if err := makeOutputDirs(out); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(out, report.SumsName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// makeOutputDirs creates out and the folders reproduce owns in it without
// following links: out itself must not be a link, and a link (or a file)
// where an owned folder belongs is replaced by the folder. The writers
// then write through an os.Root, so no link deeper down leads outside.
func makeOutputDirs(out string) error {
	if st, err := os.Lstat(out); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("output folder %s is a symbolic link; give the folder itself", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, d := range outputDirs {
		p := filepath.Join(out, d)
		st, err := os.Lstat(p)
		if err == nil && !st.IsDir() {
			if err := os.Remove(p); err != nil { // the link or file, not what it points to
				return fmt.Errorf("output folder %s: %w", p, err)
			}
		}
		if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	return nil
}

// isEmptyDir reports whether folder p has no entry.
func isEmptyDir(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	_, err = f.ReadDir(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return false, err
}
