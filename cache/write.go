package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
	"golang.org/x/sync/errgroup"
)

// Sources of an exchange (Meta.Source).
const (
	SourceAPI    = "api"    // recorded from a provider
	SourceBatch  = "batch"  // recorded through a provider's batch API
	SourceImport = "import" // loaded from a file
	SourceSim    = "sim"    // simulated
)

// packTarget is the uncompressed size at which a batch writes its pack:
// large enough that one fsync serves many exchanges, small enough that a
// crash loses little work. Tests lower it to make many packs.
var packTarget = 32 << 20

// A Batch adds many exchanges with one pack file and one fsync per 32 MB,
// for bulk loads. Exchanges are durable after Flush. A Batch is not safe
// for concurrent use; several batches (in one or many processes) are.
type Batch struct {
	s     *Store
	items []item
	raw   int
	recs  []recEntry
	keys  map[Key]Digest
	objs  map[Digest]bool

	// Objects are compressed in the background, chunk by chunk, while
	// the caller parses more; frames[i] is items[i]'s frame.
	dict    *dict // chosen at the first dispatch; nil: none
	chosen  bool
	sent    int        // items dispatched for compression
	sentRaw int        // their bytes
	chunks  [][][]byte // compressed frames, chunk by chunk
	g       *errgroup.Group

	// grouped batches (a group commit's) neither compress nor flush
	// before Flush: Put has compressed ahead, and Flush is the loop's.
	grouped bool
	// loading batches (Load's) do not flush when full: Load writes them
	// in the background and goes on with a new batch, whose pending
	// and pendingObjs are the keys and objects of the one being written.
	loading     bool
	pending     map[Key]Digest
	pendingObjs map[Digest]bool

	// written names the packs the batch has written, for gc, which
	// must not remove a pack it has just written again byte for byte.
	written map[string]bool
}

type item struct {
	d   Digest
	raw []byte
	// frame, when not nil, is raw already compressed with fdict.
	frame []byte
	fdict *dict
}

// NewBatch returns an empty batch.
func (s *Store) NewBatch() *Batch {
	return &Batch{s: s, keys: map[Key]Digest{}, objs: map[Digest]bool{}}
}

// Add queues x and returns its key and whether it is new. It flushes when
// the batch is large. Errors for x itself (a bad request or meta, a
// conflict) leave the batch usable.
func (b *Batch) Add(x *Exchange) (Key, bool, error) {
	if !json.Valid(x.Response) {
		return Key{}, false, fmt.Errorf("cache: put: response: not valid JSON")
	}
	if !utf8.Valid(x.Response) {
		return Key{}, false, fmt.Errorf("cache: put: response: not valid UTF-8")
	}
	y := *x
	y.Response = bytes.Clone(x.Response) // the batch keeps it until Flush
	return b.add(&y)
}

func (b *Batch) add(x *Exchange) (Key, bool, error) {
	c, err := reqkey.Canonical(x.Request)
	if err != nil {
		return Key{}, false, err
	}
	return b.addCanon(x, c)
}

// addCanon is add with the request's canonical form computed.
func (b *Batch) addCanon(x *Exchange, c []byte) (Key, bool, error) {
	k := Key(sha256.Sum256(c))
	meta, err := metaJSON(x, c)
	if err != nil {
		return k, false, fmt.Errorf("cache: put %s: %w", k.Str(), err)
	}
	return b.addPrepared(&prepared{x: x, canon: c, key: k, resp: Digest(sha256.Sum256(x.Response)), meta: meta})
}

// ErrTooLarge is a request or response larger than Options.MaxObjectBytes.
var ErrTooLarge = errors.New("exchange larger than the object size limit")

// prepared is an exchange with its key, digests and encoded meta, and
// possibly its objects compressed ahead (by Load's workers).
type prepared struct {
	x     *Exchange
	canon []byte
	key   Key
	resp  Digest
	meta  []byte
	err   error
	// reqFrame and respFrame, when not nil, are compressed with dict.
	dict                *dict
	reqFrame, respFrame []byte
}

// prepare computes what addPrepared needs of x outside the batch, and
// compresses the objects the store lacks when it has a dictionary.
func (s *Store) prepare(x *Exchange, c []byte) *prepared {
	p := &prepared{x: x, canon: c, key: Key(sha256.Sum256(c)), resp: Digest(sha256.Sum256(x.Response))}
	if p.meta, p.err = metaJSON(x, c); p.err != nil {
		return p
	}
	s.mu.RLock()
	d := s.writeDict
	_, stored := s.lookup(p.key)
	haveReq := s.hasObj(Digest(p.key))
	haveResp := s.hasObj(p.resp)
	s.mu.RUnlock()
	if d == nil || stored || s.packFormat != 1 {
		return p
	}
	p.dict = d
	if !haveReq {
		p.reqFrame = d.enc.EncodeAll(c, nil)
	}
	if !haveResp {
		p.respFrame = d.enc.EncodeAll(x.Response, nil)
	}
	return p
}

// addPrepared adds a prepared exchange.
func (b *Batch) addPrepared(p *prepared) (Key, bool, error) {
	x, c, k, resp, meta := p.x, p.canon, p.key, p.resp, p.meta
	if p.err != nil {
		return k, false, fmt.Errorf("cache: put %s: %w", k.Str(), p.err)
	}
	if int64(len(c)) > b.s.opt.MaxObjectBytes || int64(len(x.Response)) > b.s.opt.MaxObjectBytes {
		return k, false, fmt.Errorf("cache: put %s: %w (%d bytes)", k.Str(), ErrTooLarge, b.s.opt.MaxObjectBytes)
	}
	s := b.s
	s.mu.RLock()
	r, stored := s.lookup(k)
	inStore := stored
	var storedResp Digest
	if stored {
		storedResp = s.respID(r)
	}
	haveReq := s.hasObj(Digest(k))
	haveResp := s.hasObj(resp)
	s.mu.RUnlock()
	if !stored {
		storedResp, stored = b.keys[k]
	}
	if !stored {
		storedResp, stored = b.pending[k]
	}
	haveReq = haveReq || b.pendingObjs[Digest(k)]
	haveResp = haveResp || b.pendingObjs[resp]
	if stored {
		if storedResp != resp && s.opt.Verify {
			// A local id (a response stored without its digest) is
			// compared by its content.
			d := storedResp
			if inStore {
				var err error
				if d, err = s.respDigest(k, r); err != nil {
					return k, false, fmt.Errorf("cache: put %s: %w", k.Str(), err)
				}
			}
			if d != resp {
				return k, false, &ConflictError{Key: k, Stored: d, Posted: resp}
			}
		}
		return k, false, nil
	}
	b.keys[k] = resp
	if !haveReq && !b.objs[Digest(k)] {
		b.objs[Digest(k)] = true
		b.items = append(b.items, item{Digest(k), c, p.reqFrame, p.dict})
		b.raw += len(c)
	}
	if !haveResp && !b.objs[resp] {
		b.objs[resp] = true
		b.items = append(b.items, item{resp, x.Response, p.respFrame, p.dict})
		b.raw += len(x.Response)
	}
	b.recs = append(b.recs, recEntry{key: k, resp: resp, meta: meta})
	if b.grouped {
		return k, true, nil
	}
	if err := b.dispatch(false); err != nil {
		return k, false, err
	}
	if b.raw >= packTarget && !b.loading {
		if err := b.Flush(); err != nil {
			return k, false, err
		}
	}
	return k, true, nil
}

// A MetaError is a meta that cannot be stored; Field names the value
// ("meta.source").
type MetaError struct {
	Field string
	Msg   string
}

func (e *MetaError) Error() string { return e.Field + ": " + e.Msg }

// metaJSON fills in what the meta leaves out from the request and encodes
// it.
func metaJSON(x *Exchange, canon []byte) ([]byte, error) {
	m := x.Meta
	switch m.Source {
	case SourceAPI, SourceBatch, SourceImport, SourceSim:
	default:
		return nil, &MetaError{"meta.source", fmt.Sprintf("got %q, want api, batch, import or sim", m.Source)}
	}
	if m.Provider == "" || m.Model == "" {
		js, _ := reqkey.JSON(canon)
		var req struct {
			Provider string `json:"provider"`
			Body     struct {
				Model any `json:"model"`
			} `json:"body"`
		}
		// The canonical encoding is valid JSON: this cannot fail.
		_ = json.Unmarshal(js, &req)
		if m.Provider == "" {
			m.Provider = req.Provider
		}
		if s, ok := req.Body.Model.(string); ok && m.Model == "" {
			m.Model = s
		}
	}
	b, err := json.Marshal(&m)
	if err != nil {
		return nil, &MetaError{"meta", err.Error()}
	}
	if len(b) > MaxMetaBytes {
		return nil, &MetaError{"meta", fmt.Sprintf("%d bytes as JSON exceed the limit of %d", len(b), MaxMetaBytes)}
	}
	return b, nil
}

// Len returns the number of exchanges queued.
func (b *Batch) Len() int { return len(b.recs) }

// Flush writes the queued exchanges as one pack and makes them durable.
// Small packs are then merged in the background (Compact) once there are
// many.
func (b *Batch) Flush() error {
	err := b.flushAny()
	if err == nil {
		b.s.compactSoon()
	}
	return err
}

func (b *Batch) flushAny() error {
	if len(b.recs) == 0 && len(b.items) == 0 {
		return nil
	}
	s := b.s
	if err := b.dispatch(true); err != nil {
		return err
	}
	b.g.Wait() // the workers return no errors
	if frames := slices.Concat(b.chunks...); len(frames) == len(b.items) {
		for i := range b.items {
			b.items[i].frame, b.items[i].fdict = frames[i], b.dict
		}
	}
	name, ix, size, err := s.writePack(b.dict, b.items, b.recs)
	if err != nil {
		return fmt.Errorf("cache: flush: %w", err)
	}
	if b.written == nil {
		b.written = map[string]bool{}
	}
	b.written[name] = true
	p := &pack{name: name, path: s.packPath(name), size: size}
	if st, err := os.Stat(p.path); err == nil {
		p.size = st.Size()
	}
	s.mu.Lock()
	if _, dup := s.packs[name]; !dup {
		var runs indexRuns
		if err := s.addIndex(p, ix, nil, nil, &runs); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("cache: flush: %w", err)
		}
		s.addRuns(&runs)
		s.packs[name] = p
	}
	s.mu.Unlock()
	b.items, b.recs, b.raw = nil, nil, 0
	b.chunks, b.sent, b.sentRaw, b.g, b.chosen = nil, 0, 0, nil, false
	clear(b.keys)
	clear(b.objs)
	return nil
}

// compressChunk is how many bytes of objects one background task
// compresses: enough to make the hand-off cheap.
const compressChunk = 1 << 20

// dispatch starts compressing the queued objects in chunks; with all, also
// a last partial chunk. The first dispatch picks the dictionary, training
// it when the store has none and enough objects are queued.
func (b *Batch) dispatch(all bool) error {
	s := b.s
	if !b.chosen {
		if !all && len(b.items) < dictSamples {
			return nil
		}
		s.mu.RLock()
		b.dict = s.writeDict
		s.mu.RUnlock()
		if b.dict == nil && len(b.items) >= minDictSamples {
			var err error
			if b.dict, err = s.trainDict(b.items); err != nil {
				return fmt.Errorf("cache: flush: %w", err)
			}
		}
		b.chosen = true
	}
	if b.g == nil {
		// No limit: the producer must never wait for a worker (each wait
		// costs a wake-up on a busy machine); the queued objects are in
		// memory anyway, bounded by packTarget.
		b.g = new(errgroup.Group)
	}
	if s.packFormat != 1 {
		return nil // format 2 compresses blocks, when the pack is written
	}
	enc := plainEncoder()
	if b.dict != nil {
		enc = b.dict.enc
	}
	for b.sent < len(b.items) && (all || b.raw-b.sentRaw >= compressChunk) {
		lo, hi, n := b.sent, b.sent, 0
		for hi < len(b.items) && n < compressChunk {
			n += len(b.items[hi].raw)
			hi++
		}
		b.sentRaw += n
		out := make([][]byte, hi-lo)
		b.chunks = append(b.chunks, out)
		in := b.items[lo:hi]
		d := b.dict
		b.g.Go(func() error {
			// EncodeAll into a fresh slice would allocate the size of the
			// object for each frame, and the batch would keep that room
			// until the pack is written: encode into one buffer instead
			// and keep a copy of the frame's own size.
			var buf []byte
			for i, it := range in {
				if it.frame != nil && it.fdict == d {
					out[i] = it.frame
					continue
				}
				buf = enc.EncodeAll(it.raw, buf[:0])
				out[i] = bytes.Clone(buf)
			}
			return nil
		})
		b.sent = hi
	}
	return nil
}

// dictSamples is how many objects the first batch of a store without a
// dictionary gathers before it trains one.
const dictSamples = 256

// minDictSamples is the number of objects a first batch needs before the
// store trains its dictionary from them.
const minDictSamples = 64

// trainDict builds a dictionary from a batch's objects, stores it durably
// and makes it the store's dictionary for new packs.
func (s *Store) trainDict(items []item) (*dict, error) {
	if s.opt.ReadOnly {
		return nil, errors.New("store opened read-only")
	}
	content := buildDict(items, s.packFormat == 1)
	d := Digest(sha256.Sum256(content))
	path := filepath.Join(s.dir, dictsDir, d.String()+".dict")
	if _, err := os.Stat(path); err != nil {
		if err := s.writeFileAtomic(path, content); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	x, err := s.loadDict(d)
	if err != nil {
		return nil, err
	}
	if s.writeDict == nil {
		s.writeDict = x
	}
	return x, nil
}

// CheckWritable reports whether the store can take writes, by writing,
// syncing and removing a probe file in each folder a Put writes to:
// recorders call it before their first paid call, so that a read-only or
// unwritable store costs nothing.
func (s *Store) CheckWritable() error {
	if s.opt.ReadOnly {
		return errors.New("cache: store opened read-only")
	}
	for _, d := range []string{tmpDir, packsDir} {
		f, err := os.CreateTemp(filepath.Join(s.dir, d), ".probe-*")
		if err != nil {
			return fmt.Errorf("cache: %s cannot take writes: %w", s.dir, err)
		}
		_, err = f.Write([]byte("probe\n"))
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if rerr := os.Remove(f.Name()); err == nil {
			err = rerr
		}
		if err != nil {
			return fmt.Errorf("cache: %s cannot take writes: %w", s.dir, err)
		}
	}
	return nil
}
