package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/analysis"
)

// A watchedBenchmark is a benchmark whose collections tell, once the
// garbage collector frees them, that they are gone: the memory of a run
// grows with the bundle as long as collections outlive their benchmark.
// Its first Score (the baseline's, before the item records and the
// sweep) also checks that the next benchmark is being collected
// meanwhile, and holds the collection it scores until the benchmark
// after the next has started collecting (or a short while), so that a
// run that collects ahead of what it finishes is caught holding three.
type watchedBenchmark struct {
	analysis.Benchmark
	t     *testing.T
	i     int
	ev    *collectEvents
	freed *atomic.Int32 // collections freed, of every benchmark
	made  *atomic.Int32 // collections made
}

// collectEvents are, by benchmark, the moments the watched benchmarks
// tell each other about.
type collectEvents struct {
	started []chan struct{} // closed when the benchmark's Collect begins
	checked []chan struct{} // closed when that Collect has counted what is reachable
	made    []chan struct{} // closed when that Collect has made its collection
	scored  []sync.Once     // the first Score of the benchmark
}

func newCollectEvents(n int) *collectEvents {
	ev := &collectEvents{started: make([]chan struct{}, n), checked: make([]chan struct{}, n), made: make([]chan struct{}, n), scored: make([]sync.Once, n)}
	for i := range n {
		ev.started[i], ev.checked[i], ev.made[i] = make(chan struct{}), make(chan struct{}), make(chan struct{})
	}
	return ev
}

func (b watchedBenchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	first := !isClosed(b.ev.started[b.i])
	if first {
		close(b.ev.started[b.i])
	}
	// every collection made before this one, but the previous
	// benchmark's (collected or finished meanwhile), must be unreachable
	// by now
	if alive := waitFreed(b.freed, b.made, 1); alive > 1 {
		b.t.Errorf("%s: collecting, while %d of the %d collections made before are still reachable (at most 1 may be)", b.Name(), alive, b.made.Load())
	}
	if first {
		close(b.ev.checked[b.i])
	}
	c, err := b.Benchmark.Collect(ctx, in)
	if err != nil {
		return nil, err
	}
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer {
		return nil, fmt.Errorf("%s: a collection of type %T, not a pointer the test can watch", b.Name(), c)
	}
	b.made.Add(1)
	runtime.AddCleanup((*byte)(v.UnsafePointer()), func(n *atomic.Int32) { n.Add(1) }, b.freed)
	if first {
		close(b.ev.made[b.i])
	}
	return c, nil
}

func (b watchedBenchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	b.ev.scored[b.i].Do(func() {
		next, after := b.i+1, b.i+2
		if next >= len(b.ev.started) {
			return
		}
		select {
		case <-b.ev.made[next]:
		case <-time.After(10 * time.Second):
			b.t.Errorf("%s: scored for 10 s while the next benchmark was not collected", b.Name())
			return
		}
		if after >= len(b.ev.started) {
			return
		}
		select {
		case <-b.ev.started[after]: // collecting ahead: let its check see this collection
			<-b.ev.checked[after]
		case <-time.After(200 * time.Millisecond): // as it should: it waits for this one
		}
	})
	return b.Benchmark.Score(ctx, c, s)
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (b watchedBenchmark) Items(c analysis.Collection, s analysis.Settings) (*analysis.Items, error) {
	return b.Benchmark.(analysis.ItemLister).Items(c, s)
}

// waitFreed collects garbage until at most want of the collections made
// are reachable, or a while has passed, and returns how many are.
func waitFreed(freed, made *atomic.Int32, want int32) int32 {
	runtime.GC()
	runtime.GC() // cleanups run after the cycle that finds the object
	for range 100 {
		if made.Load()-freed.Load() <= want {
			break
		}
		runtime.Gosched()
		runtime.GC()
	}
	return made.Load() - freed.Load()
}

// TestCollectionsFreedInTurn runs reproduce's analysis of the demo bundle
// and checks that when a benchmark is collected, every collection made
// before it is unreachable but one (the previous benchmark's, collected
// or finished meanwhile), and that no collection is left once the analysis
// is done: the run's peak memory is then two benchmarks' collections at
// most, not the sum of them all; and that the next benchmark is
// collected while one is scored (see watchedBenchmark), which keeps both
// cores busy.
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
	ev := newCollectEvents(len(s.benches))
	for i, bm := range s.benches {
		if _, ok := bm.(analysis.ItemLister); !ok {
			t.Fatalf("%s lists no items: the watched wrapper would hide nothing, but the test assumes it", bm.Name())
		}
		s.benches[i] = watchedBenchmark{Benchmark: bm, t: t, i: i, ev: ev, freed: &freed, made: &made}
	}
	folder, err := claimOutputFolder(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.analyse(ctx, env, folder, analyseOptions{tolerance: -1, sweep: true, items: true})
	if err != nil {
		t.Fatal(err, e.String())
	}
	defer a.close()
	if made.Load() != int32(len(s.benches)) {
		t.Fatalf("%d collections made, want %d", made.Load(), len(s.benches))
	}
	if alive := waitFreed(&freed, &made, 0); alive != 0 {
		t.Errorf("after the analysis, %d of %d collections are still reachable", alive, made.Load())
	}
	runtime.KeepAlive(a)
}

// A failingBenchmark fails its collection or its scoring with err.
type failingBenchmark struct {
	analysis.Benchmark
	collect, score error
	onCollect      func() // called as Collect begins, if not nil
}

func (b failingBenchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if b.onCollect != nil {
		b.onCollect()
	}
	if b.collect != nil {
		return nil, b.collect
	}
	return b.Benchmark.Collect(ctx, in)
}

func (b failingBenchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	if b.score != nil {
		return nil, b.score
	}
	return b.Benchmark.Score(ctx, c, s)
}

// TestAnalyseCanceled checks that an analysis stopped while it collects
// (an interrupt) returns the context's error rather than waiting for a
// benchmark that is never collected.
func TestAnalyseCanceled(t *testing.T) {
	var e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e, Getenv: func(string) string { return "" }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := openSession(ctx, env, bundleArg{}, nil, nil)
	if err != nil {
		t.Fatal(err, e.String())
	}
	defer s.close()
	s.benches[1] = failingBenchmark{Benchmark: s.benches[1], onCollect: cancel}
	folder, err := claimOutputFolder(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		a, err := s.analyse(ctx, env, folder, analyseOptions{tolerance: -1, sweep: true, items: true})
		if err == nil {
			a.close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want the context's", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the canceled analysis has not returned in a minute")
	}
}

// TestAnalyseErrorsInOrder checks that, though benchmarks are collected
// beside the ones before, the error of a run is that of the first
// benchmark in order that failed, collecting or scoring, named; that the
// benchmarks before it are done, their lines printed in order; and that
// nothing after a failed benchmark is finished.
func TestAnalyseErrorsInOrder(t *testing.T) {
	errCollect, errScore := errors.New("collection broke"), errors.New("scoring broke")
	for _, tc := range []struct {
		name           string
		collect, score int // the benchmark that fails so, -1 for none
		want           error
		done           int // benchmarks done before the error
	}{
		{"scoring before a failed collection", 2, 1, errScore, 1},
		{"collection before a failed scoring", 1, 2, errCollect, 1},
		{"last collection", 3, -1, errCollect, 3},
		{"first scoring", -1, 0, errScore, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e, progress bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e, Getenv: func(string) string { return "" }}
			ctx := context.Background()
			s, err := openSession(ctx, env, bundleArg{}, nil, nil)
			if err != nil {
				t.Fatal(err, e.String())
			}
			defer s.close()
			s.progress = &progress
			var name string
			for i, bm := range s.benches {
				f := failingBenchmark{Benchmark: bm}
				if i == tc.collect {
					f.collect = errCollect
				}
				if i == tc.score {
					f.score = errScore
				}
				if (tc.want == errCollect && i == tc.collect) || (tc.want == errScore && i == tc.score) {
					name = bm.Name()
				}
				s.benches[i] = f
			}
			folder, err := claimOutputFolder(t.TempDir(), false)
			if err != nil {
				t.Fatal(err)
			}
			a, err := s.analyse(ctx, env, folder, analyseOptions{tolerance: -1, sweep: true, items: true})
			if err == nil {
				a.close()
				t.Fatal("the analysis succeeded")
			}
			if !errors.Is(err, tc.want) || !strings.HasPrefix(err.Error(), name+": ") {
				t.Errorf("error %q, want %q of %s", err, tc.want, name)
			}
			var lines []string
			for l := range strings.Lines(progress.String()) {
				if strings.Contains(l, "] ") {
					lines = append(lines, strings.TrimSpace(l))
				}
			}
			var want []string
			for i := range tc.done {
				want = append(want, fmt.Sprintf("finrepro:   [%d/%d] %s: done", i+1, len(s.benches), s.benches[i].Name()))
			}
			if !slices.Equal(lines, want) {
				t.Errorf("progress lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
