package cache

import (
	"container/list"
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
	key blockKey
	b   []byte
}

func (c *blockCache) get(k blockKey) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[k]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedBlock).b
}

func (c *blockCache) put(k blockKey, b []byte) {
	if len(b) > blockCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byKey == nil {
		c.byKey = map[blockKey]*list.Element{}
	}
	if _, ok := c.byKey[k]; ok {
		return
	}
	c.byKey[k] = c.lru.PushFront(&cachedBlock{k, b})
	c.bytes += len(b)
	for c.bytes > blockCacheBytes {
		e := c.lru.Back()
		cb := e.Value.(*cachedBlock)
		c.lru.Remove(e)
		delete(c.byKey, cb.key)
		c.bytes -= len(cb.b)
	}
}

// block returns the decoded block of p at w (shared: not to be changed).
func (s *Store) block(p *pack, w where) ([]byte, error) {
	k := blockKey{p, w.off}
	if b := s.blocks.get(k); b != nil {
		return b, nil
	}
	if w.blockRaw > s.opt.MaxObjectBytes+2*blockTarget {
		return nil, fmt.Errorf("block at %d: %d bytes exceed the limit of %d: %w", w.off, w.blockRaw, s.opt.MaxObjectBytes+2*blockTarget, ErrCorrupt)
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
	s.blocks.put(k, b)
	return b, nil
}

// readEntry appends the object at w of a format-2 pack to dst: its entry,
// or its delta applied to its base.
func (s *Store) readEntry(dst []byte, p *pack, w where) ([]byte, error) {
	b, err := s.block(p, w)
	if err != nil {
		return nil, err
	}
	ent := b[w.at : w.at+w.slen]
	if w.base == nil {
		return append(dst, ent...), nil
	}
	bb, err := s.block(p, *w.base)
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
