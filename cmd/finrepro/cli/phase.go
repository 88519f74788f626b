package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/finrepro/finrepro/analysis"
)

// phaseMu keeps the lines of concurrent phases whole.
var phaseMu sync.Mutex

// phase prints "finrepro: WHAT ..." on w, when w is not nil (a terminal:
// see the commands), and returns the function that prints how long it
// took. The times go to the terminal only, never into an output.
func phase(w io.Writer, format string, args ...any) func() {
	if w == nil {
		return func() {}
	}
	what := fmt.Sprintf(format, args...)
	start := time.Now()
	phaseLine(w, "finrepro: %s ...", what)
	return func() { phaseLine(w, "finrepro: %s: done in %.1f s", what, time.Since(start).Seconds()) }
}

func phaseLine(w io.Writer, format string, args ...any) {
	phaseMu.Lock()
	defer phaseMu.Unlock()
	sayf(w, format, args...)
}

// eachBenchmarkShown is eachBenchmark that prints, on w when not nil, a
// line as each benchmark finishes: its name, what was done and how long
// it took.
func eachBenchmarkShown(benches []analysis.Benchmark, w io.Writer, what string, f func(i int, bm analysis.Benchmark) error) error {
	if w == nil {
		return eachBenchmark(benches, f)
	}
	var mu sync.Mutex
	done := 0
	return eachBenchmark(benches, func(i int, bm analysis.Benchmark) error {
		start := time.Now()
		err := f(i, bm)
		if err == nil {
			mu.Lock()
			done++
			n := done
			mu.Unlock()
			phaseLine(w, "finrepro:   [%d/%d] %s: %s in %.1f s", n, len(benches), bm.Name(), what, time.Since(start).Seconds())
		}
		return err
	})
}
