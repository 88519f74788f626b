package proxy

import (
	"context"
	"sync"

	"github.com/finrepro/finrepro/cache"
)

// runs keeps, per run, the samples each distinct request has used and
// the ids of the Responses answers given, for the state check.
type runs struct {
	mu  sync.Mutex
	seq map[runKey]*sequence
	ids map[string]map[string]bool
}

// A runKey is a request (its key at sample 0) within a run.
type runKey struct {
	run string
	key cache.Key
}

// A sequence counts the answered occurrences of one request in one run.
// Identical requests of a run are answered one at a time, so that the
// n-th answered one is sample n-1 whatever the timing.
type sequence struct {
	sem  chan struct{}
	next int // the sample of the next occurrence
}

func (rs *runs) init() {
	rs.seq = map[runKey]*sequence{}
	rs.ids = map[string]map[string]bool{}
}

// lock waits for the request's sequence in run.
func (rs *runs) lock(ctx context.Context, run string, base cache.Key) (*sequence, error) {
	rs.mu.Lock()
	k := runKey{run, base}
	sq := rs.seq[k]
	if sq == nil {
		sq = &sequence{sem: make(chan struct{}, 1)}
		rs.seq[k] = sq
	}
	rs.mu.Unlock()
	select {
	case sq.sem <- struct{}{}:
		return sq, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (sq *sequence) unlock() { <-sq.sem }

// noteID records a response id answered in run.
func (rs *runs) noteID(run, id string) {
	if id == "" {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.ids[run] == nil {
		rs.ids[run] = map[string]bool{}
	}
	rs.ids[run][id] = true
}

// seen reports whether run has answered a response with id.
func (rs *runs) seen(run, id string) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.ids[run][id]
}
