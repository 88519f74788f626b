package cli

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/site"
)

const siteDoc = `Replay a bundle offline from its cache, run every benchmark it holds and
write only its static leaderboard site into DIR/site/ (replacing it). The
site links the workbooks, CSV, JSON and LaTeX files that "finrepro
reproduce" left in DIR, when there are any.

BUNDLE is a bundle folder, a .tar.zst archive or an https:// URL of one
(with --sha256 HEX: downloaded once, checked, kept in $FINREPRO_DOWNLOADS or
the user cache folder); without it, the built-in
synthetic demo bundle is used. No API call is made: a request missing from
the cache fails the run (exit 3) with a list of what is missing.`

func runSite(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("site", "site [BUNDLE] [flags]", siteDoc)
	out := fset.String("out", "finrepro-out", "output `DIR`; the site goes to DIR/site")
	force := fset.Bool("force", false, "write into a non-empty --out folder that finrepro did not write (no file there is removed)")
	sets := fset.StringArray("set", nil, "scoring setting `benchmark.knob=value` (repeatable)")
	noSweep := fset.Bool("no-sweep", false, "skip the default sensitivity sweeps")
	sha := fset.String("sha256", "", "SHA-256 of BUNDLE when it is an https:// URL of a .tar.zst (required then)")
	tol := fset.Float64("tolerance", -1, "tolerance for published cells (default: half a unit in the last printed digit)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() > 1 {
		return usageErr("at most one BUNDLE")
	}
	folder, err := claimOutputFolder(*out, *force)
	if err != nil {
		return err
	}
	arg, err := resolveBundle(ctx, env, fset.Arg(0), *sha)
	if err != nil {
		return err
	}
	progress := terminalProgress(env)
	s, err := openSession(ctx, env, arg, *sets, progress)
	if err != nil {
		return err
	}
	defer s.close()
	a, err := s.analyse(ctx, env, folder, analyseOptions{tolerance: *tol, sweep: !*noSweep}) // the site does not show the item records
	if err != nil {
		return err
	}
	defer a.close()
	aliases, err := loadAliases(s.bundle)
	if err != nil {
		return err
	}
	downloads, err := existingOutputs(*out)
	if err != nil {
		return err
	}
	dir := filepath.Join(*out, "site")
	prov := provenance(s.bundle, s.benches, a.res, s.settings)
	end := phase(progress, "writing the site to %s", dir)
	names, err := site.Write(dir, site.Input{Results: a.res, Sensitivity: a.sens, Comparisons: a.comparisonTables(), Published: a.comps,
		Provenance: prov, Aliases: aliases, Downloads: downloads, TaskDetails: a.taskDetails, Listings: a.spill.listings(), Exchanges: exchangeLookup(s.store)})
	if err != nil {
		return err
	}
	end()
	for i, n := range names {
		names[i] = "site/" + n
	}
	if err := folder.finish(names, "site/"); err != nil {
		return err
	}
	if prov.Synthetic {
		fmt.Fprintln(env.Stdout, "SYNTHETIC DATA: every exchange in this bundle was simulated; the numbers show how finrepro works, not how the systems perform.")
	}
	fmt.Fprintf(env.Stdout, "Wrote the site to %s (open %s).\n", dir, filepath.Join(dir, "index.html"))
	return nil
}

// existingOutputs lists the files a reproduce run left in out (the
// folders of outputDirs other than site, and SHA256SUMS), relative to out
// and sorted, for the site's downloads.
func existingOutputs(out string) ([]string, error) {
	var files []string
	for _, d := range outputDirs {
		if d == "site" {
			continue
		}
		err := filepath.WalkDir(filepath.Join(out, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			rel, err := filepath.Rel(out, p)
			files = append(files, filepath.ToSlash(rel))
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
	}
	if _, err := os.Stat(filepath.Join(out, "SHA256SUMS")); err == nil {
		files = append(files, "SHA256SUMS")
	}
	slices.SortFunc(files, strings.Compare)
	return files, nil
}
