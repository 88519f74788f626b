package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/demo"
)

const demoDoc = `Build the synthetic demo bundle: every benchmark's inputs are generated from
the seed, then every agent and judge call is recorded through the recorder
against the built-in sim provider, exactly as a real recording would be. The
small scale is the bundle built into finrepro; the full scale has the papers'
sizes and is meant for benchmarks. Everything in it is synthetic and says so.

With --scale full, --factor N multiplies every benchmark's tasks by N, for
measuring how costs grow with the bundle.

With --archive, the bundle is also packed into a deterministic .tar.zst.`

func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("demo", "demo (--out DIR | --archive FILE) [flags]", demoDoc)
	out := fs.String("out", "", "bundle `DIR` to create (must be empty or absent); a temporary one when only --archive is given")
	scale := fs.String("scale", "small", "small or full")
	seed := fs.Uint64("seed", 1, "seed of every simulated input and output")
	factor := fs.Int("factor", 1, "with --scale full, multiply every benchmark's tasks by `N` (for scaling measurements)")
	archiveFile := fs.String("archive", "", "also write the bundle as this .tar.zst `FILE`")
	if err := parse(fs, args); err != nil {
		return err
	}
	if (*out == "" && *archiveFile == "") || fs.NArg() > 0 {
		return usageErr("want --out DIR or --archive FILE, and no arguments")
	}
	if *out == "" {
		tmp, err := os.MkdirTemp("", "finrepro-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*out = filepath.Join(tmp, "bundle")
	}
	opt := demo.Options{Scale: demo.Scale(*scale), Seed: *seed, Factor: *factor, Secrets: secretValues(env, nil)}
	if opt.Scale != demo.Small && opt.Scale != demo.Full {
		return usageErr("--scale %q: want small or full", *scale)
	}
	if *factor < 1 || (*factor > 1 && opt.Scale != demo.Full) {
		return usageErr("--factor %d: want a positive factor, above 1 only with --scale full", *factor)
	}
	m, err := demo.Build(ctx, *out, opt, demo.All(), env.Stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote synthetic demo bundle %s (%d files) to %s\n", m.Name, len(m.Files), *out)
	if *archiveFile != "" {
		f, err := os.Create(*archiveFile)
		if err != nil {
			return err
		}
		if err := archive.Write(f, *out); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "wrote %s\n", *archiveFile)
	}
	return nil
}
