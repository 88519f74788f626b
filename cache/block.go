package cache

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"math/bits"
	"slices"
	"sync"
)

// Blocks of format-2 packs are decoded once and kept, most recently used
// first, up to blockCacheBytes of buffers (what is counted is their
// capacity, which may be more than their block's length), so that a walk
// in key order (dump, verify) and an exchange's request, response and
// delta base decode each block once. What is kept is bounded whatever
// the store's size.
const blockCacheBytes = 32 << 20

// spareBlocks bounds how many buffers of evicted blocks are kept for the
// next decodes. A dump decodes every block of the store once, each into
// a new buffer before: the fresh pages (the kernel's clearing of them)
// and the collections were a third of its CPU (perf of cache dump,
// 20,000 random exchanges; BenchmarkDump's B/op).
const spareBlocks = 64

type blockKey struct {
	p   *pack
	off int64
}

type blockCache struct {
	mu    sync.Mutex
	lru   list.List // of *cachedBlock, most recent first
	byKey map[blockKey]*list.Element
	bytes int
	spare [][]byte // buffers of evicted blocks no reader holds
}

// A cachedBlock is a decoded block; its buffer is reused once it is
// evicted and no reader holds it (refs, under the cache's lock).
type cachedBlock struct {
	key     blockKey
	b       []byte
	hashed  bool // checked against the block's SHA-256
	refs    int
	evicted bool
}

// get returns the cached block k, held for the caller until it calls
// release, and whether it was checked against its SHA-256.
func (c *blockCache) get(k blockKey) (*cachedBlock, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	cb := e.Value.(*cachedBlock)
	cb.refs++
	return cb, cb.hashed
}

// release lets cb's buffer be reused once it is evicted.
func (c *blockCache) release(cb *cachedBlock) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cb.refs--
	if cb.refs == 0 && cb.evicted {
		c.recycle(cb.b)
	}
}

// buffer returns an empty buffer of capacity at least n: the smallest
// spare one that is large enough, else a new one of bufferSize(n). A
// dump of 20,000 random exchanges (request blocks of 256-284 KiB,
// response blocks of 2-60 KiB) allocated 141 MB where the first spare
// large enough was taken and new buffers were of n bytes exactly (a
// response block took the buffer a request block needed, and a spare of
// 265 KiB could not serve a block of 284 KiB), 107 MB this way
// (BenchmarkDump's B/op, which counts opening the store too).
func (c *blockCache) buffer(n int64) []byte {
	c.mu.Lock()
	best := -1
	for i, b := range c.spare {
		if k := int64(cap(b)); k >= n && (best < 0 || k < int64(cap(c.spare[best]))) {
			best = i
		}
	}
	if best >= 0 {
		b := c.spare[best]
		c.spare = slices.Delete(c.spare, best, best+1)
		c.mu.Unlock()
		return b[:0]
	}
	c.mu.Unlock()
	return make([]byte, 0, bufferSize(n))
}

// bufferSize rounds n up to a multiple of an eighth of the power of two
// below it (12.5 % more at most), at least 4 KiB, so that the buffers of
// blocks of about the same size can serve each other.
func bufferSize(n int64) int64 {
	if n <= 4096 {
		return 4096
	}
	g := int64(1) << (bits.Len64(uint64(n-1)) - 4)
	return (n + g - 1) &^ (g - 1)
}

// recycle keeps b for a later decode, unless it is larger than a block
// the cache keeps; c.mu is held.
func (c *blockCache) recycle(b []byte) {
	if cap(b) > 0 && cap(b) <= blockCacheBytes/4 && len(c.spare) < spareBlocks {
		c.spare = append(c.spare, b)
	}
}

// put caches b as block k and returns it held for the caller, as get
// does. A block already cached (decoded meanwhile by another reader) is
// returned instead, and b recycled.
func (c *blockCache) put(k blockKey, b []byte, hashed bool) *cachedBlock {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[blockKey]*list.Element{}
	}
	if e, ok := c.byKey[k]; ok {
		cb := e.Value.(*cachedBlock)
		cb.hashed = cb.hashed || hashed
		cb.refs++
		c.recycle(b)
		return cb
	}
	cb := &cachedBlock{key: k, b: b, hashed: hashed, refs: 1}
	if len(b) > blockCacheBytes/4 {
		cb.evicted = true // too large to keep: its reader's alone
		return cb
	}
	c.byKey[k] = c.lru.PushFront(cb)
	c.bytes += cap(b)
	for c.bytes > blockCacheBytes {
		e := c.lru.Back()
		old := e.Value.(*cachedBlock)
		c.lru.Remove(e)
		delete(c.byKey, old.key)
		c.bytes -= cap(old.b)
		old.evicted = true
		if old.refs == 0 {
			c.recycle(old.b)
		}
	}
	return cb
}

// block returns the decoded block of p at w, held until the caller
// releases it (its bytes are shared: not to be changed); with hash set,
// checked against the block's SHA-256 from the index.
func (s *Store) block(p *pack, w where, hash bool) (*cachedBlock, error) {
	k := blockKey{p, w.off}
	if cb, hashed := s.blocks.get(k); cb != nil {
		if hashed || !hash {
			return cb, nil
		}
		s.blocks.release(cb)
	}
	if w.blockRaw > s.opt.MaxObjectBytes+2*reqBlockTarget {
		return nil, fmt.Errorf("block at %d: %d bytes exceed the limit of %d: %w", w.off, w.blockRaw, s.opt.MaxObjectBytes+2*reqBlockTarget, ErrCorrupt)
	}
	fp := frames.Get().(*[]byte)
	defer frames.Put(fp)
	frame := slices.Grow((*fp)[:0], int(w.clen))[:w.clen]
	*fp = frame
	if err := s.preadPack(p, frame, w.off); err != nil {
		return nil, err
	}
	// The room made ahead is bounded by the frame's real size, not by
	// the length the index claims.
	buf := s.blocks.buffer(min(w.blockRaw, maxRatio*w.clen+4096))
	b, err := s.decoder(p).DecodeAll(frame, buf)
	if err == nil && int64(len(b)) != w.blockRaw {
		err = fmt.Errorf("%d bytes, the index says %d", len(b), w.blockRaw)
	}
	if err == nil && hash && w.blockSum != nil && Digest(sha256.Sum256(b)) != *w.blockSum {
		err = fmt.Errorf("content does not match its SHA-256")
	}
	if err != nil {
		s.blocks.mu.Lock()
		s.blocks.recycle(b[:0])
		s.blocks.mu.Unlock()
		return nil, fmt.Errorf("block at %d: %v: %w", w.off, err, ErrCorrupt)
	}
	return s.blocks.put(k, b, hash), nil
}

// readEntry appends the object at w of a format-2 pack to dst: its entry,
// or its delta applied to its base. With hash set, the blocks read are
// checked against their SHA-256.
func (s *Store) readEntry(dst []byte, p *pack, w where, hash bool) ([]byte, error) {
	cb, err := s.block(p, w, hash)
	if err != nil {
		return nil, err
	}
	defer s.blocks.release(cb)
	ent := cb.b[w.at : w.at+w.slen]
	if w.base == nil {
		return append(dst, ent...), nil
	}
	bb, err := s.block(p, *w.base, hash)
	if err != nil {
		return nil, err
	}
	defer s.blocks.release(bb)
	base := bb.b[w.base.at : w.base.at+w.base.slen]
	out, err := applyDelta(slices.Grow(dst, int(min(w.rawLen, 1<<20))), base, ent, w.rawLen)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return out, nil
}
