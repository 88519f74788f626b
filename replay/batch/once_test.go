package batch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch/batchtest"
)

// TestCollectAsksStoreOnce: collecting asks the store about each key at
// most once per run, whatever the result lines, a cut download or the
// tally ask again, through rounds that end with every batch collected.
func TestCollectAsksStoreOnce(t *testing.T) {
	defer func(f func(*cache.Store, cache.Key) (bool, error)) { storeHas = f }(storeHas)
	asked := map[cache.Key]int{}
	storeHas = func(s *cache.Store, k cache.Key) (bool, error) {
		asked[k]++
		return s.Has(k)
	}
	e := newEnv(t, batchtest.Options{ErrorEvery: 5, Cut: 1})
	reqs := requests("openai", 40)
	ctx := context.Background()
	if _, err := e.open(t).Submit(ctx, reqs, SubmitOptions{Provider: "openai"}); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 5; round++ {
		clear(asked)
		cr, err := e.open(t).Collect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range asked {
			if n > 1 {
				t.Errorf("round %d: the store was asked about %s %d times", round, k.Str(), n)
			}
		}
		if len(cr.Pending) == 0 && cr.Stored > 0 {
			return
		}
	}
	t.Fatal("the batches were never collected")
}

// TestRetryWaits: a control request the provider refuses with 503 is
// retried after the replay client's backoff (replay.Backoff): waits
// within [d/2, d] of a ceiling d doubling from a second, jittered (not
// the plain doubling), and none after the last attempt.
func TestRetryWaits(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var waits []time.Duration
	e := &endpoint{api: OpenAI, kind: replay.KindChat, baseURL: srv.URL, http: srv.Client(),
		redact: func(s string) string { return s }, backoff: replay.NewBackoff(0, 3), now: time.Now,
		sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	if _, err := e.send(context.Background(), "GET", "/batches/b", "", nil); err == nil {
		t.Fatal("send succeeded against a server that always answers 503")
	}
	if n.Load() != attempts || len(waits) != attempts-1 {
		t.Fatalf("%d attempts, %d waits; want %d and %d", n.Load(), len(waits), attempts, attempts-1)
	}
	plain := true
	for i, d := range waits {
		ceil := time.Second << i
		if d < ceil/2 || d > ceil {
			t.Errorf("wait %d = %v, want within [%v, %v]", i+1, d, ceil/2, ceil)
		}
		plain = plain && d == ceil
	}
	if plain {
		t.Errorf("waits %v are the plain doubling, without jitter", waits)
	}
}
