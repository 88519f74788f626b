package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"golang.org/x/term"
)

// Outcomes of a request, in the log and the counts.
const (
	outcomeHit      = "hit"            // answered from the cache
	outcomeMiss     = "miss"           // not stored, offline
	outcomeRecorded = "recorded"       // forwarded and stored
	outcomeFailed   = "failed"         // forwarded, not stored (cut stream, error event, credential)
	outcomeUpstream = "upstream_error" // the upstream's error answer, passed through
	outcomeRefused  = "refused"        // the proxy's own error (bad request, server state)
	outcomeCanceled = "canceled"       // the client went away first
)

// A logEntry is one line of the --log file. It never holds a credential,
// a query string or a body.
type logEntry struct {
	Time      string  `json:"time"`
	Run       string  `json:"run"`
	Method    string  `json:"method"`
	Path      string  `json:"path"`
	Provider  string  `json:"provider,omitempty"`
	Endpoint  string  `json:"endpoint,omitempty"`
	Key       string  `json:"key,omitempty"`
	Sample    int     `json:"sample"`
	Stream    bool    `json:"stream"`
	Outcome   string  `json:"outcome"`
	Status    int     `json:"status"`
	Bytes     int     `json:"bytes"`
	LatencyMS int64   `json:"latency_ms"`
	CostUSD   float64 `json:"cost_usd,omitempty"`
	Depends   string  `json:"previous_response_id,omitempty"`
	Error     string  `json:"error,omitempty"`
}

func (s *Server) writeLog(e *logEntry) {
	if s.cfg.Log == nil {
		return
	}
	b, _ := json.Marshal(e) // strings and numbers always encode
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.cfg.Log.Write(append(b, '\n')) // a log that cannot be written must not stop answering
}

// Counts count the requests a proxy has answered, by outcome.
type Counts struct {
	Hits, Misses, Recorded, Failed, Upstream, Refused int
	// SpentUSD is the cost of what was recorded, AvoidedUSD the recorded
	// cost of what was answered from the cache.
	SpentUSD, AvoidedUSD float64
}

// String formats the counts for the live display.
func (c Counts) String() string {
	return fmt.Sprintf("hits %d  misses %d  recorded %d  failed %d  upstream errors %d  refused %d  spent $%.4f  avoided $%.4f",
		c.Hits, c.Misses, c.Recorded, c.Failed, c.Upstream, c.Refused, c.SpentUSD, c.AvoidedUSD)
}

// A counter keeps the counts and draws them on a terminal.
type counter struct {
	w   io.Writer
	tty bool
	mu  sync.Mutex
	c   Counts
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (c *counter) add(outcome string, cost float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch outcome {
	case outcomeHit:
		c.c.Hits++
	case outcomeMiss:
		c.c.Misses++
	case outcomeRecorded:
		c.c.Recorded++
		c.c.SpentUSD += cost
	case outcomeFailed:
		c.c.Failed++
	case outcomeUpstream:
		c.c.Upstream++
	case outcomeRefused:
		c.c.Refused++
	}
	if c.tty {
		fmt.Fprintf(c.w, "\r%s\x1b[K", c.c)
	}
}

func (c *counter) avoid(cost float64) {
	c.mu.Lock()
	c.c.AvoidedUSD += cost
	c.mu.Unlock()
}

func (c *counter) get() Counts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.c
}

// logf writes a line to the progress writer, keeping the live line.
func (c *counter) logf(format string, args ...any) {
	if c.w == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tty {
		fmt.Fprint(c.w, "\r\x1b[K")
	}
	fmt.Fprintf(c.w, format+"\n", args...)
	if c.tty {
		fmt.Fprintf(c.w, "\r%s\x1b[K", c.c)
	}
}
