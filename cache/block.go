package cache

import (
	"container/list"
	"crypto/sha256"
	"fmt"
	"slices"
	"sync"
)

// Blocks of format-2 packs are decoded once and kept, most recently used
// first, up to blockCacheBytes, so that a walk in key order (dump, verify)
// and an exchange's request, response and delta base decode each block
// once. What is kept is bounded whatever the store's size.
const blockCacheBytes = 32 << 20

type blockKey struct {
	p   *pack
	off int64
}

type blockCache struct {
	mu    sync.Mutex
	lru   list.List // of *cachedBlock, most recent first
	byKey map[blockKey]*list.Element
	bytes int
}

type cachedBlock struct {
	key    blockKey
	b      []byte
	hashed bool // checked against the block's SHA-256
}

// get returns the cached block k and whether it was checked against
// its SHA-256.
func (c *blockCache) get(k blockKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	cb := e.Value.(*cachedBlock)
	return cb.b, cb.hashed
}

func (c *blockCache) put(k blockKey, b []byte, hashed bool) {
	if len(b) > blockCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[blockKey]*list.Element{}
	}
	if e, ok := c.byKey[k]; ok {
		cb := e.Value.(*cachedBlock)
		cb.hashed = cb.hashed || hashed
		return
	}
	c.byKey[k] = c.lru.PushFront(&cachedBlock{k, b, hashed})
	c.bytes += len(b)
	for c.bytes > blockCacheBytes {
		e := c.lru.Back()
		cb := e.Value.(*cachedBlock)
		c.lru.Remove(e)
		delete(c.byKey, cb.key)
		c.bytes -= len(cb.b)
	}
}

// block returns the decoded block of p at w (shared: not to be changed);
// with hash set, checked against the block's SHA-256 from the index.
func (s *Store) block(p *pack, w where, hash bool) ([]byte, error) {
	k := blockKey{p, w.off}
	if b, hashed := s.blocks.get(k); b != nil && (hashed || !hash) {
		return b, nil
	}
	if w.blockRaw > s.opt.MaxObjectBytes+2*reqBlockTarget {
		return nil, fmt.Errorf("block at %d: %d bytes exceed the limit of %d: %w", w.off, w.blockRaw, s.opt.MaxObjectBytes+2*reqBlockTarget, ErrCorrupt)
	}
	frame := make([]byte, w.clen)
	if err := s.preadPack(p, frame, w.off); err != nil {
		return nil, err
	}
	// The room made ahead is bounded by the frame's real size, not by
	// the length the index claims.
	b, err := s.decoder(p).DecodeAll(frame, make([]byte, 0, min(w.blockRaw, maxRatio*w.clen+4096)))
	if err != nil {
		return nil, fmt.Errorf("block at %d: %v: %w", w.off, err, ErrCorrupt)
	}
	if int64(len(b)) != w.blockRaw {
		return nil, fmt.Errorf("block at %d: %d bytes, the index says %d: %w", w.off, len(b), w.blockRaw, ErrCorrupt)
	}
	if hash && w.blockSum != nil && Digest(sha256.Sum256(b)) != *w.blockSum {
		return nil, fmt.Errorf("block at %d: content does not match its SHA-256: %w", w.off, ErrCorrupt)
	}
	s.blocks.put(k, b, hash)
	return b, nil
}

// readEntry appends the object at w of a format-2 pack to dst: its entry,
// or its delta applied to its base. With hash set, the blocks read are
// checked against their SHA-256.
func (s *Store) readEntry(dst []byte, p *pack, w where, hash bool) ([]byte, error) {
	b, err := s.block(p, w, hash)
	if err != nil {
		return nil, err
	}
	ent := b[w.at : w.at+w.slen]
	if w.base == nil {
		return append(dst, ent...), nil
	}
	bb, err := s.block(p, *w.base, hash)
	if err != nil {
		return nil, err
	}
	base := bb[w.base.at : w.base.at+w.base.slen]
	out, err := applyDelta(slices.Grow(dst, int(min(w.rawLen, 1<<20))), base, ent, w.rawLen)
	if err != nil {
		return nil, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return out, nil
}
