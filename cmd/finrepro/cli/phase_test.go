package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/analysis"
)

// TestPhaseLines: a phase prints its start and its end; each benchmark
// that finishes gets a numbered line, one that fails none; with no writer
// nothing is printed.
func TestPhaseLines(t *testing.T) {
	var b bytes.Buffer
	// a terminal whose clock moves 1.5 s at every reading
	var now time.Time
	w := progressOut{&b, func() time.Time { now = now.Add(1500 * time.Millisecond); return now }}
	end := phase(w, "replaying %d benchmarks", 2)
	benches := benchmarks()[:2]
	err := eachBenchmarkShown(benches, w, "replayed", func(i int, _ analysis.Benchmark) error {
		if i == 1 {
			return errors.New("boom")
		}
		return nil
	})
	end()
	if err == nil {
		t.Fatal("the failure was lost")
	}
	out := b.String()
	for _, w := range []string{"finrepro: replaying 2 benchmarks ...\n", "[1/2] " + benches[0].Name() + ": replayed in ", "finrepro: replaying 2 benchmarks: done in "} {
		if !strings.Contains(out, w) {
			t.Errorf("no %q in\n%s", w, out)
		}
	}
	if strings.Contains(out, benches[1].Name()+": replayed") {
		t.Errorf("a failed benchmark reported done:\n%s", out)
	}
	phase(nil, "x")()
	if err := eachBenchmarkShown(benches, nil, "x", func(int, analysis.Benchmark) error { return nil }); err != nil {
		t.Fatal(err)
	}
}
