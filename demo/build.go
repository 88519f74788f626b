package demo

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// RecordedAt is the fixed recording time of every simulated exchange, so
// that two demo builds are byte-identical.
var RecordedAt = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)

// Producer returns the manifest's producer line for opt.
func Producer(opt Options) string {
	return fmt.Sprintf("finrepro demo --scale %s --seed %d (synthetic: every exchange simulated by the sim provider)", opt.Scale, opt.Seed)
}

// Build writes a demo bundle into dir, which must be empty or absent:
// for every generator, its inputs and the published tables, then every
// call of its benchmark recorded through the sim provider, then the
// manifest. progress receives a line per benchmark; nil for none.
func Build(ctx context.Context, dir string, opt Options, gens []Generator, progress io.Writer) (*results.Manifest, error) {
	if opt.Scale != Small && opt.Scale != Full {
		return nil, fmt.Errorf("demo: unknown scale %q (small or full)", opt.Scale)
	}
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("demo: %s is not empty", dir)
	}
	// Pack format 1: the embedded small bundle stays byte-identical. No
	// background compaction: which packs it merges would depend on timing,
	// and it holds the objects of the packs it merges; gc below packs
	// every small pack once, in name order.
	store, err := cache.Open(filepath.Join(dir, results.CacheDir), cache.Options{PackFormat: 1, NoCompact: true})
	if err != nil {
		return nil, err
	}
	defer store.Close() // after the explicit Close below, a no-op
	b := &results.Bundle{Dir: dir}
	var names []string
	for _, g := range gens {
		bench := g.Benchmark()
		name := bench.Name()
		names = append(names, name)
		in := filepath.Join(dir, results.InputsDir, name)
		if err := os.MkdirAll(in, 0o755); err != nil {
			return nil, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "demo: %s: generating inputs and recording its simulated calls ...\n", name)
		}
		oracle, err := g.Generate(in, opt)
		if err != nil {
			return nil, fmt.Errorf("demo: %s: %w", name, err)
		}
		if err := copyPublished(dir, name); err != nil {
			return nil, err
		}
		client := replay.New(store, replay.Config{
			Mode:  replay.Record,
			Sim:   replay.NewSim(opt.Seed, oracle, nil),
			Clock: func() time.Time { return RecordedAt },
		})
		texts, err := newFileTexts(dir)
		if err != nil {
			return nil, err
		}
		res, err := analysis.Run(ctx, bench, analysis.Input{Bundle: b, Answer: client, Texts: texts})
		if cerr := texts.close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("demo: %s: %w", name, err)
		}
		if res.Missing > 0 {
			return nil, fmt.Errorf("demo: %s: %d calls not recorded", name, res.Missing)
		}
		if progress != nil {
			fmt.Fprintf(progress, "demo: %s: %d tables\n", name, len(res.Tables))
		}
	}
	aliases, err := fs.ReadFile(assets, "assets/aliases.csv")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, results.AliasesName), aliases, 0o644); err != nil {
		return nil, err
	}
	// One Put per exchange leaves one small pack each; gc merges them into
	// one pack with a trained dictionary, deterministically.
	if progress != nil {
		fmt.Fprintln(progress, "demo: packing the cache and sealing the bundle ...")
	}
	if _, err := store.GC(); err != nil {
		return nil, err
	}
	if err := store.Close(); err != nil {
		return nil, err
	}
	found, err := archive.ScanSecrets(dir, opt.Secrets)
	if err != nil {
		return nil, err
	}
	if len(found) > 0 {
		return nil, fmt.Errorf("demo: refusing to seal a bundle holding a secret: %v", found[0])
	}
	return results.Seal(dir, results.Manifest{
		Name:       fmt.Sprintf("finrepro-demo-%s", opt.Scale),
		Benchmarks: names,
		Producer:   Producer(opt),
		Synthetic:  true,
	}, nil, nil)
}

// copyPublished copies the embedded published tables of benchmark into
// the bundle's published/<benchmark> folder.
func copyPublished(dir, benchmark string) error {
	src := path.Join("assets/published", benchmark)
	ents, err := fs.ReadDir(assets, src)
	if err != nil {
		return nil // no published tables for this benchmark
	}
	dst := filepath.Join(dir, results.PublishedDir, benchmark)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		b, err := fs.ReadFile(assets, path.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
