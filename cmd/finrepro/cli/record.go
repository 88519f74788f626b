package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch"
	"github.com/finrepro/finrepro/results"
	"github.com/spf13/pflag"
)

const recordDoc = `
Record requests through a provider into the exchange cache in --dir.

Each line of --requests is one request object:
  {"provider": NAME, "endpoint": PATH, "body": {...}, "sample": N}
where provider defaults to --provider, endpoint to the provider's API path
(chat/completions, responses, messages; Gemini needs
"models/MODEL:generateContent") and sample to 0. The body is sent as is.

A request already in the cache is not sent again, so an interrupted run
resumes where it stopped. Failed requests (HTTP errors, malformed or
truncated bodies, empty completions, refusals) are never stored; they are
listed at the end with counts per cause and the exit code is 1. API keys
are read from the provider's environment variable only (OPENAI_API_KEY for
openai, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY, ...) and never
stored or printed.

--dry-run calls nothing: it counts the missing requests and estimates
their tokens and cost from the price table. --export-batch writes the
missing OpenAI-shaped requests as Batch API input instead;
--import-batch-input with --import-batch-output stores the results of such
a batch, and --import-reports stores reports collected by hand (each line:
{"prompt": {...}, "file": "report.md", "where": ..., "when": ...,
"product_version": ...}) with source "import".`

// providerFlags are the flags that adjust one provider's settings.
type providerFlags struct {
	name, baseURL, kind, keyEnv *string
	conc, rpm, tpm, attempts    *int
	timeout                     *time.Duration
}

func addProviderFlags(fs *pflag.FlagSet, network bool) *providerFlags {
	p := &providerFlags{
		name: fs.String("provider", "", "provider of request lines that name none (openai, anthropic, gemini, deepseek, vllm, sim, ...)"),
		kind: fs.String("kind", "", "API shape of a --provider that is not built in: chat, responses, anthropic or gemini (default chat)"),
	}
	if network {
		p.baseURL = fs.String("base-url", "", "base URL of --provider, e.g. http://localhost:8000/v1")
		p.keyEnv = fs.String("key-env", "", "environment variable holding the API key of --provider")
		p.conc = fs.Int("concurrency", 0, "requests in flight per provider (default 4)")
		p.rpm = fs.Int("rpm", 0, "requests per minute limit of --provider (0: none)")
		p.tpm = fs.Int("tpm", 0, "estimated tokens per minute limit of --provider (0: none)")
		p.timeout = fs.Duration("timeout", 0, "timeout of one attempt (default 10m)")
		p.attempts = fs.Int("attempts", 0, "attempts per request, retries included (default 6)")
	}
	return p
}

// providers returns the provider overrides the flags ask for.
func (p *providerFlags) providers() (map[string]replay.ProviderConfig, error) {
	name := *p.name
	if name == "" {
		if *p.kind != "" || p.baseURL != nil && (*p.baseURL != "" || *p.keyEnv != "" || *p.rpm != 0 || *p.tpm != 0 || *p.timeout != 0 || *p.attempts != 0) {
			return nil, usageErr("provider settings need --provider")
		}
		return nil, nil
	}
	pc, known := replay.DefaultProviders()[name]
	if !known {
		pc.Kind = replay.KindChat
	}
	if *p.kind != "" {
		k := replay.Kind(*p.kind)
		if !slices.Contains([]replay.Kind{replay.KindChat, replay.KindResponses, replay.KindAnthropic, replay.KindGemini}, k) {
			return nil, usageErr("--kind %q: want chat, responses, anthropic or gemini", *p.kind)
		}
		pc.Kind = k
	}
	if p.baseURL != nil {
		if *p.baseURL != "" {
			if err := checkBaseURL(*p.baseURL); err != nil {
				return nil, usageErr("--base-url %q: %v", *p.baseURL, err)
			}
			pc.BaseURL = *p.baseURL
		}
		if *p.keyEnv != "" {
			pc.KeyEnv = *p.keyEnv
		}
		if *p.conc < 0 || *p.rpm < 0 || *p.tpm < 0 || *p.attempts < 0 || *p.timeout < 0 {
			return nil, usageErr("negative --concurrency, --rpm, --tpm, --attempts or --timeout")
		}
		pc.Concurrency, pc.RPM, pc.TPM, pc.Timeout, pc.MaxAttempts = *p.conc, *p.rpm, *p.tpm, *p.timeout, *p.attempts
	}
	if p.baseURL != nil && pc.Kind != replay.KindSim && pc.BaseURL == "" && !known {
		return nil, usageErr("provider %q is not built in: give --base-url", name)
	}
	return map[string]replay.ProviderConfig{name: pc}, nil
}

func loadPrices(file string) (*replay.Prices, error) {
	if file == "" {
		return replay.DefaultPrices(), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay.ParsePrices(f, file)
}

func readRequests(file, provider string) ([]replay.Request, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return replay.ParseRequests(f, file, provider)
}

func runRecord(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("record", "record --requests FILE --provider NAME --dir D [flags]", recordDoc)
	requests := fs.String("requests", "", "request objects, one JSON object per line")
	dir := fs.String("dir", "", "cache folder (created when missing)")
	pf := addProviderFlags(fs, true)
	dry := fs.Bool("dry-run", false, "count missing requests and estimate tokens and cost; call nothing")
	refresh := fs.Bool("refresh", false, "call every request again and store it under the next free sample index")
	pricesFile := fs.String("prices", "", "price table JSON, as the built-in prices.json")
	exportBatch := fs.String("export-batch", "", "write the missing OpenAI-shaped requests as Batch API input JSONL to this file; call nothing")
	batchIn := fs.String("import-batch-input", "", "Batch API input JSONL of the batch to import")
	batchOut := fs.String("import-batch-output", "", "Batch API output JSONL to import")
	reports := fs.String("import-reports", "", "JSONL list of hand-collected reports to import")
	quiet := fs.Bool("quiet", false, "no progress lines")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if *dir == "" {
		return usageErr("--dir is required")
	}
	sources := 0
	for _, s := range []string{*requests, *batchOut, *reports} {
		if s != "" {
			sources++
		}
	}
	if sources != 1 || (*batchIn == "") != (*batchOut == "") {
		return usageErr("give exactly one of --requests, --import-batch-input with --import-batch-output, or --import-reports")
	}
	if (*dry || *exportBatch != "" || *refresh) && *requests == "" {
		return usageErr("--dry-run, --export-batch and --refresh need --requests")
	}
	pcs, err := pf.providers()
	if err != nil {
		return err
	}
	prices, err := loadPrices(*pricesFile)
	if err != nil {
		return fmt.Errorf("prices: %w", err)
	}
	mode := replay.Record
	switch {
	case *dry || *exportBatch != "":
		mode = replay.Offline
	case *refresh:
		mode = replay.Refresh
	}
	var reqs []replay.Request
	if *requests != "" {
		if reqs, err = readRequests(*requests, *pf.name); err != nil {
			return err
		}
	}
	if mode != replay.Offline {
		known := replay.DefaultProviders()
		for name, pc := range pcs {
			known[name] = pc
		}
		for _, r := range reqs {
			if known[r.Provider].Kind == replay.KindSim {
				return usageErr("%s: provider %q is the built-in simulator, which records through \"finrepro demo\" only", replay.LabelText(r.Label), r.Provider)
			}
		}
	}
	store, err := cache.Open(*dir, cache.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	cfg := replay.Config{
		Mode: mode, Providers: pcs, Concurrency: *pf.conc, Prices: prices, Getenv: env.Getenv,
		// A live recording's recorded_at is the wall clock; the jitter seed
		// only needs to differ between processes recording at once.
		Clock: env.clock(), Seed: uint64(os.Getpid()),
	}
	if !*quiet {
		cfg.Progress = env.Stderr
	}
	c := replay.New(store, cfg)
	switch {
	case *batchOut != "":
		return importBatch(env, c, *batchIn, *batchOut, *pf.name)
	case *reports != "":
		return importReports(env, c, *reports)
	}
	replies := c.AnswerRequests(ctx, reqs)
	if mode == replay.Offline {
		if *dry {
			printMisses(env.Stdout, c.Misses(), pcs, prices, len(reqs), "to record")
		} else if err := exportMisses(env, c.Misses(), pcs, *exportBatch); err != nil {
			return err
		}
		if fs := c.Failures(); len(fs) > 0 {
			printFailures(env.Stdout, fs)
			return fmt.Errorf("%d requests are invalid", len(fs))
		}
		return nil
	}
	return recordSummary(env, c, len(reqs), replies)
}

// recordSummary prints what a recording did and fails when anything was
// not stored.
func recordSummary(env *Env, c *replay.Client, total int, replies []results.Reply) error {
	n := c.Counts()
	fmt.Fprintf(env.Stdout, "%d requests: %d already stored, %d recorded, %d failed; recorded cost $%.4f\n",
		total, n.Hits, n.Recorded, n.Failed, c.SpentUSD())
	for _, d := range c.Drifts() {
		fmt.Fprintf(env.Stdout, "warning: model drift: %s answered %q for requested model %q\n", d.Provider, d.Reported, d.Requested)
	}
	bad := 0
	for _, r := range replies {
		if r.Err != nil {
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	if canceled := countCause(c.Failures(), replay.CauseCanceled); canceled > 0 {
		fmt.Fprintf(env.Stdout, "Interrupted: %d requests were not sent; the %d recorded are stored. Run the same command again to record the rest (stored requests are not sent again).\n", canceled, n.Recorded)
		if canceled == bad {
			return fmt.Errorf("interrupted: %d of %d requests not recorded", bad, total)
		}
	}
	printFailures(env.Stdout, c.Failures())
	if err := storeLoss(c); err != nil {
		return err
	}
	return fmt.Errorf("%d of %d requests not recorded", bad, total)
}

// storeLoss returns, when the store refused a write during a recording,
// the error that says so and how many calls were paid for and lost.
func storeLoss(c *replay.Client) error {
	err := c.StoreErr()
	if err == nil {
		return nil
	}
	n := c.Counts()
	return fmt.Errorf("the store cannot take writes, so recording stopped: %d calls were paid for (about $%.4f) and not stored, %d other requests were not recorded (most not sent): %w",
		n.Lost, c.LostUSD(), n.Failed-n.Lost, err)
}

func printFailures(w io.Writer, fs []replay.Failure) {
	if len(fs) == 0 {
		return
	}
	var parts []string
	for _, cc := range replay.CountCauses(fs) {
		parts = append(parts, fmt.Sprintf("%s %d", cc.Cause, cc.Count))
	}
	fmt.Fprintf(w, "failures by cause: %s\n", strings.Join(parts, ", "))
	for _, f := range fs {
		sayf(w, "  %s", f)
	}
}

// printMisses lists missing requests with their estimated tokens and cost.
func printMisses(w io.Writer, ms []replay.Miss, pcs map[string]replay.ProviderConfig, prices *replay.Prices, total int, what string) {
	in, out, unpriced := 0, 0, 0
	cost := 0.0
	for _, m := range ms {
		in += m.InputTokens
		out += m.OutputTokens
		cost += m.CostUSD
		if !m.Priced {
			unpriced++
		}
	}
	price := fmt.Sprintf("$%.2f at the prices of %s (list prices)", cost, prices.Date)
	if unpriced == len(ms) {
		price = "cost unknown (no model has a price)"
	}
	fmt.Fprintf(w, "%d of %d requests not in the cache (%s): about %d input and %d output tokens (estimated from the requests and their output limits), %s",
		len(ms), total, what, in, out, price)
	if unpriced > 0 && unpriced < len(ms) {
		fmt.Fprintf(w, " (%d calls to models without a price: cost unknown, not included)", unpriced)
	}
	fmt.Fprintf(w, "; %s\n", batchPrice(ms, pcs))
	for _, m := range ms {
		sayf(w, "  %s", m)
	}
}

// batchPrice says what the misses cost through the batch APIs.
func batchPrice(ms []replay.Miss, pcs map[string]replay.ProviderConfig) string {
	_, b, n := batch.Estimate(ms, pcs)
	return fmt.Sprintf("$%.2f through the batch APIs (finrepro batch; half price for the %d requests of providers that have one)", b, n)
}

func exportMisses(env *Env, ms []replay.Miss, pcs map[string]replay.ProviderConfig, file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	n, skipped, err := replay.WriteBatch(f, ms, pcs)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %d missing requests to %s as Batch API input", n, file)
	if skipped > 0 {
		fmt.Fprintf(env.Stdout, "; %d of providers without a batch API left out", skipped)
	}
	fmt.Fprintln(env.Stdout)
	return nil
}

func importBatch(env *Env, c *replay.Client, in, out, provider string) error {
	if provider == "" {
		provider = "openai"
	}
	fi, err := os.Open(in)
	if err != nil {
		return err
	}
	defer fi.Close()
	fo, err := os.Open(out)
	if err != nil {
		return err
	}
	defer fo.Close()
	n, err := c.ImportBatch(fi, in, fo, out, provider)
	if err != nil {
		return err
	}
	fs := c.Failures()
	fmt.Fprintf(env.Stdout, "imported %d batch results (source import), %d failed\n", n, len(fs))
	if len(fs) > 0 {
		printFailures(env.Stdout, fs)
		return fmt.Errorf("%d batch results not imported", len(fs))
	}
	return nil
}

// A reportLine is one line of an --import-reports list.
type reportLine struct {
	Prompt         results.Prompt `json:"prompt"`
	File           string         `json:"file"`
	Where          string         `json:"where"`
	When           string         `json:"when"`
	ProductVersion string         `json:"product_version"`
}

func importReports(env *Env, c *replay.Client, list string) error {
	f, err := os.Open(list)
	if err != nil {
		return err
	}
	defer f.Close()
	base := filepath.Dir(list)
	n := 0
	err = results.EachJSONL(f, list, func(line int, l *reportLine) error {
		if l.File == "" || !results.ValidPath(filepath.ToSlash(l.File)) {
			return results.Errorf(list, line, "file", "%q is not a relative path inside the list's folder", l.File)
		}
		b, err := os.ReadFile(filepath.Join(base, filepath.FromSlash(l.File)))
		if err != nil {
			return results.Errorf(list, line, "file", "%v", err)
		}
		prov := replay.Provenance{Where: l.Where, When: l.When, ProductVersion: l.ProductVersion, File: l.File}
		key, err := c.ImportReport(l.Prompt, string(b), prov)
		if err != nil {
			return results.Errorf(list, line, "", "%v", err)
		}
		sayf(env.Stdout, "imported %s as %s", l.File, key.Str())
		n++
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "imported %d reports (source import)\n", n)
	return nil
}
