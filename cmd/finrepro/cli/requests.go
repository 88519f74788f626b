package cli

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

const requestsDoc = `Write, one JSON object a line, exactly the requests "finrepro reproduce"
sends for one benchmark of BUNDLE: the systems' own calls (with --system, only
that system's), and with --judges the judges' calls (with --system, those
grading that system's outputs). Judge calls exist only for outputs already in
the cache: record a new system's own requests first, then ask for --judges.
--missing keeps only the requests the cache does not hold.

--format jsonl (the default) is the "finrepro record --requests" format,
{"provider": ..., "endpoint": ..., "body": {...}, "sample": N}, so that

  finrepro requests BUNDLE --benchmark B --system S --missing > reqs.jsonl
  finrepro record --requests reqs.jsonl --dir BUNDLE/cache [--base-url URL]
  finrepro bundle seal BUNDLE

records them. --format batch writes OpenAI Batch API input lines (requests to
providers that speak Chat Completions or Responses; others are counted on
standard error), for "finrepro record --import-batch-input". Requests are
sorted by role (systems first), task, name and key; a request asked twice is
written once. Nothing is sent.`

func runRequests(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("requests", "requests BUNDLE --benchmark NAME [--system S] [--judges] [--missing] [--format jsonl|batch]", requestsDoc)
	bench := fset.String("benchmark", "", "the benchmark `NAME`")
	system := fset.String("system", "", "only this system's calls (and, with --judges, its judges' calls)")
	judges := fset.Bool("judges", false, "include the judges' calls")
	missing := fset.Bool("missing", false, "only the requests the cache does not hold")
	format := fset.String("format", "jsonl", "jsonl (record --requests) or batch (OpenAI Batch API input)")
	sha := fset.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 || *bench == "" {
		return usageErr("requests: want BUNDLE and --benchmark")
	}
	if *format != "jsonl" && *format != "batch" {
		return usageErr("--format %q: want jsonl or batch", *format)
	}
	bm := findBenchmark(*bench)
	if bm == nil {
		return usageErr("--benchmark %q: unknown benchmark (known: %s)", *bench, strings.Join(benchmarkNames(), ", "))
	}
	arg, err := resolveBundle(ctx, env, fset.Arg(0), *sha)
	if err != nil {
		return err
	}
	s, err := openSession(ctx, env, arg, nil, nil)
	if err != nil {
		return err
	}
	defer s.close()
	if !s.bundle.Has(*bench) {
		return usageErr("bundle %s holds no %s", s.bundle.Manifest.Name, *bench)
	}
	full := &callLog{next: s.client}
	if _, err := bm.Collect(ctx, analysis.Input{Bundle: s.bundle, Answer: full}); err != nil {
		return err
	}
	calls := full.all()
	if *system != "" && !slices.ContainsFunc(calls, func(c results.Call) bool { return c.Label.Name == *system || judgedProduct(c.Label) == *system }) {
		return usageErr("--system %q: %s asks no such system (system list shows them)", *system, *bench)
	}
	// A judge call grades the system when collecting without the
	// system's outputs does not make it.
	var without map[string]bool
	if *judges && *system != "" {
		without = map[string]bool{}
		rest := &callLog{next: hiding{next: s.client, system: *system}}
		if _, err := bm.Collect(ctx, analysis.Input{Bundle: s.bundle, Answer: rest}); err != nil {
			return err
		}
		for _, c := range rest.all() {
			b, err := replay.RequestOf(c.Prompt)
			if err == nil {
				without[string(b)] = true
			}
		}
	}
	type req struct {
		call results.Call
		raw  []byte
		key  cache.Key
	}
	var out []req
	seen := map[cache.Key]bool{}
	stored, unanswered := 0, 0
	for _, c := range calls {
		l := c.Label
		switch {
		case l.Role == results.RoleSystem:
			if *system != "" && l.Name != *system {
				continue
			}
		case l.Role == results.RoleJudge:
			if !*judges {
				continue
			}
		default:
			continue
		}
		raw, err := replay.RequestOf(c.Prompt)
		if err != nil {
			return fmt.Errorf("%s: %w", replay.LabelText(l), err)
		}
		if l.Role == results.RoleJudge && *system != "" && judgedProduct(l) != *system && (judgedProduct(l) != "" || without[string(raw)]) {
			continue
		}
		k, err := reqkey.Of(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", replay.LabelText(l), err)
		}
		if seen[k] {
			continue
		}
		seen[k] = true
		has, err := s.store.Has(k)
		if err != nil {
			return err
		}
		if has {
			stored++
			if *missing {
				continue
			}
		} else if l.Role == results.RoleSystem {
			unanswered++
		}
		out = append(out, req{c, raw, k})
	}
	slices.SortStableFunc(out, func(a, b req) int {
		return cmp.Or(cmp.Compare(roleOrder(a.call.Label.Role), roleOrder(b.call.Label.Role)),
			strings.Compare(a.call.Label.Task, b.call.Label.Task), strings.Compare(a.call.Label.Name, b.call.Label.Name),
			strings.Compare(a.key.String(), b.key.String()))
	})
	w := bufio.NewWriter(env.Stdout)
	switch *format {
	case "jsonl":
		for _, r := range out {
			w.Write(r.raw)
			w.WriteByte('\n')
		}
	case "batch":
		misses := make([]replay.Miss, len(out))
		for i, r := range out {
			misses[i] = replay.Miss{Label: r.call.Label, Key: r.key.String(), Provider: r.call.Prompt.Provider, Model: r.call.Prompt.Model, Request: json.RawMessage(r.raw)}
		}
		_, skipped, err := replay.WriteBatch(w, misses)
		if err != nil {
			return err
		}
		if skipped > 0 {
			fmt.Fprintf(env.Stderr, "%d requests go to providers without an OpenAI Batch API; write them with --format jsonl\n", skipped)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	what := "requests"
	if *missing {
		what = "missing requests"
	}
	fmt.Fprintf(env.Stderr, "%s: wrote %d %s (%d already in the cache)\n", *bench, len(out), what, stored)
	if !*judges && !slices.ContainsFunc(calls, func(c results.Call) bool { return c.Label.Role == results.RoleSystem }) {
		fmt.Fprintf(env.Stderr, "%s asks no system itself (its outputs are collected beforehand); its requests are the judges': add --judges\n", *bench)
	}
	if *judges && unanswered > 0 {
		fmt.Fprintf(env.Stderr, "%d system requests are not recorded yet: the judge calls grading their outputs appear once they are\n", unanswered)
	}
	return nil
}

func roleOrder(r results.Role) int {
	if r == results.RoleSystem {
		return 0
	}
	return 1
}

// judgedProduct is the product a FinResearchBench II judge call grades:
// its task is "query/product" or "query/product/runN". Empty for the
// calls of other benchmarks, whose judges are matched by the calls the
// system's outputs cause.
func judgedProduct(l results.Label) string {
	if l.Benchmark != "finresearchbench2" || l.Role != results.RoleJudge {
		return ""
	}
	parts := strings.Split(l.Task, "/")
	if len(parts) < 2 {
		return ""
	}
	if n := len(parts); n >= 3 && strings.HasPrefix(parts[n-1], "run") {
		return strings.Join(parts[1:n-1], "/")
	}
	return strings.Join(parts[1:], "/")
}

// hiding answers calls through next, but gives no answer to the calls of
// one system, so that no judge is asked to grade its outputs.
type hiding struct {
	next   results.Answerer
	system string
}

func (h hiding) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := h.next.Answer(ctx, calls)
	for i, c := range calls {
		if c.Label.Role == results.RoleSystem && c.Label.Name == h.system {
			out[i] = results.Reply{Err: errNotAsked}
		}
	}
	return out
}
