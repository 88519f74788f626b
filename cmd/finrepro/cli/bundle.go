package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

const bundleDoc = `Make, seal, check, pack and compare bundles (see docs/bundle.md).
Subcommands ("finrepro bundle SUBCOMMAND --help" for each):

  create --out DIR [--from BUNDLE] [--cache D] [--inputs B=DIR] [--published B=DIR]
                a new bundle, sealed and verified
  seal DIR      recompute the manifest after a deliberate edit, listing changes
  pack DIR --out FILE.tar.zst
                verify and write one deterministic archive
  diff A B      which inputs, systems, judges, exchanges and published cells differ

  verify PATH [--sha256 HEX]
                PATH is a bundle folder, its .tar.zst or an https:// URL of
                one (with --sha256). Checks the manifest,
                the size and SHA-256 of every file, that no file is unlisted,
                and re-hashes every object of the bundle's cache. Every problem
                is reported; exit 4 on any.`

func runBundle(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		if run, ok := bundleCommands[args[0]]; ok {
			return run(ctx, env, args[1:])
		}
	}
	if len(args) == 0 || args[0] != "verify" {
		fs := env.newFlags("bundle", "bundle (create|seal|verify|pack|diff) ...", bundleDoc)
		if err := parse(fs, args); err != nil {
			return err
		}
		return usageErr("want a subcommand: create, seal, verify, pack or diff")
	}
	fs := env.newFlags("bundle verify", "bundle verify PATH [--sha256 HEX]", bundleDoc)
	sha := fs.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL of a .tar.zst (required then)")
	if err := parse(fs, args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageErr("bundle verify: want one PATH")
	}
	path, err := resolveBundle(ctx, env, fs.Arg(0), *sha)
	if err != nil {
		return err
	}
	n, err := checkBundle(ctx, env, path)
	if err != nil {
		return err
	}
	if n > 0 {
		return &problemsError{fs.Arg(0), n}
	}
	fmt.Fprintf(env.Stdout, "ok: %s\n", fs.Arg(0))
	return nil
}

// checkBundle prints every problem of the bundle at path (a folder or a
// .tar.zst, extracted first into a temporary folder) and returns how many
// there were. An error means the bundle could not be checked at all.
func checkBundle(ctx context.Context, env *Env, arg bundleArg) (int, error) {
	path := arg.path
	if path == "" {
		return 0, usageErr("want a bundle PATH")
	}
	b, cleanup, err := openBundle(ctx, arg)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	probs, err := b.Verify(ctx)
	for _, p := range probs {
		sayf(env.Stderr, "%s: %s", path, p)
	}
	n := len(probs)
	if err != nil {
		sayf(env.Stderr, "%s: %v", path, err)
		n++
	}
	return n + checkCache(ctx, env, path, b), nil
}

// checkCache prints every problem of the exchange cache of b, opened
// from path, and returns how many there were.
func checkCache(ctx context.Context, env *Env, path string, b *results.Bundle) int {
	cdir := b.CachePath()
	if _, err := os.Stat(filepath.Join(cdir, "FORMAT")); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s: no exchange cache\n", path, results.CacheDir)
		return 1
	}
	s, err := cache.Open(cdir, cache.Options{ReadOnly: true, AllowCorrupt: true})
	if err != nil {
		sayf(env.Stderr, "%s: %v", path, err)
		return 1
	}
	defer s.Close()
	m, err := verifyStore(ctx, env, s, path+": "+results.CacheDir+"/")
	if err != nil {
		sayf(env.Stderr, "%s: %v", path, err)
		m++
	}
	return m
}
