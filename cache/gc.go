package cache

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/finrepro/finrepro/internal/regular"
)

// GCStats says what GC did.
type GCStats struct {
	PacksRemoved int   `json:"packs_removed"`
	PacksWritten int   `json:"packs_written"`
	ObjectsKept  int   `json:"objects_kept"`
	BytesBefore  int64 `json:"bytes_before"`
	BytesAfter   int64 `json:"bytes_after"`
	TempRemoved  int   `json:"temp_removed"`
}

// smallPack is the size below which GC merges packs (one per Put) into
// bigger ones.
const smallPack = 4 << 20

// staleAge is how old a temporary file or an unused dictionary must be
// before GC removes it, so that it never takes one from a running writer.
const staleAge = time.Hour

// GC removes what no exchange needs: records shadowed by another record
// of the same key, objects no record references and second copies of an
// object. It rewrites the live contents of every pack holding such dead
// entries (and merges small packs) into new packs, durably, before it
// deletes the old ones, so an interrupted GC loses nothing. Temporary files
// older than an hour are removed. Unreadable packs are left for the user to inspect. GC must not run while another
// process writes to the store: a writer that reuses an object GC has just
// found unreferenced would lose it.
func (s *Store) GC() (*GCStats, error) {
	st := &GCStats{}
	s.maint.Lock()
	defer s.maint.Unlock()
	// Packs another process has merged away since this store read them
	// are dropped first: gc must work from what is on disk.
	if err := s.forgetGone(); err != nil {
		return nil, err
	}
	// What GC holds is a few dozen bytes per object and per exchange: the
	// packs' indexes are read one at a time, once to find the keeper of
	// every object and once to move what is kept, and the kept objects
	// and live records stream into the new packs. Holding every pack's
	// index and the list of moves made gc 80 % of the live heap at the
	// peak of building the demo bundle at 8x the full scale (README, demo
	// generation).
	s.mu.RLock()
	names := keysOf(s.packs)
	slices.Sort(names)
	var packs []*pack // the readable ones, in name order
	var copies []objCopy
	small := 0
	for _, name := range names {
		p := s.packs[name]
		st.BytesBefore += p.size
		ix, _, err := s.loadPack(p.path, nil)
		if err != nil {
			continue // unreadable: left alone, verify reports it
		}
		for _, o := range ix.objs {
			copies = append(copies, objCopy{o.digest, uint32(len(packs))})
		}
		packs = append(packs, p)
		if p.size < smallPack {
			small++
		}
	}
	keepers := keepersOf(copies)
	copies = nil
	live := s.liveDigests()
	s.mu.RUnlock()

	var b *Batch // the new packs, once a pack is rewritten
	added := map[Digest]bool{}
	rewritten := map[*pack]bool{}
	for i, p := range packs {
		s.mu.RLock()
		ix, moves, rewrite := s.gcPlan(p, uint32(i), small, keepers, live)
		var recs []recEntry
		if rewrite {
			for _, r := range ix.recs {
				if w, ok := s.lookup(r.key); ok && w.p == p {
					recs = append(recs, r)
				}
			}
		}
		s.mu.RUnlock()
		if !rewrite {
			continue
		}
		rewritten[p] = true
		if b == nil {
			b = s.NewBatch()
		}
		real := map[Digest]Digest{} // local id -> digest of its content
		for _, o := range moves {
			raw, err := s.readAt(nil, objLoc{p, o.where}, o.digest)
			if err != nil {
				return nil, fmt.Errorf("cache: gc: nothing removed: %w", err)
			}
			d := o.digest
			if o.local {
				// A local id stays in memory: the new pack names the
				// object by its content.
				d = Digest(sha256.Sum256(raw))
				real[o.digest] = d
			}
			if added[d] {
				continue // the same content under another local id
			}
			added[d] = true
			b.items = append(b.items, item{d: d, raw: raw})
			b.raw += len(raw)
			st.ObjectsKept++
			if b.raw >= packTarget {
				if err := b.flushRaw(st); err != nil {
					return nil, err
				}
			}
		}
		// The pack's live records go into the new pack its last objects
		// are in: writing every record into the last pack held them all
		// in memory at once (39 % of gc's live heap at 8x the full-scale
		// demo, README, demo generation).
		for _, r := range recs {
			if d, ok := real[r.resp]; ok {
				r.resp = d
			}
			b.recs = append(b.recs, r)
		}
	}
	if b != nil {
		if err := b.flushRaw(st); err != nil {
			return nil, err
		}
		// The new packs are durable: the old ones can go, but for one
		// written again byte for byte (the same name: the same file).
		dirs := map[string]bool{}
		for p := range rewritten {
			if b.written[p.name] {
				continue
			}
			if err := os.Remove(p.path); err != nil && !isNotExist(err) {
				return nil, fmt.Errorf("cache: gc: %w", err)
			}
			dirs[filepath.Dir(p.path)] = true
			st.PacksRemoved++
		}
		for d := range dirs {
			if err := regular.SyncDir(d); err != nil {
				return nil, fmt.Errorf("cache: gc: %w", err)
			}
		}
	}
	st.TempRemoved = s.removeStale()
	if err := s.reload(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	for _, p := range s.packs {
		st.BytesAfter += p.size
	}
	s.mu.RUnlock()
	return st, nil
}

// An objCopy is a copy of an object in the pack of that number (in
// name order among the packs GC reads).
type objCopy struct {
	d    Digest
	pack uint32
}

// keepersOf returns, sorted by digest, the keeper of every object of
// copies (which lists the copies in pack order): its copy in the first
// pack.
func keepersOf(copies []objCopy) []objCopy {
	slices.SortStableFunc(copies, func(a, b objCopy) int { return cmpDigest(a.d, b.d) })
	return slices.CompactFunc(copies, func(a, b objCopy) bool { return a.d == b.d })
}

// keeps reports whether the pack numbered pack keeps object d.
func keeps(keepers []objCopy, d Digest, pack uint32) bool {
	i, ok := slices.BinarySearchFunc(keepers, d, func(c objCopy, d Digest) int { return cmpDigest(c.d, d) })
	return ok && keepers[i].pack == pack
}

// liveDigests returns, sorted, the objects some exchange needs: the
// request and the response of every key's winning record; s.mu is held.
func (s *Store) liveDigests() []Digest {
	var live []Digest
	s.winners(func(k Key, r rec) {
		live = append(live, Digest(k), s.respID(r))
	})
	slices.SortFunc(live, cmpDigest)
	return slices.Compact(live)
}

// gcPlan reads the index of p, the pack numbered n, and returns it with
// the objects GC moves out of it, and whether p is rewritten: when it is
// one of several small packs, of format 1 in a store of format 2, or
// holds a dead record, an object no exchange needs or an object another
// pack keeps; s.mu is held.
func (s *Store) gcPlan(p *pack, n uint32, small int, keepers []objCopy, live []Digest) (*packIndex, []objEntry, bool) {
	ix, _, err := s.loadPack(p.path, nil)
	if err != nil {
		return nil, nil, false // unreadable since: left alone
	}
	rewrite := small > 1 && p.size < smallPack || ix.v2 == nil && s.packFormat == 2
	var moves []objEntry
	for _, o := range ix.objs {
		_, needed := slices.BinarySearchFunc(live, o.digest, cmpDigest)
		if needed && keeps(keepers, o.digest, n) {
			moves = append(moves, o)
		} else {
			rewrite = true
		}
	}
	for _, r := range ix.recs {
		// Keys are distinct within a pack: a record is live when its
		// pack holds the record that wins.
		if w, ok := s.lookup(r.key); !ok || w.p != p {
			rewrite = true
		}
	}
	return ix, moves, rewrite
}

// flushRaw writes the batch's objects and records, if any, into a new
// pack.
func (b *Batch) flushRaw(st *GCStats) error {
	if len(b.items) == 0 && len(b.recs) == 0 {
		return nil
	}
	if err := b.flushAny(); err != nil {
		return fmt.Errorf("cache: gc: %w", err)
	}
	st.PacksWritten++
	return nil
}

// removeStale removes old temporary files.
func (s *Store) removeStale() int {
	n := 0
	ents, _ := os.ReadDir(filepath.Join(s.dir, tmpDir)) // nothing to clean when unreadable
	for _, e := range ents {
		if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > staleAge {
			if os.Remove(filepath.Join(s.dir, tmpDir, e.Name())) == nil {
				n++
			}
		}
	}
	return n
}

// reload drops the in-memory index and reads it again from disk.
func (s *Store) reload() error {
	s.mu.Lock()
	for _, p := range s.packs {
		if p.f != nil {
			p.f.Close() // read-only file: nothing to lose
		}
	}
	s.packs = map[string]*pack{}
	s.resetIndex()
	s.problems = nil
	s.mu.Unlock()
	return s.refresh()
}
