package replay

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

// sharedSystemCalls returns n judge calls to the sim provider sharing system, a
// long text shared by reference (so that the calls themselves stay small).
func sharedSystemCalls(n int, system string) []results.Call {
	calls := make([]results.Call, n)
	for i := range calls {
		calls[i] = call("sim", "judge", fmt.Sprintf("question %d", i))
		calls[i].Prompt.System = system
	}
	return calls
}

// packBytes returns the files of the store in dir (packs, dictionaries),
// by path.
func packBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, "tmp") {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSimPacksIndependentOfOrder: the packs of a recording of simulated
// calls are the same bytes whatever the order of the calls and however
// many run at once (the exchanges are stored in key order).
func TestSimPacksIndependentOfOrder(t *testing.T) {
	calls := sharedSystemCalls(300, "You are a careful analyst.")
	echo := OracleFunc(func(p results.Prompt) (string, error) { return "ok " + p.User, nil })
	var want map[string]string
	for _, tc := range []struct {
		name        string
		reverse     bool
		concurrency int
	}{{"in order, one at a time", false, 1}, {"reversed, eight at a time", true, 8}, {"in order, default", false, 0}} {
		store, dir := openStore(t)
		cs := slices.Clone(calls)
		if tc.reverse {
			slices.Reverse(cs)
		}
		c := New(store, Config{Mode: Record, Concurrency: tc.concurrency, Providers: map[string]ProviderConfig{"sim": {Kind: KindSim, MaxAttempts: 20}}, Sim: NewSim(1, echo, map[string]SimModel{"judge": {Malformed: 0.1}})})
		for _, r := range c.Answer(context.Background(), cs) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		if n := c.Counts().Recorded; n != len(calls) {
			t.Fatalf("%s: %d recorded, want %d", tc.name, n, len(calls))
		}
		if err := store.Close(); err != nil {
			t.Fatal(err)
		}
		got := packBytes(t, dir)
		if want == nil {
			want = got
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d files, want %d", tc.name, len(got), len(want))
		}
		for p, b := range want {
			if got[p] != b {
				t.Errorf("%s: %s differs", tc.name, p)
			}
		}
	}
}

// TestSimRecordingHoldsAWindow: while the call with the smallest key
// (whose exchange must be stored first) has not returned, no more than
// simWindow calls are started: a recording holds a window of exchanges,
// not the whole batch. Before, every call of the batch ran.
func TestSimRecordingHoldsAWindow(t *testing.T) {
	const n = 400
	calls := sharedSystemCalls(n, "You are a careful analyst.")
	echo := func(p results.Prompt) (string, error) { return "ok " + p.User, nil }
	scratch, _ := openStore(t)
	replies := New(scratch, Config{Mode: Record, Sim: NewSim(1, OracleFunc(echo), nil)}).Answer(context.Background(), calls)
	first := 0
	for i, r := range replies {
		if r.Key < replies[first].Key {
			first = i
		}
	}
	var started, whileFirst atomic.Int64
	slow := OracleFunc(func(p results.Prompt) (string, error) {
		if p.User != calls[first].Prompt.User {
			started.Add(1)
			return echo(p)
		}
		// Wait until no other call has started for 200 ms, or all have.
		for last := int64(-1); ; {
			time.Sleep(200 * time.Millisecond)
			cur := started.Load()
			if cur == last || cur == n-1 {
				break
			}
			last = cur
		}
		whileFirst.Store(started.Load())
		return echo(p)
	})
	store, _ := openStore(t)
	c := New(store, Config{Mode: Record, Sim: NewSim(1, slow, nil)})
	for _, r := range c.Answer(context.Background(), calls) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if got := whileFirst.Load(); got >= simWindow {
		t.Errorf("%d calls started while the first one ran, want fewer than %d", got, simWindow)
	}
	if got := c.Counts().Recorded; got != n {
		t.Errorf("%d recorded, want %d", got, n)
	}
}

// TestSimRecordingMemoryFlat: the live heap while recording simulated
// calls with long prompts does not grow with the number of calls of the
// batch: requests are built when sent and exchanges are stored as they
// come, so what is held is at most one pack's objects (cache's 32 MB
// target, reached by both sizes here), the window and the replies. Before,
// every request of the batch was built first and every exchange was held
// until the batch ended: about 3 x 128 KB more per call, 230 MB more for
// the larger batch.
func TestSimRecordingMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("records 150 MB of requests")
	}
	system := strings.Repeat("Synthetic rubric text shared by every request. ", 2800) // 131 KB
	grew := func(n int) int64 {
		var seen atomic.Int64
		var mu sync.Mutex
		var peak uint64
		sample := func() {
			mu.Lock()
			defer mu.Unlock()
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		calls := sharedSystemCalls(n, system)
		sample()
		base := peak
		oracle := OracleFunc(func(p results.Prompt) (string, error) {
			if seen.Add(1)%10 == 0 {
				sample()
			}
			return "ok " + p.User, nil
		})
		// Pack format 1, as the demo writes.
		store, err := cache.Open(t.TempDir(), cache.Options{PackFormat: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		c := New(store, Config{Mode: Record, Sim: NewSim(1, oracle, nil)})
		for _, r := range c.Answer(context.Background(), calls) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		if got := c.Counts().Recorded; got != n {
			t.Fatalf("%d recorded, want %d", got, n)
		}
		return int64(peak) - int64(base)
	}
	small, large := grew(300), grew(900)
	t.Logf("live heap grew by %d MB recording 300 calls, %d MB recording 900", small>>20, large>>20)
	if large-small > 32<<20 {
		t.Errorf("recording 900 calls of 131 KB held %d MB more than recording 300, want under 32 MB", (large-small)>>20)
	}
}
