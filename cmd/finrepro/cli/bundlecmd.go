package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/results"
)

// builtinDemo names the built-in demo bundle where a command takes a
// bundle path (bundle create --from @demo).
const builtinDemo = "@demo"

const bundleCreateDoc = `Make a new bundle in DIR (which must not exist or be empty) and seal and
verify it. --from copies every file of an existing bundle (a folder, a
.tar.zst, or @demo for the built-in synthetic demo bundle); --inputs replaces
or adds one benchmark's inputs folder; --published replaces or adds its
published tables (the .csv files of the folder); --cache merges the
exchanges of a cache folder (one recorded by "finrepro record" or "finrepro
proxy", say) into the bundle's cache. The bundle is synthetic when the
source bundle is or any merged exchange was simulated.`

func runBundleCreate(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("bundle create", "bundle create --out DIR [--from BUNDLE] [--cache D]... [--inputs BENCHMARK=DIR]... [--published BENCHMARK=DIR]...", bundleCreateDoc)
	out := fset.String("out", "", "the new bundle's `DIR`")
	from := fset.String("from", "", "copy this `BUNDLE` first (folder, .tar.zst or @demo)")
	caches := fset.StringArray("cache", nil, "merge the exchanges of cache folder `D` (repeatable)")
	inputs := fset.StringArray("inputs", nil, "a benchmark's inputs, `BENCHMARK=DIR` (repeatable)")
	published := fset.StringArray("published", nil, "a benchmark's published tables, `BENCHMARK=DIR` (repeatable)")
	name := fset.String("name", "", "the bundle's name (default: the base name of --out)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 0 {
		return usageErr("unexpected arguments %q", fset.Args())
	}
	if *out == "" {
		return usageErr("--out is required")
	}
	ins, err := benchmarkDirs("--inputs", *inputs)
	if err != nil {
		return err
	}
	pubs, err := benchmarkDirs("--published", *published)
	if err != nil {
		return err
	}
	if *from == "" && len(ins) == 0 {
		return usageErr("a bundle needs inputs: give --from or --inputs")
	}
	if err := emptyOrAbsent(*out); err != nil {
		return err
	}
	m := results.Manifest{Name: *name, Producer: "finrepro bundle create"}
	if m.Name == "" {
		m.Name = filepath.Base(filepath.Clean(*out))
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if *from != "" {
		arg := *from
		if arg == builtinDemo {
			arg = ""
		}
		src, cleanup, err := openBundle(ctx, bundleArg{path: arg})
		if err != nil {
			return err
		}
		defer cleanup()
		if err := verifyOpened(ctx, env, src); err != nil {
			return err
		}
		for _, f := range src.Manifest.Files {
			if err := copyFile(filepath.Join(src.Dir, filepath.FromSlash(f.Path)), filepath.Join(*out, filepath.FromSlash(f.Path))); err != nil {
				return fmt.Errorf("bundle create: %w", err)
			}
		}
		m.Synthetic = src.Manifest.Synthetic
		m.Producer += " --from " + src.Manifest.Name
		if src.Manifest.Producer != "" {
			m.Producer += " (" + src.Manifest.Producer + ")"
		}
	}
	for _, bd := range ins {
		if err := replaceTree(bd.dir, filepath.Join(*out, results.InputsDir, bd.bench), nil); err != nil {
			return fmt.Errorf("bundle create: --inputs %s: %w", bd.bench, err)
		}
	}
	for _, bd := range pubs {
		csvOnly := func(name string) bool { return strings.HasSuffix(name, ".csv") }
		if err := replaceTree(bd.dir, filepath.Join(*out, results.PublishedDir, bd.bench), csvOnly); err != nil {
			return fmt.Errorf("bundle create: --published %s: %w", bd.bench, err)
		}
	}
	synthetic, err := mergeCaches(filepath.Join(*out, results.CacheDir), *caches)
	if err != nil {
		return err
	}
	m.Synthetic = m.Synthetic || synthetic
	for _, bm := range benchmarks() {
		st, err := os.Stat(filepath.Join(*out, results.InputsDir, bm.Name()))
		if err == nil && st.IsDir() {
			m.Benchmarks = append(m.Benchmarks, bm.Name())
		}
	}
	// sealing hashes every file once; what is left to check is the cache
	sealed, err := results.Seal(*out, m, nil, nil)
	if err != nil {
		return err
	}
	if n := checkCache(ctx, env, *out, &results.Bundle{Dir: *out, Manifest: sealed}); n > 0 {
		return &results.IntegrityError{Err: fmt.Errorf("%s: %d problems", *out, n)}
	}
	fmt.Fprintf(env.Stdout, "created bundle %s (%s): %d files, benchmarks %s; sealed and verified\n",
		*out, sealed.Name, len(sealed.Files), strings.Join(sealed.Benchmarks, ", "))
	return nil
}

// A benchmarkDir is one BENCHMARK=DIR flag.
type benchmarkDir struct{ bench, dir string }

func benchmarkDirs(flag string, vals []string) ([]benchmarkDir, error) {
	var out []benchmarkDir
	for _, v := range vals {
		b, d, ok := strings.Cut(v, "=")
		if !ok || b == "" || d == "" {
			return nil, usageErr("%s %q: want BENCHMARK=DIR", flag, v)
		}
		if findBenchmark(b) == nil {
			return nil, usageErr("%s %q: unknown benchmark %q (known: %s)", flag, v, b, strings.Join(benchmarkNames(), ", "))
		}
		out = append(out, benchmarkDir{b, d})
	}
	return out, nil
}

func benchmarkNames() []string {
	var out []string
	for _, b := range benchmarks() {
		out = append(out, b.Name())
	}
	return out
}

// emptyOrAbsent refuses a path that exists and is not an empty folder.
func emptyOrAbsent(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case len(ents) > 0:
		return usageErr("%s exists and is not empty", dir)
	}
	return nil
}

// copyFile copies the regular file src to dst, creating dst's folder. A
// source that is not a regular file (a link, a device) is refused.
func copyFile(src, dst string) error {
	st, err := os.Lstat(src)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", src)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	o, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(o, in); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}

// replaceTree replaces the folder dst with a copy of the regular files
// under src (those keep accepts, when keep is not nil). Links and other
// entries are refused.
func replaceTree(src, dst string, keep func(name string) bool) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", src)
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	n := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if keep != nil && !keep(d.Name()) {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		n++
		return copyFile(p, filepath.Join(dst, rel))
	})
	if err == nil && n == 0 {
		err = fmt.Errorf("%s holds no file", src)
	}
	return err
}

// mergeCaches adds every exchange of the cache folders srcs to the store
// at dir (created when absent) and reports whether any was simulated. An
// exchange whose key is already stored with another response is an error.
func mergeCaches(dir string, srcs []string) (synthetic bool, err error) {
	dst, err := cache.Open(dir, cache.Options{Verify: true})
	if err != nil {
		return false, fmt.Errorf("bundle create: %w", err)
	}
	defer func() {
		if cerr := dst.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for _, src := range srcs {
		s, err := cache.Open(src, cache.Options{ReadOnly: true})
		if err != nil {
			return false, fmt.Errorf("bundle create: --cache %s: %w", src, err)
		}
		b := dst.NewBatch()
		err = s.Each(func(k cache.Key, x *cache.Exchange) error {
			synthetic = synthetic || x.Meta.Source == results.SourceSim
			_, _, err := b.Add(x)
			return err
		})
		if err == nil {
			err = b.Flush()
		}
		s.Close() // read-only: nothing to lose
		if err != nil {
			return false, fmt.Errorf("bundle create: --cache %s: %w", src, err)
		}
	}
	if len(srcs) > 0 {
		if _, err := dst.GC(); err != nil {
			return false, fmt.Errorf("bundle create: %w", err)
		}
	}
	return synthetic, nil
}

const bundleSealDoc = `Recompute the manifest of the bundle folder DIR after a deliberate edit
(a changed configuration, added published tables) and list what changed:
added, removed and changed files with their old and new sizes. A folder
without a manifest.json is not a bundle and is refused. "finrepro bundle
verify" stays strict: it fails on any file the manifest does not vouch for.`

func runBundleSeal(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("bundle seal", "bundle seal DIR", bundleSealDoc)
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageErr("bundle seal: want one DIR")
	}
	dir := fset.Arg(0)
	if err := results.CheckBundlePath(dir); err != nil {
		return err
	}
	if strings.HasSuffix(dir, ".tar.zst") {
		return usageErr("bundle seal: %s is an archive; seal a bundle folder", dir)
	}
	m, changes, err := results.Reseal(dir, nil, nil)
	if err != nil {
		return &results.IntegrityError{Err: err}
	}
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "  %s\n", c)
	}
	if len(changes) == 0 {
		fmt.Fprintf(env.Stdout, "sealed %s: nothing changed (%d files)\n", dir, len(m.Files))
		return nil
	}
	fmt.Fprintf(env.Stdout, "sealed %s: %d files changed, %d files in the manifest\n", dir, len(changes), len(m.Files))
	return nil
}

const bundlePackDoc = `Verify the bundle folder DIR and write it as one deterministic .tar.zst
archive (SHA256SUMS first, files sorted, fixed times and modes): the same
bundle always gives the same bytes. The archive is written beside FILE and
renamed into place.`

func runBundlePack(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("bundle pack", "bundle pack DIR --out FILE.tar.zst", bundlePackDoc)
	out := fset.String("out", "", "the archive `FILE.tar.zst`")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageErr("bundle pack: want one DIR")
	}
	if !strings.HasSuffix(*out, ".tar.zst") {
		return usageErr("bundle pack: --out must name a .tar.zst file")
	}
	dir := fset.Arg(0)
	n, err := checkBundle(ctx, env, bundleArg{path: dir})
	if err != nil {
		return &results.IntegrityError{Err: err}
	}
	if n > 0 {
		return &results.IntegrityError{Err: fmt.Errorf("%s: %d problems; not packed", dir, n)}
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".finrepro-pack-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing to remove
	if err := archive.Write(tmp, dir); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s (%d bytes)\n", *out, st.Size())
	return nil
}

// bundleCommands are the bundle subcommands besides verify.
var bundleCommands map[string]func(context.Context, *Env, []string) error

func init() {
	bundleCommands = map[string]func(context.Context, *Env, []string) error{
		"create": runBundleCreate,
		"seal":   runBundleSeal,
		"pack":   runBundlePack,
		"diff":   runBundleDiff,
	}
}
