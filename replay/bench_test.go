package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// BenchmarkReplay measures answering 500 stored calls offline through the
// client ("answer") against the baseline of reading the same exchanges
// with cache.Get ("get"), in the same run, then both again on a store
// Verify has passed ("-verified"), whose objects are not re-hashed. The
// ratio of answer to get is the cost of the replay layer: request
// building, keying and parsing.
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	long := strings.Repeat("Net interest margin fell 12 bp on deposit repricing; 净息差下降。", 60)
	oracle := OracleFunc(func(p results.Prompt) (string, error) { return p.User + long, nil })
	var calls []results.Call
	for i := range 500 {
		calls = append(calls, call("sim", "judge", long[:100+i]))
	}
	rec := New(store, Config{Mode: Record, Sim: NewSim(1, oracle, nil), Concurrency: 8,
		Clock: func() time.Time { return time.Unix(0, 0) }})
	var keys []cache.Key
	for _, r := range rec.Answer(context.Background(), calls) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		k, _ := reqkey.Parse(r.Key)
		keys = append(keys, k)
	}
	// The same runs against a store whose packs Verify has just passed,
	// as a bundle's are after its manifest check: objects are not
	// re-hashed.
	verified, err := cache.Open(dir, cache.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer verified.Close()
	if n, err := verified.Verify(context.Background(), func(p cache.Problem) { b.Error(p) }); n > 0 || err != nil {
		b.Fatal(n, err)
	}
	for _, s := range []struct {
		name  string
		store *cache.Store
	}{{"", store}, {"-verified", verified}} {
		b.Run("get"+s.name, func(b *testing.B) {
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				for _, k := range keys {
					if _, err := s.store.Get(k); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run("answer"+s.name, func(b *testing.B) {
			c := New(s.store, Config{})
			defer reportCPU(b, cpuTime())
			for b.Loop() {
				for _, r := range c.Answer(context.Background(), calls) {
					if r.Err != nil {
						b.Fatal(r.Err)
					}
				}
			}
		})
	}
}

// reportCPU reports the CPU time per operation since start, as "cpu-ns/op".
func reportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
