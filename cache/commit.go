package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// Group commit: Puts that arrive while a pack is being written wait
// together and are written as the next pack, with one fsync. A Put never
// waits for more than the pack being written and its own, and returns
// once its exchange is durable. With one Put at a time nothing waits: each
// is written at once, as its own pack, and compaction (compact.go) merges
// such packs.

// committer is a store's group commit.
type committer struct {
	once sync.Once
	mu   sync.Mutex
	cur  *group // accepting Puts; nil when none waits
	wake chan struct{}
	quit chan struct{}
	done chan struct{} // closed when the loop has ended
	shut bool
}

// group is the Puts of one pack.
type group struct {
	b    *Batch
	done chan struct{} // closed when b is durable (or failed)
	err  error
}

// Put stores x under the key of its request and returns the key. The
// exchange is durable when Put returns. Storing a key again with the same
// response does nothing; with another response it keeps the stored one,
// or, in verify mode, returns a *ConflictError. Concurrent Puts share
// packs and fsyncs (group commit).
func (s *Store) Put(x *Exchange) (Key, error) {
	if !json.Valid(x.Response) {
		return Key{}, fmt.Errorf("cache: put: response: not valid JSON")
	}
	if !utf8.Valid(x.Response) {
		return Key{}, fmt.Errorf("cache: put: response: not valid UTF-8")
	}
	if s.opt.ReadOnly {
		return Key{}, errors.New("cache: put: store opened read-only")
	}
	c, err := reqkey.Canonical(x.Request)
	if err != nil {
		return Key{}, err
	}
	// x's response is kept only until Put returns, so it is not copied.
	p := s.prepare(x, c)
	cm := &s.commit
	cm.once.Do(s.startCommit)
	cm.mu.Lock()
	if cm.shut {
		cm.mu.Unlock()
		return p.key, errors.New("cache: put: store closed")
	}
	g := cm.cur
	if g == nil {
		g = &group{b: s.NewBatch(), done: make(chan struct{})}
		g.b.grouped = true
		cm.cur = g
	}
	_, queued := g.b.keys[p.key]
	k, added, err := g.b.addPrepared(p)
	if err != nil || !added && !queued {
		if g.b.Len() == 0 && cm.cur == g {
			cm.cur = nil
		}
		cm.mu.Unlock()
		return k, err // refused, or stored already
	}
	select {
	case cm.wake <- struct{}{}:
	default: // the loop is awake already
	}
	cm.mu.Unlock()
	<-g.done
	return k, g.err
}

// startCommit starts the loop, once per store.
func (s *Store) startCommit() {
	cm := &s.commit
	cm.wake = make(chan struct{}, 1)
	cm.quit = make(chan struct{})
	cm.done = make(chan struct{})
	go s.commitLoop()
}

// commitLoop writes the waiting group whenever woken, one pack at a time.
func (s *Store) commitLoop() {
	cm := &s.commit
	defer close(cm.done)
	for {
		quit := false
		select {
		case <-cm.wake:
		case <-cm.quit:
			quit = true
		}
		cm.mu.Lock()
		g := cm.cur
		cm.cur = nil
		cm.mu.Unlock()
		if g != nil {
			g.err = g.b.Flush()
			close(g.done)
		}
		if quit {
			return
		}
	}
}

// closeCommit writes what waits and stops the loop; no Put is taken after.
func (s *Store) closeCommit() {
	cm := &s.commit
	cm.once.Do(s.startCommit)
	cm.mu.Lock()
	already := cm.shut
	cm.shut = true
	cm.mu.Unlock()
	if !already {
		close(cm.quit)
	}
	<-cm.done
}
