package replay

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/finrepro/finrepro/results"
	"golang.org/x/term"
)

// A progress reports a recording: a redrawn bar on a terminal, plain lines
// otherwise, nothing when its writer is nil. Its times are wall-clock and
// only ever reach the progress writer.
type progress struct {
	w      io.Writer
	tty    bool
	redact func(string) string

	mu                   sync.Mutex
	total, ndone, failed int
	// stopped counts calls canceled (an interrupt): not done, not failed.
	stopped  int
	cost     float64
	began    time.Time
	lastLine int // done count at the last plain line
	drawn    bool
}

func newProgress(w io.Writer, redact func(string) string) *progress {
	p := &progress{w: w, redact: redact}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

func (p *progress) start(n int) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total, p.ndone, p.failed, p.stopped, p.cost, p.lastLine = n, 0, 0, 0, 0, 0
	p.began = time.Now() // for the rate and ETA shown on stderr only
	if !p.tty {
		fmt.Fprintf(p.w, "recording %d requests\n", n)
	}
}

// canceled counts a call stopped by an interrupt: the bar does not move.
func (p *progress) canceled() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped++
	if p.tty {
		p.draw()
	}
}

func (p *progress) done(ok bool, cost float64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ndone++
	if !ok {
		p.failed++
	}
	p.cost += cost
	switch {
	case p.tty:
		p.draw()
	case p.ndone == p.total || p.ndone-p.lastLine >= max(1, p.total/20):
		p.lastLine = p.ndone
		fmt.Fprintln(p.w, p.status())
	}
}

// status is "done/total, rate, ETA, failures, cost".
func (p *progress) status() string {
	el := time.Since(p.began).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.ndone) / el
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.ndone)/rate) * time.Second).Round(time.Second).String()
	}
	s := fmt.Sprintf("%d/%d  %.1f/s  eta %s  failed %d  $%.4f", p.ndone, p.total, rate, eta, p.failed, p.cost)
	if p.stopped > 0 {
		s += fmt.Sprintf("  interrupted: %d not sent", p.stopped)
	}
	return s
}

func (p *progress) draw() {
	const width = 30
	n := 0
	if p.total > 0 {
		n = width * p.ndone / p.total
	}
	fmt.Fprintf(p.w, "\r[%s%s] %s\x1b[K", strings.Repeat("=", n), strings.Repeat(" ", width-n), p.status())
	p.drawn = true
}

func (p *progress) finish() {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// logf writes a log line (redacted), keeping a terminal bar intact.
func (p *progress) logf(format string, args ...any) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	fmt.Fprintln(p.w, results.Printable(p.redact(fmt.Sprintf(format, args...))))
	if p.drawn {
		p.draw()
	}
}

func (p *progress) warnf(format string, args ...any) { p.logf("warning: "+format, args...) }
