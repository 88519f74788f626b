package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
	"github.com/spf13/pflag"
)

const cacheDoc = `Inspect and maintain an exchange cache (see docs/cache.md). Subcommands:

  stats [--json]          exchanges, objects, raw and stored bytes, ratio, by provider,
                          model and source, total recorded cost
  verify                  re-hash everything and report every problem (exit 4 on any)
  gc                      remove what no exchange references, merge small packs
  load [--strict] [FILE]  bulk insert JSONL exchanges (standard input without FILE);
                          exit 1 when a bad line was skipped, unless --allow-bad
  dump [--out FILE]       every exchange as JSONL, sorted by key
  export --out FILE       write the store as one .tar.zst (refused if it holds a secret)
  import FILE             add a .tar.zst export, verifying every object first
  explain REQUEST.json    print a request's key and, when it is not stored, the
                          nearest stored requests of the same provider and model

Every subcommand takes --dir D, the cache folder.`

type cacheSub struct {
	name, usage, doc string
	run              func(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error
	flags            func(fs *pflag.FlagSet)
}

var cacheSubs []cacheSub

func init() {
	cacheSubs = []cacheSub{
		{"stats", "cache stats --dir D [--json]", "Count exchanges, objects and bytes by provider, model and source.", runCacheStats,
			func(fs *pflag.FlagSet) { fs.Bool("json", false, "print JSON") }},
		{"verify", "cache verify --dir D", "Re-hash every pack, dictionary and object and report every problem with its key. Exit 4 on any problem.", runCacheVerify, nil},
		{"gc", "cache gc --dir D", "Remove records, objects and copies no exchange needs and merge small packs. Do not run it while another process writes the cache.", runCacheGC, nil},
		{"load", "cache load --dir D [--strict | --allow-bad] [FILE...]", "Load JSONL exchanges {\"request\": ..., \"response\": ..., \"meta\": ...} (meta optional) from the files or standard input. A bad line is reported with its line and field and skipped, and the exit code is 1 when any line was skipped (0 with --allow-bad); --strict stops at the first (lines before it stay stored).", runCacheLoad,
			func(fs *pflag.FlagSet) {
				fs.Bool("strict", false, "stop at the first bad line")
				fs.Bool("allow-bad", false, "exit 0 even when bad lines were skipped")
			}},
		{"dump", "cache dump --dir D [--out FILE]", "Write every exchange as JSONL sorted by key (the form load reads).", runCacheDump,
			func(fs *pflag.FlagSet) { fs.String("out", "", "write to `FILE` instead of standard output") }},
		{"export", "cache export --dir D --out FILE.tar.zst", "Write the cache as one deterministic .tar.zst with a SHA-256 manifest. The exchanges are scanned for secrets first (the values of the API-key variables of the environment and common key shapes); on any finding nothing is written and the findings are listed.", runCacheExport,
			func(fs *pflag.FlagSet) {
				fs.String("out", "", "archive `FILE` to write")
				fs.StringSlice("secret-env", nil, "more environment variable `NAME`s whose values are secrets")
			}},
		{"import", "cache import --dir D FILE.tar.zst", "Add an export to the cache. Every file is checked against the archive's manifest and every object re-hashed before anything enters the cache; a differing file is never replaced. Exit 4 on an integrity problem.", runCacheImport, nil},
		{"explain", "cache explain --dir D REQUEST.json", "Print the key of a request object and whether it is stored; when it is not, list the nearest stored requests of the same provider and model with a field-level diff.", runCacheExplain,
			func(fs *pflag.FlagSet) { fs.Int("nearest", 3, "how many nearest requests to show") }},
	}
}

func runCache(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := env.newFlags("cache", "cache <subcommand> --dir D [flags] [args]", cacheDoc)
		if err := parse(fs, args); err != nil {
			return err
		}
		return usageErr("want a subcommand: stats, verify, gc, load, dump, export, import or explain")
	}
	for _, sc := range cacheSubs {
		if sc.name != args[0] {
			continue
		}
		fs := env.newFlags("cache "+sc.name, sc.usage, sc.doc)
		dir := fs.String("dir", "", "cache `D`irectory")
		if sc.flags != nil {
			sc.flags(fs)
		}
		if err := parse(fs, args[1:]); err != nil {
			return err
		}
		if *dir == "" {
			return usageErr("cache %s: --dir is required", sc.name)
		}
		return sc.run(ctx, env, fs, *dir, fs.Args())
	}
	return usageErr("unknown cache subcommand %q", args[0])
}

// openCache opens an existing cache for reading: a missing folder is an
// error rather than an empty cache.
func openCache(dir string, opt cache.Options) (*cache.Store, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return cache.Open(dir, opt)
}

func runCacheStats(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) > 0 {
		return usageErr("cache stats: unexpected arguments")
	}
	s, err := openCache(dir, cache.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Stats()
	if err != nil {
		return err
	}
	if asJSON, _ := fs.GetBool("json"); asJSON {
		b, err := json.MarshalIndent(st, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(env.Stdout, "%s\n", b)
		return err
	}
	w := env.Stdout
	fmt.Fprintf(w, "exchanges     %d\n", st.Exchanges)
	fmt.Fprintf(w, "objects       %d\n", st.Objects)
	fmt.Fprintf(w, "packs         %d\n", st.Packs)
	fmt.Fprintf(w, "dictionaries  %d\n", st.Dicts)
	fmt.Fprintf(w, "raw bytes     %d\n", st.RawBytes)
	fmt.Fprintf(w, "stored bytes  %d\n", st.StoredBytes)
	fmt.Fprintf(w, "ratio         %.2f\n", st.Ratio)
	fmt.Fprintf(w, "cost (USD)    %.4f\n", st.CostUSD)
	if st.Conflicts > 0 {
		fmt.Fprintf(w, "conflicts     %d keys recorded with different responses\n", st.Conflicts)
	}
	for _, g := range []struct {
		name string
		cs   []cache.Count
	}{{"provider", st.ByProvider}, {"model", st.ByModel}, {"source", st.BySource}} {
		fmt.Fprintf(w, "\nby %s:\n", g.name)
		for _, c := range g.cs {
			name := c.Name
			if g.name == "source" && name == results.SourceSim {
				name += " (synthetic: simulated, not a real model)"
			}
			sayf(w, "  %-40s %8d  %12.4f USD", name, c.Exchanges, c.CostUSD)
		}
	}
	return nil
}

func runCacheVerify(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) > 0 {
		return usageErr("cache verify: unexpected arguments")
	}
	s, err := openCache(dir, cache.Options{ReadOnly: true, AllowCorrupt: true})
	if err != nil {
		return err
	}
	defer s.Close()
	n, err := verifyStore(ctx, env, s, "")
	if err != nil {
		return err
	}
	if n > 0 {
		return &problemsError{dir, n}
	}
	st, err := s.Stats()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "ok: %d exchanges, %d objects, %d packs verified\n", st.Exchanges, st.Objects, st.Packs)
	return nil
}

// verifyStore prints every problem of s (paths prefixed) to stderr and
// returns how many there were.
func verifyStore(ctx context.Context, env *Env, s *cache.Store, prefix string) (int, error) {
	return s.Verify(ctx, func(p cache.Problem) {
		p.Path = prefix + p.Path
		sayf(env.Stderr, "%s", p)
	})
}

func runCacheGC(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) > 0 {
		return usageErr("cache gc: unexpected arguments")
	}
	s, err := openCache(dir, cache.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.GC()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "removed %d packs, wrote %d (%d objects kept), %d temporary files removed; %d -> %d bytes\n",
		st.PacksRemoved, st.PacksWritten, st.ObjectsKept, st.TempRemoved, st.BytesBefore, st.BytesAfter)
	return s.Close()
}

func runCacheLoad(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	strict, _ := fs.GetBool("strict")
	allowBad, _ := fs.GetBool("allow-bad")
	if strict && allowBad {
		return usageErr("cache load: --strict and --allow-bad exclude each other")
	}
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.CheckWritable(); err != nil {
		return err
	}
	type input struct {
		name string
		r    io.Reader
	}
	var ins []input
	if len(args) == 0 {
		ins = append(ins, input{"<stdin>", env.Stdin})
	}
	for _, a := range args {
		f, err := os.Open(a)
		if err != nil {
			return err
		}
		defer f.Close()
		ins = append(ins, input{a, f})
	}
	var total cache.LoadStats
	for _, in := range ins {
		st, err := s.Load(in.r, cache.LoadOptions{
			Strict: strict,
			Report: func(err error) { sayf(env.Stderr, "%v", lineErr(in.name, err)) },
		})
		total.Lines += st.Lines
		total.Added += st.Added
		total.Present += st.Present
		total.Bad += st.Bad
		if err != nil {
			fmt.Fprintf(env.Stdout, "loaded %d new exchanges before the error\n", total.Added)
			return lineErr(in.name, err)
		}
	}
	fmt.Fprintf(env.Stdout, "%d lines: %d new exchanges, %d already stored, %d bad lines skipped\n", total.Lines, total.Added, total.Present, total.Bad)
	if err := s.Close(); err != nil {
		return err
	}
	if total.Bad > 0 && !allowBad {
		return fmt.Errorf("%d bad lines skipped (listed above; --allow-bad to accept)", total.Bad)
	}
	return nil
}

// lineErr turns a *cache.LineError into a *results.InputError naming the
// file.
func lineErr(file string, err error) error {
	var le *cache.LineError
	if errors.As(err, &le) {
		return results.Errorf(file, le.Line, le.Field, "%s", le.Msg)
	}
	return err
}

func runCacheDump(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) > 0 {
		return usageErr("cache dump: unexpected arguments")
	}
	s, err := openCache(dir, cache.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	out, _ := fs.GetString("out")
	if out == "" {
		return s.Dump(env.Stdout)
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := s.Dump(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// SecretEnvVars are the environment variables whose values cache export
// treats as secrets.
var SecretEnvVars = []string{
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
	"DEEPSEEK_API_KEY", "DASHSCOPE_API_KEY", "MOONSHOT_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY",
	"MISTRAL_API_KEY", "TOGETHER_API_KEY", "PERPLEXITY_API_KEY", "HF_TOKEN",
}

// secretValues returns the values of the secret variables that are set:
// SecretEnvVars, every provider's key variable and extra.
func secretValues(env *Env, extra []string) []string {
	out := replay.KeyValues(env.Getenv)
	for _, name := range slices.Concat(SecretEnvVars, extra) {
		if v := env.Getenv(name); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func runCacheExport(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	out, _ := fs.GetString("out")
	extra, _ := fs.GetStringSlice("secret-env")
	if out == "" || len(args) > 0 {
		return usageErr("cache export: want --out FILE and no arguments")
	}
	s, err := openCache(dir, cache.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	found, err := archive.ScanStore(s, secretValues(env, extra))
	s.Close()
	if err != nil {
		return err
	}
	if len(found) > 0 {
		for _, f := range found {
			sayf(env.Stderr, "%s", f)
		}
		return fmt.Errorf("refusing to export: %d possible secrets found", len(found))
	}
	return writeArchiveFile(out, dir)
}

// writeArchiveFile writes dir as a .tar.zst to path durably, leaving no
// partial file behind on failure.
func writeArchiveFile(path, dir string) error {
	tmp := path + ".partial"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = archive.Write(bw, dir)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

func runCacheImport(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) != 1 {
		return usageErr("cache import: want one archive FILE")
	}
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		return err
	}
	s.Close()
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	stage, err := os.MkdirTemp(filepath.Join(dir, "tmp"), "import-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	if err := archive.Read(ctx, f, stage, archive.Limits{}); err != nil {
		return err
	}
	staged, err := cache.Open(stage, cache.Options{ReadOnly: true, AllowCorrupt: true})
	if err != nil {
		return err
	}
	n, err := verifyStore(ctx, env, staged, args[0]+": ")
	staged.Close()
	if err != nil {
		return err
	}
	if n > 0 {
		return &problemsError{args[0] + " (nothing imported)", n}
	}
	moved, same, err := cache.Merge(stage, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "imported %d files (%d already present)\n", moved, same)
	return nil
}

func runCacheExplain(ctx context.Context, env *Env, fs *pflag.FlagSet, dir string, args []string) error {
	if len(args) != 1 {
		return usageErr("cache explain: want one REQUEST.json")
	}
	nearest, _ := fs.GetInt("nearest")
	b, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	c, err := reqkey.Canonical(bytes.TrimSpace(b))
	if err != nil {
		var re *reqkey.RequestError
		if errors.As(err, &re) {
			return results.Errorf(args[0], 0, re.Field, "%s", re.Msg)
		}
		return err
	}
	k, _ := reqkey.Of(bytes.TrimSpace(b)) // Canonical succeeded: cannot fail
	fmt.Fprintf(env.Stdout, "key %s\n", k)
	s, err := openCache(dir, cache.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer s.Close()
	ok, err := s.Has(k)
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintln(env.Stdout, "stored")
		return nil
	}
	fmt.Fprintln(env.Stdout, "not stored")
	rep, err := cache.Explain(s, c, nearest)
	if err != nil {
		return err
	}
	for _, l := range strings.SplitAfter(rep, "\n") {
		if l != "" {
			sayf(env.Stdout, "%s", strings.TrimSuffix(l, "\n"))
		}
	}
	return nil
}
