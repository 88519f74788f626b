package replay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

// BenchmarkReplay measures answering 500 stored calls offline through the
// client ("answer") against the baseline of reading the same exchanges
// with cache.Get ("get"), in the same run. The ratio of the two is the
// cost of the replay layer: request building, keying and parsing.
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
		k, _ := cache.ParseKey(r.Key)
		keys = append(keys, k)
	}
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			for _, k := range keys {
				if _, err := store.Get(k); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("answer", func(b *testing.B) {
		c := New(store, Config{})
		for b.Loop() {
			for _, r := range c.Answer(context.Background(), calls) {
				if r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		}
	})
}
