package cache

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"
)

// A large store keeps the arrays of its in-memory index (index.go) in a
// temporary file of its own rather than in the heap, so that a process
// reading a store of a million exchanges holds about what it holds for
// one of fifty thousand: each array is written there once, as its bytes
// are in memory, and an entry is read back with one pread when a lookup
// needs it (the kernel's page cache, not the process, keeps the file's
// pages). What stays in memory is constant per pack or per block, and
// the sorted arrays' tables of where each key prefix starts (about a
// byte per exchange). The file is private to the process, removed as
// soon as it is opened, and derived from the packs: a store that cannot
// create it keeps its index in memory. Measured on reproduce of 8x the
// full-scale demo (README, the row on each factor): peak RSS 349-363 MB
// against 448-491 with the arrays in the heap, about 4 preads per
// exchange read; the sorted arrays' entries hold a record's objects and
// an object's digest, and a record's objects are read from its own pack
// first, because without that the run made 1.76 million preads and took
// 1.14x the user time.

// spillIndexBytes is the size of the in-memory index past which a store
// moves its arrays to its index file: about 55,000 exchanges. Below it
// the arrays stay in the heap, where a lookup reads them without a
// system call. (A variable for the tests, which set it to 0 to move
// every store's arrays.)
var spillIndexBytes int64 = 8 << 20

// indexFile is the file a store's index arrays are moved to.
type indexFile struct {
	f    *os.File
	path string // still to remove at close, where it could not be removed open
	end  atomic.Int64
}

// newIndexFile creates an index file in the system's temporary folder.
func newIndexFile() (*indexFile, error) {
	f, err := os.CreateTemp("", "finrepro-index-*")
	if err != nil {
		return nil, err
	}
	x := &indexFile{f: f}
	if os.Remove(f.Name()) != nil {
		x.path = f.Name()
	}
	return x, nil
}

// write appends b and returns its offset.
func (x *indexFile) write(b []byte) (int64, error) {
	off := x.reserve(int64(len(b)))
	return off, x.writeAt(b, off)
}

// reserve returns the offset of n bytes at the end of the file, for
// writeAt: no other write goes there.
func (x *indexFile) reserve(n int64) int64 { return x.end.Add(n) - n }

// writeAt writes b at off, in room reserve returned.
func (x *indexFile) writeAt(b []byte, off int64) error {
	if _, err := x.f.WriteAt(b, off); err != nil {
		return fmt.Errorf("cache: index file: %w", err)
	}
	return nil
}

// read fills b from off. The file is this process's own copy of what
// the packs' indexes say, so a failing read is a failing disk under the
// process, not a damaged store: it stops the process with the error
// rather than answer from a wrong place.
func (x *indexFile) read(b []byte, off int64) {
	if _, err := x.f.ReadAt(b, off); err != nil {
		panic(fmt.Sprintf("cache: reading the store's index file %s: %v", x.f.Name(), err))
	}
}

// free lets go of the disk blocks of n bytes at off, no longer read.
func (x *indexFile) free(off, n int64) { punchHole(x.f, off, n) }

func (x *indexFile) close() {
	x.f.Close()
	if x.path != "" {
		os.Remove(x.path)
	}
}

// column is an array of n entries of T, a type without pointers, in
// memory (mem) or in an index file at off. The file holds the entries'
// bytes as memory holds them: only this process reads it.
type column[T any] struct {
	mem []T
	f   *indexFile
	off int64
	n   int
}

// inMem wraps a slice.
func inMem[T any](s []T) column[T] { return column[T]{mem: s} }

func (c *column[T]) len() int {
	if c.f != nil {
		return c.n
	}
	return len(c.mem)
}

func sizeOf[T any]() int {
	var t T
	return int(unsafe.Sizeof(t))
}

func bytesOf[T any](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*sizeOf[T]())
}

// at returns entry i.
func (c *column[T]) at(i int) T {
	if c.f == nil {
		return c.mem[i]
	}
	if uint(i) >= uint(c.n) {
		panic(fmt.Sprintf("cache: index entry %d of %d", i, c.n))
	}
	var t [1]T
	c.f.read(bytesOf(t[:]), c.off+int64(i)*int64(sizeOf[T]()))
	return t[0]
}

// span returns entries lo to hi: a part of mem, or read into buf's
// array when it has room (not to be changed).
func (c *column[T]) span(lo, hi int, buf []T) []T {
	if c.f == nil {
		return c.mem[lo:hi]
	}
	if lo < 0 || hi > c.n || lo > hi {
		panic(fmt.Sprintf("cache: index entries %d to %d of %d", lo, hi, c.n))
	}
	out := buf[:0]
	if cap(out) < hi-lo {
		out = make([]T, hi-lo)
	}
	out = out[:hi-lo]
	c.f.read(bytesOf(out), c.off+int64(lo)*int64(sizeOf[T]()))
	return out
}

// all returns every entry: mem itself, or a copy read from the file.
func (c *column[T]) all() []T { return c.span(0, c.len(), nil) }

// bytes is the size of the entries in memory.
func (c *column[T]) bytes() int64 { return int64(cap(c.mem) * sizeOf[T]()) }

// free lets go of the entries' disk blocks in the file, when they are
// there and no read of them can be under way.
func (c *column[T]) free() {
	if c.f != nil {
		c.f.free(c.off, int64(c.n*sizeOf[T]()))
	}
}

// moveTo writes the entries to x and lets go of mem; on a write error
// (the temporary folder full) they stay in memory.
func (c *column[T]) moveTo(x *indexFile) {
	if c.f != nil || len(c.mem) == 0 {
		return
	}
	off, err := x.write(bytesOf(c.mem))
	if err != nil {
		return
	}
	*c = column[T]{f: x, off: off, n: len(c.mem)}
}
