package demo

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// TestTiersFollowRanking scores every benchmark of the embedded demo and
// checks a property of each headline table: walking down the headline
// ranking, tiers never decrease, and exactly tied systems share their
// rank in Result.Ranks. Tiers join neighbours in ranking order, so a tier
// handed intervals in any other order (the configuration's, say) breaks
// this.
func TestTiersFollowRanking(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := archive.Read(context.Background(), bytes.NewReader(Embedded()), dir, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	bundle, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.Open(bundle.CachePath(), cache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, bm := range []analysis.Benchmark{icbc.Benchmark{}, hisrubric.Benchmark{}, forecast.Benchmark{}, consensus.Benchmark{}} {
		t.Run(bm.Name(), func(t *testing.T) {
			if !bundle.Has(bm.Name()) {
				t.Fatalf("the demo has no %s", bm.Name())
			}
			in := analysis.Input{Bundle: bundle, Answer: replay.New(store, replay.Config{Mode: replay.Offline})}
			res, err := analysis.Run(context.Background(), bm, in)
			if err != nil {
				t.Fatal(err)
			}
			tb := res.Table(res.Headline)
			col := tb.Col("tier")
			if col < 0 {
				t.Fatalf("headline table %s has no tier column", tb.Name)
			}
			tier := map[string]float64{}
			for _, r := range tb.Rows {
				if r[col].IsNum {
					tier[r[0].Text] = r[col].Num
				}
			}
			if len(tier) < 2 {
				t.Fatalf("%d systems with a tier, want several", len(tier))
			}
			last, lastName := 0.0, ""
			for _, name := range res.Ranking {
				x, ok := tier[name]
				if !ok {
					continue
				}
				if x < last {
					t.Errorf("%s (tier %v) ranks below %s (tier %v)", name, x, lastName, last)
				}
				last, lastName = x, name
			}
			ranks := res.Ranks()
			for i := 1; i < len(ranks); i++ {
				a, b := res.Ranking[i-1], res.Ranking[i]
				if tied := res.Scores[a] == res.Scores[b]; tied != (ranks[i] == ranks[i-1]) {
					t.Errorf("%s and %s: scores %v and %v, ranks %d and %d", a, b, res.Scores[a], res.Scores[b], ranks[i-1], ranks[i])
				}
			}
		})
	}
}
