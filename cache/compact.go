package cache

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/finrepro/finrepro/internal/regular"
)

// Compaction merges small packs (one per Put when Puts come one at a
// time) into bigger ones, so that a store recorded one exchange at a time
// opens as fast as one loaded in bulk. Packs under smallPack are sorted
// into tiers by size (tierLimits); when a tier holds compactFanIn packs of
// one dictionary, they are merged into one pack, which falls into a
// higher tier. Every exchange is so rewritten once per tier at most, and
// a store holds fewer than compactFanIn small packs per tier and
// dictionary.
//
// A merge copies every object and record of its packs (nothing is
// dropped, unlike gc): each object's frame is decoded and checked against
// its digest first, the merged pack is written durably, and only then are
// the old packs removed. So it is safe while other processes read or
// write the store: whatever pack of the old ones they had read, its
// content is in the new one (a read that finds a pack removed lists the
// packs again), and a crash leaves the old packs, the new one, or both.
// Packs holding a key that another pack records too are left to gc.

// mergedHook, when set (by tests), runs after a merge has replaced its
// packs in memory and before it removes their files.
var mergedHook func()

// compactFanIn is how many small packs of one tier trigger a merge.
const compactFanIn = 16

// compactMax is the most packs one merge takes.
const compactMax = 4 * compactFanIn

// tierLimits are the upper pack sizes of the tiers; packs of smallPack or
// more are never compacted (gc merges them if asked).
var tierLimits = [...]int64{64 << 10, 1 << 20, smallPack}

func packTier(size int64) int {
	for i, l := range tierLimits {
		if size < l {
			return i
		}
	}
	return -1
}

// compactSoon starts a compaction in the background unless one is
// running; Close waits for it.
func (s *Store) compactSoon() {
	if s.opt.ReadOnly || s.opt.NoCompact || !s.compacting.CompareAndSwap(false, true) {
		return
	}
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		s.compacting.Store(false)
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		defer s.compacting.Store(false)
		// A failed merge changes nothing; the next one tries again.
		_, _ = s.Compact()
	}()
}

// Compact merges small packs while a tier holds compactFanIn of them (see
// above) and returns how many packs it merged. Writes after Flush and Put
// start it in the background; it is exported for tests and tools.
func (s *Store) Compact() (int, error) {
	if s.opt.ReadOnly {
		return 0, nil
	}
	s.maint.Lock()
	defer s.maint.Unlock()
	merged := 0
	for {
		sel := s.compactCandidates()
		if sel == nil {
			return merged, nil
		}
		n, err := s.mergePacks(sel)
		if err != nil {
			return merged, fmt.Errorf("cache: compact: %w", err)
		}
		merged += n
	}
}

// compactCandidates returns the packs of the lowest tier and dictionary
// holding compactFanIn mergeable packs, sorted by name, or nil.
func (s *Store) compactCandidates() []*pack {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil
	}
	type class struct {
		tier int
		dict Digest
	}
	by := map[class][]*pack{}
	for _, p := range s.packs {
		t := packTier(p.size)
		if t < 0 || p.bad || p.noMerge || p.gone.Load() {
			continue
		}
		var d Digest
		if p.dict != nil {
			d = p.dict.digest
		}
		c := class{t, d}
		by[c] = append(by[c], p)
	}
	var best []*pack
	var bestClass class
	for c, ps := range by {
		if len(ps) < compactFanIn {
			continue
		}
		if best == nil || c.tier < bestClass.tier || c.tier == bestClass.tier && cmpDigest(c.dict, bestClass.dict) < 0 {
			best, bestClass = ps, c
		}
	}
	slices.SortFunc(best, func(a, b *pack) int { return cmp.Compare(a.name, b.name) })
	if len(best) > compactMax {
		best = best[:compactMax]
	}
	return best
}

// mergePacks merges sel into one pack and returns how many packs it
// merged. Packs it cannot merge (removed meanwhile, unreadable, holding a
// key another pack records too) are marked and left alone.
func (s *Store) mergePacks(sel []*pack) (int, error) {
	type src struct {
		p    *pack
		ix   *packIndex
		data []byte
	}
	var srcs []src
	for _, p := range sel {
		data, ix, err := s.readWholePack(p)
		if err != nil {
			s.mu.Lock()
			p.noMerge = true
			s.mu.Unlock()
			continue
		}
		s.mu.RLock()
		shared := false
		for _, r := range ix.recs {
			if len(s.recsOf(r.key)) != 1 {
				shared = true
				break
			}
		}
		s.mu.RUnlock()
		if shared {
			s.mu.Lock()
			p.noMerge = true
			s.mu.Unlock()
			continue
		}
		srcs = append(srcs, src{p, ix, data})
	}
	if len(srcs) < 2 {
		for _, sc := range srcs {
			s.mu.Lock()
			sc.p.noMerge = true // nothing to merge it with now
			s.mu.Unlock()
		}
		return 0, nil
	}
	seen := map[Digest]bool{}
	var items []item
	var recs []recEntry
	for _, sc := range srcs {
		real := map[Digest]Digest{} // local id -> digest of its content
		for _, o := range sc.ix.objs {
			if seen[o.digest] {
				continue
			}
			raw, err := s.objectIn(sc.p, sc.data, o)
			if err != nil {
				// Left for verify to report; nothing is removed.
				s.mu.Lock()
				sc.p.noMerge = true
				s.mu.Unlock()
				return 0, nil
			}
			seen[o.digest] = true
			d := o.digest
			if o.local {
				// A local id stays in memory: the merged pack names the
				// object by its content.
				d = Digest(sha256.Sum256(raw))
				real[o.digest] = d
				if seen[d] {
					continue
				}
				seen[d] = true
			}
			// A format-1 object keeps its frame when the merged pack is
			// of format 1 too.
			it := item{d: d, raw: raw}
			if !o.v2 {
				it.frame, it.fdict = sc.data[o.off:o.off+o.clen], sc.p.dict
			}
			items = append(items, it)
		}
		for _, r := range sc.ix.recs {
			if d, ok := real[r.resp]; ok {
				r.resp = d
			}
			recs = append(recs, r)
		}
	}
	name, ix, _, err := s.writePack(srcs[0].p.dict, items, recs)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(s.packPath(name))
	if err != nil {
		return 0, err
	}
	// The new pack replaces the old ones in memory before they go, so
	// that this process's reads move to it at once.
	s.mu.Lock()
	var runs indexRuns
	if _, exists := s.packs[name]; !exists {
		np := &pack{name: name, path: s.packPath(name), size: st.Size()}
		np.trusted.Store(s.knownGood(name))
		if err := s.addIndex(np, ix, nil, nil, &runs); err != nil {
			s.mu.Unlock()
			return 0, err
		}
		s.packs[name] = np
	}
	for _, sc := range srcs {
		if sc.p.name != name {
			s.dropPack(sc.p)
		}
	}
	s.addRuns(&runs)
	s.mu.Unlock()
	if mergedHook != nil {
		mergedHook()
	}
	dirs := map[string]bool{}
	for _, sc := range srcs {
		if sc.p.name == name {
			continue // the merged pack is this very file
		}
		if err := os.Remove(sc.p.path); err != nil && !isNotExist(err) {
			return len(srcs), err
		}
		dirs[filepath.Dir(sc.p.path)] = true
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		if err := regular.SyncDir(d); err != nil {
			return len(srcs), err
		}
	}
	return len(srcs), nil
}

// dropPack removes pack p from memory; s.mu is held. Its open file
// stays open until Close, for reads already under way.
func (s *Store) dropPack(p *pack) {
	p.gone.Store(true)
	s.dropped[p.name] = true
	if s.packs[p.name] == p {
		delete(s.packs, p.name)
	}
	if p.f != nil {
		s.retired = append(s.retired, p.f)
		p.f = nil
	}
	s.dropMem(p)
}

// objectIn decodes object o of pack p, whose whole file is data, and
// checks it against its digest.
func (s *Store) objectIn(p *pack, data []byte, o objEntry) ([]byte, error) {
	var raw []byte
	var err error
	if o.v2 {
		raw, err = s.readLoc(nil, objLoc{p, o.where}, o.digest, true)
	} else {
		raw, err = s.decoder(p).DecodeAll(data[o.off:o.off+o.clen], nil)
	}
	if err != nil {
		return nil, err
	}
	// A local object has no digest to match; its block's SHA-256 was
	// checked by readLoc.
	if int64(len(raw)) != o.rawLen || !o.local && Digest(sha256.Sum256(raw)) != o.digest {
		return nil, ErrCorrupt
	}
	return raw, nil
}

// readWholePack reads a small pack and its index, checking the file
// against its name.
func (s *Store) readWholePack(p *pack) ([]byte, *packIndex, error) {
	f, st, err := regular.Open(p.path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st.Size() >= smallPack {
		return nil, nil, fmt.Errorf("pack %s grew", p.name)
	}
	data := make([]byte, st.Size())
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	if sum := sha256.Sum256(data); Digest(sum).String() != p.name {
		return nil, nil, fmt.Errorf("pack %s: content does not match its name", p.name)
	}
	ix, err := s.readPackIndex(bytes.NewReader(data), int64(len(data)), p.name, nil)
	if err != nil {
		return nil, nil, err
	}
	return data, ix, nil
}

// forgetGone drops from memory the packs whose files another process has
// removed (its compaction or gc), then lists the packs again, so that
// their content is found where it moved. (Records of a key in a removed
// pack may have shadowed others of the same key: lookups resolve the
// records that remain.)
func (s *Store) forgetGone() error {
	s.mu.Lock()
	var gone []*pack
	for _, p := range s.packs {
		if _, err := os.Lstat(p.path); isNotExist(err) {
			gone = append(gone, p)
		}
	}
	for _, p := range gone {
		p.gone.Store(true)
		delete(s.packs, p.name)
		if p.f != nil {
			s.retired = append(s.retired, p.f)
			p.f = nil
		}
		s.dropMem(p)
	}
	if len(gone) > 0 {
		s.recIx.compact(recName, s.liveRec)
		s.objIx.compact(objName, s.liveObj)
		s.releaseGone()
	}
	s.mu.Unlock()
	return s.refresh()
}
