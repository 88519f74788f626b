package cache

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/finrepro/finrepro/cache/reqkey"
	"golang.org/x/sync/errgroup"
)

// Keys returns every stored key, sorted.
func (s *Store) Keys() ([]Key, error) {
	if err := s.refresh(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []Key
	for _, r := range s.recIx.sorted(recName, s.liveRec) {
		if n := len(keys); n == 0 || keys[n-1] != r.key {
			keys = append(keys, r.key)
		}
	}
	return keys, nil
}

// eachWindow is how many exchanges Each decodes at once; with the two
// windows queued ahead it bounds Each's memory whatever the store's size.
const eachWindow = 256

// Each calls fn with every exchange, sorted by key. An exchange whose data
// is corrupt is skipped and recorded in Problems; Each then returns an
// error wrapping ErrCorrupt after visiting the rest. An error from fn stops
// the walk and is returned as is. Exchanges are decoded in parallel a few
// windows ahead of fn, so memory stays bounded whatever the store's size.
func (s *Store) Each(fn func(Key, *Exchange) error) error {
	return s.each(true, func(k Key, x *Exchange, _ []byte) error { return fn(k, x) })
}

// each is Each that also passes the meta as stored (JSON); with
// decodeMeta false, x.Meta is left empty.
func (s *Store) each(decodeMeta bool, fn func(Key, *Exchange, []byte) error) error {
	keys, err := s.Keys()
	if err != nil {
		return err
	}
	type window struct {
		keys  []Key
		xs    []*Exchange
		metas [][]byte
		errs  []error
	}
	windows := make(chan *window, 2)
	stop := make(chan struct{})
	go func() {
		defer close(windows)
		for start := 0; start < len(keys); start += eachWindow {
			w := &window{keys: keys[start:min(start+eachWindow, len(keys))]}
			w.xs = make([]*Exchange, len(w.keys))
			w.metas = make([][]byte, len(w.keys))
			w.errs = make([]error, len(w.keys))
			// One goroutine per processor, each on a run of
			// neighbouring keys: a goroutine per key spent 10 % of a
			// dump's CPU growing its stack (perf of cache dump, 20,000
			// judge exchanges).
			var g errgroup.Group
			workers := runtime.GOMAXPROCS(0)
			per := (len(w.keys) + workers - 1) / workers
			for lo := 0; lo < len(w.keys); lo += per {
				g.Go(func() error {
					for i := lo; i < min(lo+per, len(w.keys)); i++ {
						k := w.keys[i]
						s.mu.RLock()
						r, ok := s.lookup(k)
						s.mu.RUnlock()
						if !ok { // dropped by a concurrent gc's reload
							w.errs[i] = fmt.Errorf("cache: each %s: %w", k.Str(), ErrNotFound)
							continue
						}
						w.xs[i], w.metas[i], w.errs[i] = s.getMeta(k, r, decodeMeta)
					}
					return nil
				})
			}
			g.Wait() // errors are kept per exchange
			select {
			case windows <- w:
			case <-stop:
				return
			}
		}
	}()
	defer func() {
		close(stop)
		for range windows { // let the decoder finish
		}
	}()
	bad := 0
	for w := range windows {
		for i, k := range w.keys {
			if w.errs[i] != nil {
				if !errors.Is(w.errs[i], ErrCorrupt) {
					return w.errs[i]
				}
				bad++
				s.mu.Lock()
				s.problems = append(s.problems, Problem{Key: k, Msg: w.errs[i].Error()})
				s.mu.Unlock()
				continue
			}
			if err := fn(k, w.xs[i], w.metas[i]); err != nil {
				return err
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("cache: each: %d exchanges unreadable: %w", bad, ErrCorrupt)
	}
	return nil
}

// Stats describe a store.
type Stats struct {
	Exchanges int   `json:"exchanges"`
	Objects   int   `json:"objects"` // distinct objects (requests and responses)
	Packs     int   `json:"packs"`
	Dicts     int   `json:"dictionaries"`
	RawBytes  int64 `json:"raw_bytes"` // requests, responses and meta as JSON, before deduplication and compression
	// StoredBytes is the size of all pack and dictionary files.
	StoredBytes int64   `json:"stored_bytes"`
	Ratio       float64 `json:"ratio"` // RawBytes / StoredBytes
	CostUSD     float64 `json:"cost_usd"`
	// Conflicts counts keys recorded with more than one response.
	Conflicts  int     `json:"conflicts"`
	ByProvider []Count `json:"by_provider"`
	ByModel    []Count `json:"by_model"`
	BySource   []Count `json:"by_source"`
}

// A Count is the share of one provider, model or source.
type Count struct {
	Name      string  `json:"name"`
	Exchanges int     `json:"exchanges"`
	CostUSD   float64 `json:"cost_usd"`
}

// Stats counts the store's exchanges, objects and bytes without reading
// any object.
func (s *Store) Stats() (*Stats, error) {
	if err := s.refresh(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	st := &Stats{Objects: s.countObjects(), Dicts: len(s.dicts)}
	var dups []Key
	by := [3]map[string]*Count{{}, {}, {}}
	s.winners(func(k Key, r rec) {
		st.Exchanges++
		var m Meta
		meta, _ := s.recMeta(r)
		_ = decodeMeta(meta, &m) // a bad meta counts as empty here; verify reports it
		if j := r.p.mem.recs[r.i].req; j >= 0 {
			st.RawBytes += r.p.mem.where(int(j)).rawLen - int64(len(reqkey.Schema)+1)
		} else if l := s.locs(Digest(k)); len(l) > 0 {
			st.RawBytes += l[0].rawLen - int64(len(reqkey.Schema)+1)
		}
		if l, ok := s.respLoc(r); ok {
			st.RawBytes += l.rawLen
		} else if l := s.locs(s.respID(r)); len(l) > 0 {
			st.RawBytes += l[0].rawLen
		}
		st.RawBytes += int64(len(meta))
		st.CostUSD += m.CostUSD
		if r.dup > 0 {
			dups = append(dups, k)
		}
		for i, name := range []string{m.Provider, m.Model, m.Source} {
			c := by[i][name]
			if c == nil {
				c = &Count{Name: name}
				by[i][name] = c
			}
			c.Exchanges++
			c.CostUSD += m.CostUSD
		}
	})
	for _, p := range s.packs {
		st.Packs++
		st.StoredBytes += p.size
	}
	for _, d := range s.dicts {
		st.StoredBytes += int64(d.size)
	}
	s.mu.RUnlock()
	for _, k := range dups {
		st.Conflicts += s.conflicting(k)
	}
	if st.StoredBytes > 0 {
		st.Ratio = float64(st.RawBytes) / float64(st.StoredBytes)
	}
	for i, dst := range []*[]Count{&st.ByProvider, &st.ByModel, &st.BySource} {
		for _, c := range by[i] {
			*dst = append(*dst, *c)
		}
		slices.SortFunc(*dst, func(a, b Count) int { return cmpString(a.Name, b.Name) })
	}
	return st, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// conflicting reports (0 or 1) whether key k has records with different
// responses; it reads the indexes of the packs again only for such keys,
// which are rare, and the responses that are local objects.
func (s *Store) conflicting(k Key) int {
	s.mu.RLock()
	var packs []*pack
	for _, p := range s.packs {
		if p.recs > 0 {
			packs = append(packs, p)
		}
	}
	s.mu.RUnlock()
	seen := map[Digest]bool{}
	for _, p := range packs {
		ix, _, err := s.loadPack(p.path)
		if err != nil {
			continue
		}
		for i, r := range ix.recs {
			if r.key != k {
				continue
			}
			d := r.resp
			if ix.v2 != nil && ix.v2.respAt[i] != 0 {
				// A local object: compared by its content.
				raw, err := s.readAt(nil, objLoc{p, ix.objs[ix.v2.respAt[i]-1].where}, r.resp)
				if err != nil {
					continue // unreadable: verify reports it
				}
				d = sha256.Sum256(raw)
			}
			seen[d] = true
		}
	}
	if len(seen) > 1 {
		return 1
	}
	return 0
}

// respDigest returns the digest of the content of r's response: its
// digest, or, for a local object (a response a format-2 pack stores
// without its digest), the hash of its content.
func (s *Store) respDigest(k Key, r rec) (Digest, error) {
	if l, ok := s.respLoc(r); !ok || !l.local {
		return s.respID(r), nil
	}
	raw, err := s.readResponse(nil, k, r)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(raw), nil
}

// Lookup returns the stored exchanges whose request has the provider and,
// when model is not empty, the model (meta.model), sorted by key. It is
// the source of "cache explain"'s nearest requests.
func (s *Store) Lookup(provider, model string) ([]Key, error) {
	keys, err := s.Keys()
	if err != nil {
		return nil, err
	}
	var out []Key
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range keys {
		var m Meta
		r, ok := s.lookup(k)
		if !ok || s.decodeRecMeta(r, &m) != nil {
			continue
		}
		if m.Provider == provider && (model == "" || m.Model == model) {
			out = append(out, k)
		}
	}
	return out, nil
}

// relPath is the slash path of a store file, for problems.
func relPath(parts ...string) string { return filepath.ToSlash(filepath.Join(parts...)) }

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// Dump writes every exchange as one JSONL line {"request": ...,
// "response": ..., "meta": ...}, sorted by key: the form Load reads. The
// request is in canonical form (without the schema line) and a response
// that spans lines is compacted.
func (s *Store) Dump(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	err := s.each(false, func(k Key, x *Exchange, meta []byte) error {
		// Written piece by piece into bw: no copy of the line first.
		resp := x.Response
		if bytes.IndexByte(resp, '\n') >= 0 || bytes.IndexByte(resp, '\r') >= 0 {
			var c bytes.Buffer
			if err := json.Compact(&c, resp); err != nil {
				return fmt.Errorf("cache: dump %s: %w", k.Str(), err)
			}
			resp = c.Bytes()
		}
		bw.WriteString(`{"request":`)
		bw.Write(x.Request)
		bw.WriteString(`,"response":`)
		bw.Write(resp)
		bw.WriteString(`,"meta":`)
		bw.Write(meta)
		_, err := bw.WriteString("}\n") // bufio keeps the first error
		return err
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
