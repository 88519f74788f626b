package site

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/demo"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/results"
)

func TestE2ETmp(t *testing.T) {
	ctx := context.Background()
	dir := "/tmp/e2e/bundle"
	if _, err := os.Stat(dir); err != nil {
		if _, err := demo.Build(ctx, dir, demo.Options{Scale: demo.Small, Seed: 1}, demo.All(), os.Stderr); err != nil {
			t.Fatal(err)
		}
	}
	b, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.Open(b.CachePath(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	client := replay.New(store, replay.Config{Mode: replay.Offline})
	var res []*analysis.Result
	for _, g := range demo.All() {
		r, err := g.Benchmark().Run(ctx, analysis.Input{Bundle: b, Answer: client})
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	os.RemoveAll("/tmp/e2e/site")
	t0 := time.Now()
	if err := Write("/tmp/e2e/site", Input{Results: res, Provenance: report.Provenance{Synthetic: true, Bundle: "demo"}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("site written in %v", time.Since(t0))
	br := newBrowser(t)
	for _, p := range pages(t, "/tmp/e2e/site") {
		br.load(t, "/tmp/e2e/site", p)
		if p == "icbcbench.html" || p == "findeepresearch.html" || p == "findeepforecast.html" || p == "finresearchbench2.html" {
			br.screenshot(t, "e2e-"+p+".png")
		}
	}
	for _, p := range br.problems() {
		t.Error(p)
	}
}
