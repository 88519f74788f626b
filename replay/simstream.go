package replay

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/finrepro/finrepro/cache"
)

// Simulated exchanges cost nothing to make again, so they skip the
// per-exchange fsync of a recording: a batch of calls stores its
// simulated exchanges in packs of one cache.Batch, in the order of their
// keys, whatever order the calls finish in. The calls are made in key
// order by a few workers and each exchange is added to the batch as soon
// as every exchange before it is, so a recording holds the exchanges of
// a window of calls, not those of the whole batch (which grows with a
// benchmark's size), and the packs are the same as if every exchange had
// been kept, sorted and added at the end.

// simWindow is how many calls past the first one not yet stored the
// workers may start: the most simulated exchanges a recording holds.
const simWindow = 64

// A simStream records the simulated jobs of one batch of calls.
type simStream struct {
	c    *Client
	jobs []*job // in key order

	mu    sync.Mutex
	moved sync.Cond // signalled when next advances
	taken int       // jobs handed to workers
	next  int       // jobs resolved and, when recorded, added to b
	held  []*cache.Exchange
	ended []bool
	// added are the jobs whose exchange went to b, with their attempts:
	// they fail if b does.
	added []simAdded
	b     *cache.Batch
	err   error // the first error of b; nothing more is added after it
}

// A simAdded is a job whose exchange went to the batch.
type simAdded struct {
	j        *job
	attempts int
}

// recordSims records the simulated jobs in key order on as many workers
// as their providers allow at once, storing their exchanges as above.
func (c *Client) recordSims(ctx context.Context, jobs []*job) {
	if len(jobs) == 0 {
		return
	}
	jobs = slices.Clone(jobs)
	slices.SortFunc(jobs, func(a, b *job) int { return bytes.Compare(a.key[:], b.key[:]) })
	s := &simStream{c: c, jobs: jobs, held: make([]*cache.Exchange, len(jobs)), ended: make([]bool, len(jobs))}
	s.moved.L = &s.mu
	workers := 0
	sems := map[chan struct{}]bool{}
	for i, j := range jobs {
		j.stream, j.simAt = s, i
		if sem := c.semaphore(j.req.Provider, j.pc); !sems[sem] {
			sems[sem] = true
			workers += cap(sem)
		}
	}
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := s.take()
				if !ok {
					return
				}
				c.send(ctx, s.jobs[i])
				s.resolve(i)
			}
		}()
	}
	wg.Wait()
	s.finish()
}

// take hands out the next job, once fewer than simWindow jobs wait to be
// added before it.
func (s *simStream) take() (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.taken < len(s.jobs) && s.taken-s.next >= simWindow {
		s.moved.Wait()
	}
	if s.taken == len(s.jobs) {
		return 0, false
	}
	s.taken++
	return s.taken - 1, true
}

// hold keeps the exchange of job j until the jobs before it are done.
func (s *simStream) hold(j *job, x *cache.Exchange) {
	s.mu.Lock()
	s.held[j.simAt] = x
	s.mu.Unlock()
}

// resolve marks job i done and adds the exchanges that now come next.
func (s *simStream) resolve(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended[i] = true
	moved := false
	for s.next < len(s.jobs) && s.ended[s.next] {
		if x := s.held[s.next]; x != nil {
			s.held[s.next] = nil
			s.add(s.jobs[s.next], x)
		}
		s.next++
		moved = true
	}
	if moved {
		s.moved.Broadcast()
	}
}

// add adds the exchange of j to the batch; s.mu is held.
func (s *simStream) add(j *job, x *cache.Exchange) {
	s.added = append(s.added, simAdded{j, x.Meta.Attempts})
	if s.err != nil {
		return
	}
	if s.b == nil {
		s.b = s.c.store.NewBatch()
	}
	k, _, err := s.b.Add(x)
	if err != nil {
		s.err = err
		return
	}
	if s.c.checkStoredKey(j, k, x.Meta.Attempts) != nil {
		s.c.mu.Lock()
		s.c.counts.Recorded--
		s.c.mu.Unlock()
	}
}

// finish writes the last pack; if the batch failed, every call whose
// exchange went to it fails.
func (s *simStream) finish() {
	if s.err == nil && s.b != nil {
		s.err = s.b.Flush()
	}
	if s.err == nil {
		return
	}
	for _, a := range s.added {
		ce := &CallError{Cause: CauseStore, Msg: s.err.Error()}
		s.c.fail(a.j, ce, a.attempts)
		s.c.mu.Lock()
		s.c.counts.Recorded--
		s.c.mu.Unlock()
	}
}
