package cache

import (
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/internal/regular"
)

// Verify re-reads the whole store and calls report with every problem: a
// pack or dictionary whose bytes do not match its name, an unreadable
// index, an object that fails to decode or to match its digest, an
// exchange whose request or response is missing or corrupt, a bad meta,
// keys recorded with different responses and stray files. It returns the
// number of problems. It streams the packs: memory grows with the number
// of exchanges (a few hundred bytes each for the index), not with their
// content. A pack, dictionary or FORMAT that is not a regular file is
// reported without being opened. Verify returns ctx's error soon after
// ctx is done.
func (s *Store) Verify(ctx context.Context, report func(Problem)) (int, error) {
	s.maint.Lock() // no compaction removes a pack under way
	defer s.maint.Unlock()
	n := 0
	rep := func(p Problem) { n++; report(p) }
	if _, err := s.readIndexes(); err != nil {
		return n, err
	}
	// Dictionaries.
	dicts, err := os.ReadDir(filepath.Join(s.dir, dictsDir))
	if err != nil && !os.IsNotExist(err) {
		return n, fmt.Errorf("cache: verify: %w", err)
	}
	for _, e := range dicts {
		path := relPath(dictsDir, e.Name())
		name, ok := strings.CutSuffix(e.Name(), ".dict")
		if !ok || !isHexName(name) || !e.Type().IsRegular() {
			rep(Problem{Path: path, Msg: "stray file"})
			continue
		}
		sum, _, err := regular.Hash(ctx, filepath.Join(s.dir, dictsDir, e.Name()))
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if err != nil {
			rep(Problem{Path: path, Msg: err.Error()})
		} else if sum != name {
			rep(Problem{Path: path, Msg: "content does not match its name (sha256 " + sum + ")"})
		}
	}
	// Stray entries among the packs.
	fans, err := os.ReadDir(filepath.Join(s.dir, packsDir))
	if err != nil && !os.IsNotExist(err) {
		return n, fmt.Errorf("cache: verify: %w", err)
	}
	for _, fan := range fans {
		if !fan.IsDir() {
			rep(Problem{Path: relPath(packsDir, fan.Name()), Msg: "stray file"})
			continue
		}
		ents, err := os.ReadDir(filepath.Join(s.dir, packsDir, fan.Name()))
		if err != nil {
			return n, fmt.Errorf("cache: verify: %w", err)
		}
		for _, e := range ents {
			name, ok := strings.CutSuffix(e.Name(), ".pack")
			if !ok || !isHexName(name) || name[:2] != fan.Name() || !e.Type().IsRegular() {
				rep(Problem{Path: relPath(packsDir, fan.Name(), e.Name()), Msg: "stray file"})
			}
		}
	}
	names, err := s.listPacks()
	if err != nil {
		return n, fmt.Errorf("cache: verify: %w", err)
	}
	// Who needs which object, to name keys in problems.
	s.mu.RLock()
	needers := map[Digest][]Key{}
	s.winners(func(k Key, r rec) {
		d := s.respID(r)
		needers[d] = append(needers[d], k)
	})
	s.mu.RUnlock()
	for _, ks := range needers {
		slices.SortFunc(ks, func(a, b Key) int { return cmpDigest(Digest(a), Digest(b)) })
	}
	present := map[Digest]bool{}
	real := map[Digest]Digest{}   // local id -> digest of its content, to compare responses across packs
	matched := map[string]int64{} // packs whose content matches their name
	seenResp := map[Key]Digest{}
	conflicts := map[Key]bool{}
	for _, name := range names {
		path := s.packPath(name)
		rel := s.rel(path)
		sum, size, err := regular.Hash(ctx, path)
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		if err != nil {
			rep(Problem{Path: rel, Msg: err.Error()})
			continue
		}
		if sum != name {
			rep(Problem{Path: rel, Msg: "content does not match its name (sha256 " + sum + ")"})
		} else {
			matched[name] = size
		}
		f, _, err := regular.Open(path)
		if err != nil {
			rep(Problem{Path: rel, Msg: err.Error()})
			continue
		}
		ix, err := s.readPackIndex(f, size, name, nil)
		if err != nil {
			f.Close()
			rep(Problem{Path: rel, Msg: "unreadable index, its exchanges are lost: " + err.Error()})
			continue
		}
		p := &pack{name: name, path: path, size: size}
		if ix.dict != (Digest{}) {
			s.mu.Lock()
			p.dict, err = s.loadDict(ix.dict)
			s.mu.Unlock()
			if err != nil {
				f.Close()
				rep(Problem{Path: rel, Msg: err.Error()})
				continue
			}
		}
		for _, o := range ix.objs {
			if ctx.Err() != nil {
				f.Close()
				return n, ctx.Err()
			}
			present[o.digest] = true
			raw, err := s.readAt(nil, objLoc{p, o.where}, o.digest)
			if err == nil && o.local {
				real[o.digest] = sha256.Sum256(raw)
			}
			if err != nil {
				keys := needers[o.digest]
				if len(keys) == 0 {
					keys = []Key{Key(o.digest)}
				}
				for _, k := range keys {
					rep(Problem{Key: k, Path: rel, Msg: err.Error()})
				}
			}
		}
		for _, r := range ix.recs {
			var m Meta
			if err := decodeMeta(r.meta, &m); err != nil {
				rep(Problem{Key: r.key, Path: rel, Msg: "bad meta: " + err.Error()})
			}
			resp := r.resp
			if d, ok := real[resp]; ok {
				resp = d
			}
			if old, ok := seenResp[r.key]; ok && old != resp && !conflicts[r.key] {
				conflicts[r.key] = true
				rep(Problem{Key: r.key, Path: rel, Msg: fmt.Sprintf("recorded with different responses %s and %s", old.Str(), resp.Str())})
			}
			seenResp[r.key] = resp
		}
		f.Close()
	}
	keys, err := s.Keys()
	if err != nil {
		return n, err
	}
	s.mu.RLock()
	for _, k := range keys {
		r, ok := s.lookup(k)
		if !ok {
			continue // dropped by a concurrent refresh
		}
		if !present[Digest(k)] {
			rep(Problem{Key: k, Path: s.rel(r.p.path), Msg: "request object missing"})
		}
		if d := s.respID(r); !present[d] {
			rep(Problem{Key: k, Path: s.rel(r.p.path), Msg: "response object " + d.Str() + " missing"})
		}
	}
	s.mu.RUnlock()
	if n == 0 {
		// Every object has just been checked: later reads of these packs
		// need not hash them again while their files keep their size.
		s.noteGood(slices.Sorted(maps.Keys(matched)), true)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.verified = matched
		for _, p := range s.packs {
			if sz, ok := matched[p.name]; ok && sz == p.size {
				p.trusted.Store(true)
			}
		}
	}
	return n, nil
}
