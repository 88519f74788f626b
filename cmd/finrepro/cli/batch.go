package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch"
	"github.com/finrepro/finrepro/results"
	"github.com/spf13/pflag"
)

const batchDoc = `
Record requests through the providers' batch APIs: OpenAI's Batch API (for
providers speaking chat completions or responses) and Anthropic's Message
Batches. Batches run within 24 hours at half the synchronous price.

  batch submit  (--requests FILE | --bundle B [--benchmark N] [--system S])
                --provider NAME --dir D [--max-requests-per-batch N]
  batch status  --dir D
  batch collect --dir D
  batch cancel  --dir D [--batch ID]

submit sends the requests of --provider that are neither stored in the
cache in D nor held by an open batch, split into batches within the
provider's limits (OpenAI 50,000 requests and 200 MB per input file, one
model per file; Anthropic 100,000 requests and 256 MB per batch), and
records each batch in D/batch/state.json before and after creating it.
status polls every open batch and prints its counts. collect downloads the
results of every ended batch, stores each success once as an exchange of
source "batch" with the batch id and the reported model, lists the
failures by cause, and exits 0 only when every submitted request is stored.
A rerun of any of them resumes where the last one stopped; the failures of
a collected batch are submitted again by the next submit.

--bundle submits the requests a bundle folder's benchmarks make that its
cache does not hold (--benchmark and --system keep those of one benchmark
or one system or judge name); collect then also copies the stored results
into the bundle's cache and reseals its manifest. Calls that depend on
replies not yet stored (a judge grading a report not yet written) appear
in the next round: submit again after collecting.

API keys are read from the provider's environment variable only
(OPENAI_API_KEY, ANTHROPIC_API_KEY, or --key-env) and never written. See
docs/batch.md.`

func runBatch(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fs := env.newFlags("batch", "batch submit|status|collect|cancel [flags]", batchDoc)
		if len(args) == 0 {
			fs.Usage()
			return usageErr("batch needs a subcommand: submit, status, collect or cancel")
		}
		fs.Usage()
		return nil
	}
	switch args[0] {
	case "submit":
		return batchSubmit(ctx, env, args[1:])
	case "status", "collect", "cancel":
		return batchPoll(ctx, env, args[0], args[1:])
	}
	return usageErr("batch: unknown subcommand %q (want submit, status, collect or cancel)", args[0])
}

// batchFlags are the flags every batch subcommand takes.
type batchFlags struct {
	dir, provider, baseURL, keyEnv *string
	quiet                          *bool
}

func addBatchFlags(fs *pflag.FlagSet) *batchFlags {
	return &batchFlags{
		dir:      fs.String("dir", "", "cache folder; the batch state is kept in DIR/batch"),
		provider: fs.String("provider", "", "provider name (openai, anthropic, or one speaking their APIs)"),
		baseURL:  fs.String("base-url", "", "base URL of --provider (of every batch without --provider), e.g. http://localhost:8000/v1"),
		keyEnv:   fs.String("key-env", "", "environment variable holding the API key of --provider"),
		quiet:    fs.Bool("quiet", false, "no progress lines"),
	}
}

// open opens the cache in --dir, a client over it and a runner.
func (f *batchFlags) open(env *Env) (*batch.Runner, *replay.Client, *cache.Store, error) {
	if *f.dir == "" {
		return nil, nil, nil, usageErr("--dir is required")
	}
	var pcs map[string]replay.ProviderConfig
	if *f.provider != "" {
		pc, known := replay.DefaultProviders()[*f.provider]
		if !known {
			pc.Kind = replay.KindChat
		}
		if *f.keyEnv != "" {
			pc.KeyEnv = *f.keyEnv
		}
		if *f.baseURL != "" {
			if err := checkBaseURL(*f.baseURL); err != nil {
				return nil, nil, nil, usageErr("--base-url %q: %v", *f.baseURL, err)
			}
			pc.BaseURL = *f.baseURL
		}
		if !known && pc.BaseURL == "" {
			return nil, nil, nil, usageErr("provider %q is not built in: give --base-url", *f.provider)
		}
		pcs = map[string]replay.ProviderConfig{*f.provider: pc}
	} else if *f.keyEnv != "" {
		return nil, nil, nil, usageErr("--key-env needs --provider")
	}
	store, err := cache.Open(*f.dir, cache.Options{})
	if err != nil {
		return nil, nil, nil, err
	}
	cfg := replay.Config{Providers: pcs, Getenv: env.Getenv}
	if !*f.quiet {
		cfg.Progress = env.Stderr
	}
	c := replay.New(store, cfg)
	bc := batch.Config{
		Dir: *f.dir, Store: store, Client: c, Getenv: env.Getenv, BaseURL: *f.baseURL, Provider: *f.provider,
		// recorded_at of a real recording is the wall clock.
		Clock: env.clock(),
	}
	if !*f.quiet {
		bc.Progress = env.Stderr
	}
	r, err := batch.Open(bc)
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	return r, c, store, nil
}

func batchSubmit(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("batch submit", "batch submit --requests FILE --provider NAME --dir D [flags]", batchDoc)
	requests := fs.String("requests", "", "request objects, one JSON object per line (as record takes them)")
	bundleDir := fs.String("bundle", "", "submit the missing requests of this bundle folder")
	bench := fs.String("benchmark", "", "with --bundle, only the requests of this benchmark")
	system := fs.String("system", "", "with --bundle, only the requests of this system or judge name")
	bf := addBatchFlags(fs)
	maxReq := fs.Int("max-requests-per-batch", 0, "at most N requests per batch (default: the provider's limit)")
	resubmit := fs.Bool("resubmit", false, "submit again the requests of batches whose creation a stopped run left unconfirmed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if (*requests == "") == (*bundleDir == "") || *bf.provider == "" {
		return usageErr("give --provider and one of --requests or --bundle")
	}
	if (*bench != "" || *system != "") && *bundleDir == "" {
		return usageErr("--benchmark and --system need --bundle")
	}
	if *maxReq < 0 {
		return usageErr("negative --max-requests-per-batch")
	}
	var reqs []replay.Request
	var err error
	abs := ""
	if *requests != "" {
		reqs, err = readRequests(*requests, *bf.provider)
	} else {
		if abs, err = filepath.Abs(*bundleDir); err == nil {
			reqs, err = bundleRequests(ctx, env, abs, *bench, *system)
		}
	}
	if err != nil {
		return err
	}
	r, _, store, err := bf.open(env)
	if err != nil {
		return err
	}
	defer store.Close()
	defer r.Close()
	rep, err := r.Submit(ctx, reqs, batch.SubmitOptions{Provider: *bf.provider, MaxRequests: *maxReq, Resubmit: *resubmit, Bundle: abs})
	if rep != nil {
		for _, b := range rep.Batches {
			fmt.Fprintf(env.Stdout, "batch %s: %s %d requests, status %s\n", b.Local, b.ID, len(b.Keys), b.Status)
		}
		fmt.Fprintf(env.Stdout, "%d requests of %s: %d already stored, %d in open batches, %d submitted in %d batches",
			rep.Requests, *bf.provider, rep.Stored, rep.Covered, rep.Submitted(), len(rep.Batches))
		if rep.LeftOut > 0 {
			fmt.Fprintf(env.Stdout, "; %d of other providers left out", rep.LeftOut)
		}
		fmt.Fprintln(env.Stdout)
		for _, k := range rep.TooLarge {
			fmt.Fprintf(env.Stdout, "  too large for one batch, not submitted: %s\n", k)
		}
	}
	if err != nil {
		return err
	}
	if len(rep.TooLarge) > 0 {
		return fmt.Errorf("%d requests are larger than a batch may be; record them with finrepro record", len(rep.TooLarge))
	}
	return nil
}

func batchPoll(ctx context.Context, env *Env, sub string, args []string) error {
	fs := env.newFlags("batch "+sub, "batch "+sub+" --dir D [flags]", batchDoc)
	bf := addBatchFlags(fs)
	id := new(string)
	if sub == "cancel" {
		id = fs.String("batch", "", "cancel only the batch with this provider id")
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	r, _, store, err := bf.open(env)
	if err != nil {
		return err
	}
	defer store.Close()
	defer r.Close()
	switch sub {
	case "status":
		bs, err := r.Status(ctx)
		printBatches(env.Stdout, bs)
		return err
	case "cancel":
		bs, err := r.Cancel(ctx, *id)
		for _, b := range bs {
			fmt.Fprintf(env.Stdout, "batch %s: %s cancel requested, status %s\n", b.Local, b.ID, b.Status)
		}
		return err
	}
	rep, err := r.Collect(ctx)
	if err != nil {
		return err
	}
	if b := r.State().Bundle; b != "" {
		n, err := copyToBundle(store, b)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(env.Stdout, "copied %d exchanges into bundle %s and resealed its manifest\n", n, b)
		}
	}
	return collectSummary(env.Stdout, rep)
}

// bundleRequests returns the requests a bundle folder's benchmarks make
// that its cache does not hold, those of benchmark bench and of system or
// judge name only when they are set. It runs every benchmark offline, as
// reproduce --mode record's estimate does.
func bundleRequests(ctx context.Context, env *Env, dir, bench, name string) ([]replay.Request, error) {
	if err := results.CheckBundlePath(dir); err != nil {
		return nil, err
	}
	if strings.HasSuffix(dir, ".tar.zst") {
		return nil, usageErr("--bundle needs a bundle folder to record into, not an archive")
	}
	s, err := openSession(ctx, env, bundleArg{path: dir}, nil, nil)
	if err != nil {
		return nil, err
	}
	defer s.close()
	if _, _, err := collectAll(ctx, s.bundle, s.benches, s.client, s.settings, false, nil, nil); err != nil {
		return nil, err
	}
	var out []replay.Request
	for _, m := range s.client.Misses() {
		if bench != "" && m.Label.Benchmark != bench || name != "" && m.Label.Name != name {
			continue
		}
		var q replay.Request
		if err := json.Unmarshal(m.Request, &q); err != nil { // a request object the client encoded
			return nil, fmt.Errorf("bundle %s: request %.8s: %w", dir, m.Key, err)
		}
		q.Label = m.Label
		out = append(out, q)
	}
	return out, nil
}

// copyToBundle copies the exchanges of source batch in store that the
// bundle's cache lacks into it, merges its packs and reseals the
// manifest, and returns how many it copied.
func copyToBundle(store *cache.Store, dir string) (int, error) {
	b, err := results.OpenBundle(dir)
	if err != nil {
		return 0, err
	}
	bs, err := cache.Open(b.CachePath(), cache.Options{})
	if err != nil {
		return 0, err
	}
	defer bs.Close()
	nb := bs.NewBatch()
	n := 0
	err = store.Each(func(k cache.Key, x *cache.Exchange) error {
		if x.Meta.Source != cache.SourceBatch {
			return nil
		}
		if has, err := bs.Has(k); err != nil || has {
			return err
		}
		if _, _, err := nb.Add(x); err != nil {
			return err
		}
		n++
		return nil
	})
	if err == nil {
		err = nb.Flush()
	}
	if err != nil || n == 0 {
		return 0, err
	}
	if _, err := bs.GC(); err != nil {
		return n, err
	}
	m := *b.Manifest
	if !strings.Contains(m.Producer, batchNote) {
		m.Producer += batchNote
	}
	_, err = results.Seal(b.Dir, m, nil, nil)
	return n, err
}

// batchNote marks a bundle's producer line once batch collect has
// recorded into it.
const batchNote = "; grown by finrepro batch"

// printBatches prints one line per batch and the totals by state.
func printBatches(w io.Writer, bs []*batch.Batch) {
	var states [7]int // validating, in progress, completed, failed, expired, cancelled, collected
	succeeded, errored := 0, 0
	for _, b := range bs {
		c := b.Counts
		fmt.Fprintf(w, "batch %s: %s %s %s, %d requests: %d processing, %d succeeded, %d errored, %d canceled, %d expired",
			b.Local, b.Provider, b.ID, b.Status, len(b.Keys), c.Processing, c.Succeeded, c.Errored, c.Canceled, c.Expired)
		if b.Collected {
			fmt.Fprint(w, " (collected)")
		}
		fmt.Fprintln(w)
		succeeded += c.Succeeded
		errored += c.Errored + c.Canceled + c.Expired
		switch b.Status {
		case "validating", batch.StatusSubmitting:
			states[0]++
		case "in_progress", "finalizing":
			states[1]++
		case "completed", "ended":
			states[2]++
		case "failed":
			states[3]++
		case "expired":
			states[4]++
		case "cancelling", "cancelled", "canceling":
			states[5]++
		}
		if b.Collected {
			states[6]++
		}
	}
	fmt.Fprintf(w, "%d batches: %d validating, %d in progress, %d completed, %d failed, %d expired, %d cancelled (%d collected); requests %d succeeded, %d errored\n",
		len(bs), states[0], states[1], states[2], states[3], states[4], states[5], states[6], succeeded, errored)
}

// collectSummary prints what collect did and fails unless every
// submitted request is stored.
func collectSummary(w io.Writer, rep *batch.CollectReport) error {
	pending := 0
	for _, b := range rep.Pending {
		pending += len(b.Keys)
	}
	fmt.Fprintf(w, "%d submitted requests: %d stored (%d by this run), %d failed, %d in %d batches still running\n",
		rep.Submitted, rep.Stored, rep.Recorded, len(rep.Failed), pending, len(rep.Pending))
	if rep.Unknown > 0 {
		fmt.Fprintf(w, "warning: %d result lines named no request of their batch and were ignored\n", rep.Unknown)
	}
	for _, err := range rep.Errors {
		fmt.Fprintf(w, "error: %v\n", err)
	}
	if len(rep.Failed) > 0 {
		n := map[string]int{}
		var order []string
		for _, f := range rep.Failed {
			if n[f.Cause] == 0 {
				order = append(order, f.Cause)
			}
			n[f.Cause]++
		}
		var parts []string
		for _, c := range order {
			parts = append(parts, fmt.Sprintf("%s %d", c, n[c]))
		}
		fmt.Fprintf(w, "failures by cause: %s (the next batch submit sends them again)\n", strings.Join(parts, ", "))
		for _, f := range rep.Failed {
			fmt.Fprintf(w, "  batch %s %s key %.8s: %s: %s\n", f.Batch, f.BatchID, f.Key, f.Cause, f.Msg)
		}
	}
	if rep.Complete() {
		return nil
	}
	return fmt.Errorf("%d of %d submitted requests are not stored", rep.Submitted-rep.Stored, rep.Submitted)
}
