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

// TestBlockCacheBufferFit: a decode gets the smallest spare buffer large
// enough, not the first; a new buffer is rounded up to a multiple of an
// eighth of the power of two below its size (at least 4 KiB), so that
// the buffer of a 265 KiB block serves one of 284 KiB.
func TestBlockCacheBufferFit(t *testing.T) {
	const kib = 1 << 10
	var c blockCache
	large, small, medium := make([]byte, 0, 300*kib), make([]byte, 0, 40*kib), make([]byte, 0, 64*kib)
	c.mu.Lock()
	for _, b := range [][]byte{large, small, medium} {
		c.recycle(b)
	}
	c.mu.Unlock()
	if b := c.buffer(30 * kib); !sameArray(b, small) {
		t.Fatalf("30 KiB: got a buffer of %d bytes, want the 40 KiB spare", cap(b))
	}
	if b := c.buffer(50 * kib); !sameArray(b, medium) {
		t.Fatalf("50 KiB: got a buffer of %d bytes, want the 64 KiB spare", cap(b))
	}
	if b := c.buffer(280 * kib); !sameArray(b, large) {
		t.Fatalf("280 KiB: got a buffer of %d bytes, want the 300 KiB spare", cap(b))
	}
	// New buffers, n in (2^k, 2^(k+1)] rounded up to a multiple of 2^(k-3):
	for _, tc := range []struct{ n, want int64 }{
		{1, 4096},
		{4096, 4096},
		{4097, 4608},           // (2^12, 2^13]: multiples of 512
		{265 * kib, 288 * kib}, // (2^18, 2^19]: multiples of 32 KiB
		{284 * kib, 288 * kib}, // the same
		{288*kib + 1, 320 * kib},
		{500 * kib, 512 * kib},
	} {
		if b := c.buffer(tc.n); int64(cap(b)) != tc.want || len(b) != 0 {
			t.Errorf("new buffer for %d bytes: capacity %d, length %d; want %d, 0", tc.n, cap(b), len(b), tc.want)
		}
	}
	b := c.buffer(265 * kib)
	c.mu.Lock()
	c.recycle(b)
	c.mu.Unlock()
	if got := c.buffer(284 * kib); !sameArray(got, b) {
		t.Fatal("the buffer of a 265 KiB block did not serve one of 284 KiB")
	}
}

// TestBlockCacheCountsCapacity: the cache's bound counts its buffers'
// capacity: 33 blocks of one byte, each in a buffer of 1 MiB, are over the
// 32 MiB, and the oldest goes.
func TestBlockCacheCountsCapacity(t *testing.T) {
	var c blockCache
	p := &pack{}
	const mb = 1 << 20
	for i := 0; i <= blockCacheBytes/mb; i++ {
		c.release(c.put(blockKey{p, int64(i)}, make([]byte, 1, mb), false))
	}
	if cb, _ := c.get(blockKey{p, 0}); cb != nil {
		t.Fatal("block 0 still cached with 33 MiB of buffers")
	}
	if cb, _ := c.get(blockKey{p, 1}); cb == nil {
		t.Fatal("block 1 evicted with 32 MiB of buffers")
	}
}
