package demo

import (
	"context"
	"os"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// BenchmarkBundle times each benchmark's Collect ("<name>/collect") and
// Score ("<name>/score") on the bundle in the folder FINREPRO_BENCH_BUNDLE
// (a full-scale one, say); it is skipped when the variable is unset. The
// replies are read from the bundle's store once, opened read-only, and
// then served from memory in call order, so that the benchmark measures
// the benchmarks' own code.
func BenchmarkBundle(b *testing.B) {
	dir := os.Getenv("FINREPRO_BENCH_BUNDLE")
	if dir == "" {
		b.Skip("FINREPRO_BENCH_BUNDLE not set")
	}
	bundle, store := openBundle(b, dir)
	ctx := context.Background()
	for _, bm := range benchmarks {
		if !bundle.Has(bm.Name()) {
			continue
		}
		tape := &tapeAnswerer{a: replay.New(store, replay.Config{Mode: replay.Offline})}
		in := analysis.Input{Bundle: bundle, Answer: tape}
		col, err := bm.Collect(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		tape.a = nil
		b.Run(bm.Name()+"/collect", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tape.next = 0
				if _, err := bm.Collect(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bm.Name()+"/score", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bm.Score(ctx, col, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchmarks are the four benchmarks, in display order.
var benchmarks = []analysis.Benchmark{icbc.Benchmark{}, hisrubric.Benchmark{}, forecast.Benchmark{}, consensus.Benchmark{}}

// openBundle opens the bundle in dir and its store, read-only, closed
// when the test ends.
func openBundle(tb testing.TB, dir string) (*results.Bundle, *cache.Store) {
	tb.Helper()
	bundle, err := results.OpenBundle(dir)
	if err != nil {
		tb.Fatal(err)
	}
	store, err := cache.Open(bundle.CachePath(), cache.Options{ReadOnly: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	return bundle, store
}

// A tapeAnswerer records the replies of a while it has one, then plays
// them back in order.
type tapeAnswerer struct {
	a    results.Answerer
	tape [][]results.Reply
	next int
}

func (t *tapeAnswerer) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	if t.a != nil {
		out := t.a.Answer(ctx, calls)
		t.tape = append(t.tape, out)
		return out
	}
	out := t.tape[t.next]
	t.next++
	if len(out) != len(calls) {
		panic("tapeAnswerer: calls differ from the recording")
	}
	return out
}
