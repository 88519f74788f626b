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
	s.mu.RLock()
	names := keysOf(s.packs)
	slices.Sort(names)
	type packInfo struct {
		p  *pack
		ix *packIndex
	}
	var infos []packInfo
	for _, name := range names {
		p := s.packs[name]
		st.BytesBefore += p.size
		ix, _, err := s.loadPack(p.path)
		if err != nil {
			continue // unreadable: left alone, verify reports it
		}
		infos = append(infos, packInfo{p, ix})
	}
	live := map[Digest]bool{}
	s.winners(func(k Key, r rec) {
		live[Digest(k)] = true
		live[s.respID(r)] = true
	})
	// The keeper of an object is its copy in the first pack (by name).
	keeper := map[Digest]*pack{}
	for _, in := range infos {
		for _, o := range in.ix.objs {
			if _, ok := keeper[o.digest]; !ok {
				keeper[o.digest] = in.p
			}
		}
	}
	small := 0
	for _, in := range infos {
		if in.p.size < smallPack {
			small++
		}
	}
	rewrite := map[*pack]bool{}
	for _, in := range infos {
		if small > 1 && in.p.size < smallPack {
			rewrite[in.p] = true
		}
		if in.ix.v2 == nil && s.packFormat == 2 {
			rewrite[in.p] = true // format 1: rewritten in format 2
		}
		for _, o := range in.ix.objs {
			if !live[o.digest] || keeper[o.digest] != in.p {
				rewrite[in.p] = true
			}
		}
		for _, r := range in.ix.recs {
			// Keys are distinct within a pack: a record is live when
			// its pack holds the record that wins.
			if w, ok := s.lookup(r.key); !ok || w.p != in.p {
				rewrite[in.p] = true
			}
		}
	}
	// Collect what moves: live records and kept objects of rewritten packs.
	type move struct {
		loc objLoc
		d   Digest
	}
	var moves []move
	var recs []recEntry
	for _, in := range infos {
		if !rewrite[in.p] {
			continue
		}
		for _, o := range in.ix.objs {
			if live[o.digest] && keeper[o.digest] == in.p {
				moves = append(moves, move{objLoc{in.p, o.where}, o.digest})
			}
		}
		for _, r := range in.ix.recs {
			if w, ok := s.lookup(r.key); ok && w.p == in.p {
				recs = append(recs, r)
			}
		}
	}
	s.mu.RUnlock()
	if len(rewrite) > 0 {
		b := s.NewBatch()
		real := map[Digest]Digest{} // local id -> digest of its content
		added := map[Digest]bool{}
		for _, m := range moves {
			raw, err := s.readAt(nil, m.loc, m.d)
			if err != nil {
				return nil, fmt.Errorf("cache: gc: nothing removed: %w", err)
			}
			d := m.d
			if m.loc.local {
				// A local id stays in memory: the new pack names the
				// object by its content.
				d = Digest(sha256.Sum256(raw))
				real[m.d] = d
			}
			if added[d] {
				continue // the same content under another local id
			}
			added[d] = true
			b.items = append(b.items, item{d: d, raw: raw})
			b.raw += len(raw)
			st.ObjectsKept++
			if b.raw >= packTarget {
				if err := b.flushRaw(&recs, st, false); err != nil {
					return nil, err
				}
			}
		}
		for i := range recs {
			if d, ok := real[recs[i].resp]; ok {
				recs[i].resp = d
			}
		}
		if err := b.flushRaw(&recs, st, true); err != nil {
			return nil, err
		}
		// The new packs are durable: the old ones can go, but for one
		// written again byte for byte (the same name: the same file).
		dirs := map[string]bool{}
		for p := range rewrite {
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

// flushRaw writes the batch's objects and, when last, the records.
func (b *Batch) flushRaw(recs *[]recEntry, st *GCStats, last bool) error {
	if last {
		b.recs = append(b.recs, *recs...)
		*recs = nil
	}
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
