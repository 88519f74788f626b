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

// A progressOut is the terminal that progress lines go to, with the
// clock that times them.
type progressOut struct {
	io.Writer
	now func() time.Time
}

// terminalOf returns the writer under w's clock, for the replay
// client's progress bar, which redraws only on a terminal file; nil stays
// nil.
func terminalOf(w io.Writer) io.Writer {
	if p, ok := w.(progressOut); ok {
		return p.Writer
	}
	return w
}

// timer returns a function that tells the seconds since it was made by
// w's clock, or nil when w has none.
func timer(w io.Writer) func() float64 {
	p, ok := w.(progressOut)
	if !ok {
		return nil
	}
	start := p.now()
	return func() float64 { return p.now().Sub(start).Seconds() }
}

// took is " in N.N s" by elapsed, or "" without a clock.
func took(elapsed func() float64) string {
	if elapsed == nil {
		return ""
	}
	return fmt.Sprintf(" in %.1f s", elapsed())
}

// phase prints "finrepro: WHAT ..." on w, when w is not nil (a terminal:
// see the commands), and returns the function that prints how long it
// took. The times go to the terminal only, never into an output.
func phase(w io.Writer, format string, args ...any) func() {
	if w == nil {
		return func() {}
	}
	what := fmt.Sprintf(format, args...)
	elapsed := timer(w)
	phaseLine(w, "finrepro: %s ...", what)
	return func() { phaseLine(w, "finrepro: %s: done%s", what, took(elapsed)) }
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
		elapsed := timer(w)
		err := f(i, bm)
		if err == nil {
			mu.Lock()
			done++
			n := done
			mu.Unlock()
			phaseLine(w, "finrepro:   [%d/%d] %s: %s%s", n, len(benches), bm.Name(), what, took(elapsed))
		}
		return err
	})
}
