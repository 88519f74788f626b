package cli

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// A watchedBenchmark is a benchmark whose collections tell, once the
// garbage collector frees them, that they are gone: the memory of a run
// grows with the bundle as long as collections outlive their benchmark.
type watchedBenchmark struct {
	analysis.Benchmark
	t     *testing.T
	freed *atomic.Int32 // collections freed, of every benchmark
	made  *atomic.Int32 // collections made
}

func (b watchedBenchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	// every collection made before this one must be unreachable by now
	runtime.GC()
	runtime.GC() // cleanups run after the cycle that finds the object
	for range 100 {
		if b.freed.Load() == b.made.Load() {
			break
		}
		runtime.Gosched()
		runtime.GC()
	}
	if f, m := b.freed.Load(), b.made.Load(); f != m {
		b.t.Errorf("%s: collecting, while %d of the %d collections made before are still reachable", b.Name(), m-f, m)
	}
	c, err := b.Benchmark.Collect(ctx, in)
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer {
		b.t.Fatalf("%s: a collection of type %T, not a pointer the test can watch", b.Name(), c)
	}
	b.made.Add(1)
	runtime.AddCleanup((*byte)(v.UnsafePointer()), func(n *atomic.Int32) { n.Add(1) }, b.freed)
	return c, nil
}

func (b watchedBenchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	return b.Benchmark.(analysis.ItemLister).Items(c, s)
}

// TestCollectionsFreedInTurn runs reproduce's analysis of the demo bundle
// and checks that each benchmark's collection (every reply it parsed,
// what grows with the bundle) is unreachable before the next benchmark
// is collected, and that no collection is left once the analysis is
// done: the run's peak memory is then one benchmark's collection, not
// the sum of them.
func TestCollectionsFreedInTurn(t *testing.T) {
	var e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e, Getenv: func(string) string { return "" }}
	ctx := context.Background()
	s, err := openSession(ctx, env, bundleArg{}, nil, nil)
	if err != nil {
		t.Fatal(err, e.String())
	}
	defer s.close()
	var freed, made atomic.Int32
	for i, bm := range s.benches {
		if _, ok := bm.(analysis.ItemLister); !ok {
			t.Fatalf("%s lists no items: the watched wrapper would hide nothing, but the test assumes it", bm.Name())
		}
		s.benches[i] = watchedBenchmark{Benchmark: bm, t: t, freed: &freed, made: &made}
	}
	folder, err := claimOutputFolder(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.analyse(ctx, env, folder, -1, true, true)
	if err != nil {
		t.Fatal(err, e.String())
	}
	defer a.close()
	if made.Load() != int32(len(s.benches)) {
		t.Fatalf("%d collections made, want %d", made.Load(), len(s.benches))
	}
	runtime.GC()
	runtime.GC()
	for range 100 {
		if freed.Load() == made.Load() {
			break
		}
		runtime.Gosched()
		runtime.GC()
	}
	if freed.Load() != made.Load() {
		t.Errorf("after the analysis, %d of %d collections are still reachable", made.Load()-freed.Load(), made.Load())
	}
	runtime.KeepAlive(a)
}
