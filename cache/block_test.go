package cache

import (
	"bytes"
	"testing"
)

// sameArray reports whether a and b start at the same byte of one array.
func sameArray(a, b []byte) bool { return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0] }

// TestBlockCacheHeldBuffer: a block evicted while a reader holds it keeps
// its bytes until the reader releases it; only then is its buffer handed
// out again.
func TestBlockCacheHeldBuffer(t *testing.T) {
	var c blockCache
	p := &pack{}
	const mb = 1 << 20
	held := c.put(blockKey{p, 0}, bytes.Repeat([]byte{7}, mb), false)
	// 32 more blocks of 1 MiB: 33 MiB is over the 32 MiB bound, so the
	// oldest, block 0, goes; the others stay.
	for i := 1; i <= blockCacheBytes/mb; i++ {
		c.release(c.put(blockKey{p, int64(i)}, make([]byte, mb), false))
	}
	if cb, _ := c.get(blockKey{p, 0}); cb != nil {
		t.Fatal("block 0 still cached after 33 MiB")
	}
	if cb, _ := c.get(blockKey{p, 1}); cb == nil {
		t.Fatal("block 1 evicted with 32 MiB cached")
	} else {
		c.release(cb)
	}
	for range spareBlocks + 1 {
		if b := c.buffer(mb); sameArray(b, held.b) {
			t.Fatal("a held block's buffer was handed out")
		}
	}
	if !bytes.Equal(held.b, bytes.Repeat([]byte{7}, mb)) {
		t.Fatal("a held block's bytes changed")
	}
	c.release(held)
	if b := c.buffer(mb); !sameArray(b, held.b) || len(b) != 0 {
		t.Fatal("the released block's buffer was not reused")
	}
}

// TestBlockCachePutTwice: a block decoded by two readers at once is cached
// once; the second decode's buffer goes back for reuse, and both readers
// get the first.
func TestBlockCachePutTwice(t *testing.T) {
	var c blockCache
	p := &pack{}
	first, second := []byte("first"), []byte("other")
	a := c.put(blockKey{p, 8}, first, false)
	b := c.put(blockKey{p, 8}, second, true)
	if a != b || !sameArray(b.b, first) {
		t.Fatal("the second put did not return the cached block")
	}
	if _, hashed := c.get(blockKey{p, 8}); !hashed {
		t.Fatal("the block is not marked hashed after a hashed put")
	}
	if got := c.buffer(5); !sameArray(got, second) {
		t.Fatal("the second decode's buffer was not reused")
	}
}

// TestBlockCacheLargeBlock: a block over a quarter of the cache is not
// cached, and its buffer is not kept for reuse either.
func TestBlockCacheLargeBlock(t *testing.T) {
	var c blockCache
	p := &pack{}
	big := make([]byte, blockCacheBytes/4+1)
	cb := c.put(blockKey{p, 8}, big, false)
	if got, _ := c.get(blockKey{p, 8}); got != nil {
		t.Fatal("a large block was cached")
	}
	c.release(cb)
	if len(c.spare) != 0 {
		t.Fatal("a large block's buffer was kept")
	}
}
