package cache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math/bits"
	"slices"
)

// The in-memory index of a store holds no pointer per exchange and no
// map entry per exchange: each pack keeps fixed-size arrays of its
// objects' locations (packMem), its records' metas compressed in groups
// (metaArena), and the store keeps two sorted arrays over all packs: the
// records by key (recRef: the key, the record and its objects inline)
// and the objects that carry a digest of their own by digest (objRef,
// the digest inline). In a large store the arrays are in an index file
// rather than the heap (indexfile.go). A request object is found through its
// record (its digest is the key) and a response through the records that
// name it, so most objects need no entry of their own. Each sorted array
// is a large base, with a table of where each key prefix starts, and a
// small sorted tail of what was added since (packs this process writes
// or finds later); the tail is merged into the base when it grows past
// an eighth of it. Entries of packs merged away or dropped are skipped by
// every lookup and removed at the next merge.

// recRef is one record of a pack in the store's sorted record array.
type recRef struct {
	key  Key
	pack uint32  // pack id (Store.byID)
	rec  uint32  // the record's position in its pack's records (key order)
	ri   recInfo // its objects, so that a lookup reads nothing more to find them
}

// objRef is one object with a digest of its own in the store's sorted
// object array: object obj of its pack, named d (inline, so that a
// lookup compares digests without reading the pack's arrays, which may
// be in the index file).
type objRef struct {
	d    Digest
	pack uint32
	obj  uint32
}

// packMem is the in-memory index of one pack, pointer-free but for its
// slices.
type packMem struct {
	v2 bool
	// objects: objs1 (format 1) or objs2 (format 2), in pack order.
	objs1  column[obj1]
	objs2  column[obj2]
	end1   int64         // format 1: where the last object ends (the index frame)
	wide1  column[int64] // format 1: the objects' offsets, in a pack of 4 GiB or more
	blocks []blockLoc
	// named are the objects that carry a digest of their own, sorted
	// by digest.
	named column[namedObj]
	// recs are the pack's records, sorted by key, until the pack is
	// in the store's sorted record array, which holds them (settle);
	// nrecs counts them.
	recs  []recInfo
	nrecs int
	// extRecs are the records whose response object is in another
	// pack, in order, and extDigests their responses' digests (the
	// records stay in memory, four bytes each, so that finding one
	// reads the file once).
	extRecs    []uint32
	extDigests column[Digest]
	metas      metaArena
}

// obj1 locates an object of a format-1 pack: its frame starts at off
// (or wide1's entry) and ends where the next one starts.
type obj1 struct {
	off  uint32
	raw  uint32 // uncompressed length (saturated: see satLen)
	name int32  // index in named, or noName
}

// obj2 locates an object of a format-2 pack: slen bytes at at in block
// blk, a delta against object base when base >= 0.
type obj2 struct {
	blk, at, slen, raw uint32
	base               int32
	name               int32 // index in named, noName or localName
}

// name values of objects without a digest of their own.
const (
	noName    = -1 // a request, named by its record's key
	localName = -2 // a format-2 response named by its place
)

// blockLoc is one block of a format-2 pack.
type blockLoc struct {
	off, clen, raw int64
	sum            Digest
}

type namedObj struct {
	d   Digest
	obj uint32
}

// recInfo is one record of a pack: the positions of its request and
// response objects in the pack, -1 when they are in another pack.
type recInfo struct {
	req, resp int32
}

// satLen stores a length in 32 bits: a length of 4 GiB or more, which
// no read accepts (MaxObjectBytes is checked against it), becomes the
// largest uint32.
func satLen(n int64) uint32 { return uint32(min(n, 1<<32-1)) }

// buildPackMem makes the in-memory index of a parsed pack index,
// compressing its metas with compress (nil: kept as they are), and returns it with the keys of
// its records in its order (key order).
func buildPackMem(ix *packIndex, compress func([]byte) []byte) (*packMem, []Key, error) {
	m := &packMem{v2: ix.v2 != nil}
	// Records in key order; perm[i] is the parsed position of record i.
	perm := make([]int32, len(ix.recs))
	for i := range perm {
		perm[i] = int32(i)
	}
	if !slices.IsSortedFunc(perm, func(a, b int32) int { return bytes.Compare(ix.recs[a].key[:], ix.recs[b].key[:]) }) {
		slices.SortFunc(perm, func(a, b int32) int { return bytes.Compare(ix.recs[a].key[:], ix.recs[b].key[:]) })
	}
	recs := make([]recInfo, len(perm))
	var extRecs []uint32
	var extDigests []Digest
	nobj := len(ix.objs)
	names := make([]int32, nobj) // noName unless set below
	for i := range names {
		names[i] = noName
	}
	var nNamed int
	if m.v2 {
		v := ix.v2
		m.blocks = make([]blockLoc, len(v.blocks))
		off := int64(len(packMagic2))
		for i, b := range v.blocks {
			m.blocks[i] = blockLoc{off: off, clen: b.clen, raw: b.rawLen, sum: b.sum}
			off += b.clen
		}
		for i, o := range ix.objs {
			switch {
			case !v.named[i]:
				names[i] = 0 // a digest of its own
				nNamed++
			case o.local:
				names[i] = localName
			}
		}
		for i, p := range perm {
			recs[i] = recInfo{int32(v.reqAt[p]) - 1, int32(v.respAt[p]) - 1}
			if v.respAt[p] == 0 {
				extRecs, extDigests = append(extRecs, uint32(i)), append(extDigests, ix.recs[p].resp)
			}
		}
	} else {
		m.end1 = int64(len(packMagic))
		if n := len(ix.objs); n > 0 {
			m.end1 = ix.objs[n-1].off + ix.objs[n-1].clen
		}
		at := make(map[Digest]int32, nobj)
		for i, o := range ix.objs {
			at[o.digest] = int32(i)
		}
		isResp := make([]bool, nobj)
		for i, p := range perm {
			r := &ix.recs[p]
			ri := recInfo{-1, -1}
			if j, ok := at[Digest(r.key)]; ok {
				ri.req = j
			}
			if j, ok := at[r.resp]; ok {
				ri.resp = j
				isResp[j] = true
			} else {
				extRecs, extDigests = append(extRecs, uint32(i)), append(extDigests, r.resp)
			}
			recs[i] = ri
		}
		// A request object is named by its record's key; any other
		// object (a response, or an object no record of the pack
		// names) carries its digest.
		reqOf := make([]bool, nobj)
		for _, ri := range recs {
			if ri.req >= 0 {
				reqOf[ri.req] = true
			}
		}
		for i := range names {
			if !reqOf[i] || isResp[i] {
				names[i] = 0
				nNamed++
			}
		}
	}
	m.recs, m.nrecs, m.extRecs, m.extDigests = recs, len(recs), slices.Clip(extRecs), inMem(slices.Clip(extDigests))
	named := make([]namedObj, 0, nNamed)
	for i, n := range names {
		if n == 0 {
			named = append(named, namedObj{ix.objs[i].digest, uint32(i)})
		}
	}
	slices.SortFunc(named, func(a, b namedObj) int { return bytes.Compare(a.d[:], b.d[:]) })
	m.named = inMem(named)
	for j, nm := range named {
		names[nm.obj] = int32(j)
	}
	if m.v2 {
		objs2 := make([]obj2, nobj)
		var pos map[*where]int32 // of the objects, for deltas' bases
		blk := 0
		for i, o := range ix.objs {
			for blk < len(m.blocks) && m.blocks[blk].off != o.off {
				blk++
			}
			if o.at+o.slen > 1<<32-1 {
				return nil, nil, badIndex("object %d lies 4 GiB or more into its block", i)
			}
			e := obj2{blk: uint32(blk), at: uint32(o.at), slen: uint32(o.slen), raw: satLen(o.rawLen), base: -1, name: names[i]}
			if o.base != nil {
				if pos == nil {
					pos = make(map[*where]int32, nobj)
					for j := range ix.objs {
						pos[&ix.objs[j].where] = int32(j)
					}
				}
				e.base = pos[o.base]
			}
			objs2[i] = e
		}
		m.objs2 = inMem(objs2)
	} else {
		objs1 := make([]obj1, nobj)
		var wide1 []int64
		if m.end1 > 1<<32-1 {
			wide1 = make([]int64, nobj)
		}
		for i, o := range ix.objs {
			objs1[i] = obj1{off: uint32(o.off), raw: satLen(o.rawLen), name: names[i]}
			if wide1 != nil {
				wide1[i] = o.off
			}
		}
		m.objs1, m.wide1 = inMem(objs1), inMem(wide1)
	}
	metas := make([][]byte, len(perm))
	keys := make([]Key, len(perm))
	for i, p := range perm {
		metas[i], keys[i] = ix.recs[p].meta, ix.recs[p].key
	}
	m.metas = packMetas(metas, compress)
	return m, keys, nil
}

// where returns the location of object i as the readers take it.
func (m *packMem) where(i int) where {
	w, _ := m.whereName(i)
	return w
}

// whereName returns the location of object i and its name (an index in
// named, noName or localName).
func (m *packMem) whereName(i int) (where, int32) {
	if !m.v2 {
		// the object, and the next one's offset: one read of the file
		hi := min(i+2, m.objs1.len())
		var buf [2]obj1
		o := m.objs1.span(i, hi, buf[:])
		off, end := int64(o[0].off), m.end1
		if hi == i+2 {
			end = int64(o[1].off)
		}
		if m.wide1.len() > 0 {
			var wbuf [2]int64
			w := m.wide1.span(i, hi, wbuf[:])
			off = w[0]
			if hi == i+2 {
				end = w[1]
			}
		}
		return where{off: off, clen: end - off, rawLen: rawLen(o[0].raw)}, o[0].name
	}
	o := m.objs2.at(i)
	b := &m.blocks[o.blk]
	w := where{off: b.off, clen: b.clen, rawLen: rawLen(o.raw), v2: true, blockRaw: b.raw, at: int64(o.at), slen: int64(o.slen), blockSum: &b.sum, local: o.name == localName}
	if o.base >= 0 {
		bw := m.where(int(o.base))
		w.base = &bw
	}
	return w, o.name
}

// rawLen undoes satLen: the largest uint32 stands for more than any
// read accepts.
func rawLen(n uint32) int64 {
	if n == 1<<32-1 {
		return 1 << 62
	}
	return int64(n)
}

// objDigest returns the digest of object i of the pack named name, when
// it has one of its own, or its local id; ok is false for a request
// (named by its record's key).
func (m *packMem) objDigest(name string, i int) (Digest, bool) {
	var n int32
	if m.v2 {
		n = m.objs2.at(i).name
	} else {
		n = m.objs1.at(i).name
	}
	return m.digestOf(name, i, n)
}

// digestOf is objDigest of object i whose name is n.
func (m *packMem) digestOf(pack string, i int, n int32) (Digest, bool) {
	switch {
	case n >= 0:
		return m.named.at(int(n)).d, true
	case n == localName:
		return localID(pack, i), true
	}
	return Digest{}, false
}

// nobjs returns the number of objects of the pack.
func (m *packMem) nobjs() int {
	if m.v2 {
		return m.objs2.len()
	}
	return m.objs1.len()
}

// bytes is the size of the pack's arrays in memory.
func (m *packMem) bytes() int64 {
	return m.objs1.bytes() + m.objs2.bytes() + m.wide1.bytes() + m.named.bytes() + int64(cap(m.recs)*sizeOf[recInfo]()+4*cap(m.extRecs)) + m.extDigests.bytes() + m.metas.blob.bytes()
}

// moveTo moves the pack's arrays to the index file x, but for its blocks'
// (one entry per block) and its metas' groups' bounds (one per group).
// s.mu is held for writing, and no read of the pack is under way: it is
// called before the pack is in the index or while it is added.
func (m *packMem) moveTo(x *indexFile) {
	m.objs1.moveTo(x)
	m.objs2.moveTo(x)
	m.wide1.moveTo(x)
	m.named.moveTo(x)
	m.extDigests.moveTo(x)
	m.metas.blob.moveTo(x)
}

// locals counts the pack's local objects.
func (m *packMem) locals() int {
	n := 0
	for _, o := range m.objs2.all() {
		if o.name == localName {
			n++
		}
	}
	return n
}

// metaGroup is how many records' metas are compressed together at most,
// and metaGroupBytes how many bytes of metas a group takes before it is
// closed: 32 metas of the demo (about 6 KB) compress to about a tenth
// and decode in a few microseconds, and a decoded group, kept in a slot
// (metaSlots), is at most metaGroupBytes plus one meta.
const (
	metaGroup      = 32
	metaGroupBytes = 8 << 10
)

// maxMetaGroupBytes bounds a decoded group of metas.
const maxMetaGroupBytes = metaGroupBytes + metaGroup*binary.MaxVarintLen64 + MaxMetaBytes

// metaArena holds a pack's metas, in record order, in groups (of
// metaGroup metas or metaGroupBytes, whichever comes first): each group is the uvarint lengths of its metas, then the
// metas, compressed as one zstd frame (or kept as it is when that is not
// smaller).
type metaArena struct {
	blob  column[byte]
	ends  []uint32 // end of each group in blob; rawGroup set: not compressed
	first []uint32 // the first record of each group
}

const rawGroup = 1 << 31

// minCompressedGroup is the size under which a group is kept as it is.
const minCompressedGroup = 256

// packMetas groups metas, each group compressed with compress unless
// that is not smaller or compress is nil.
func packMetas(metas [][]byte, compress func([]byte) []byte) metaArena {
	var a metaArena
	var buf, out []byte
	if compress == nil {
		// The groups' exact size: grown by appends, out was copied again
		// and again (6 % of the CPU of a 1,000-request replay, pprof).
		n := 0
		for _, m := range metas {
			n += uvarintLen(uint64(len(m))) + len(m)
		}
		out = make([]byte, 0, n)
	}
	for lo := 0; lo < len(metas); {
		hi, size := lo, 0
		for hi < len(metas) && hi-lo < metaGroup && (hi == lo || size+len(metas[hi]) <= metaGroupBytes) {
			size += len(metas[hi])
			hi++
		}
		g := metas[lo:hi]
		a.first = append(a.first, uint32(lo))
		lo = hi
		buf = buf[:0]
		for _, m := range g {
			buf = binary.AppendUvarint(buf, uint64(len(m)))
		}
		for _, m := range g {
			buf = append(buf, m...)
		}
		// A group of one small meta (a pack of one Put) is not worth a
		// frame.
		c, flag := buf, uint32(rawGroup)
		if compress != nil && len(buf) >= minCompressedGroup {
			if z := compress(buf); len(z) < len(buf) {
				c, flag = z, 0
			}
		}
		out = append(out, c...)
		a.ends = append(a.ends, uint32(len(out))|flag)
	}
	if compress != nil {
		out = bytes.Clone(out) // exactly its size
	}
	a.blob = inMem(out)
	a.ends, a.first = slices.Clip(a.ends), slices.Clip(a.first)
	return a
}

// groupOf returns the group of record i of n, its first record and its
// number of metas.
func (a *metaArena) groupOf(i, n int) (g, first, count int) {
	g, found := slices.BinarySearch(a.first, uint32(i))
	if !found {
		g--
	}
	end := n
	if g+1 < len(a.first) {
		end = int(a.first[g+1])
	}
	return g, int(a.first[g]), end - int(a.first[g])
}

// group returns the stored bytes of group g (read from the index file
// into a new buffer when the blob is there) and whether they are
// compressed.
func (a *metaArena) group(g int) ([]byte, bool) {
	lo := uint32(0)
	if g > 0 {
		lo = a.ends[g-1] &^ rawGroup
	}
	e := a.ends[g]
	return a.blob.span(int(lo), int(e&^rawGroup), nil), e&rawGroup == 0
}

// metaIn returns meta n of a decoded group of count metas.
func metaIn(dec []byte, n, count int) ([]byte, error) {
	off, l := 0, 0
	b := dec
	for j := range count {
		v, w := binary.Uvarint(b)
		if w <= 0 || v > uint64(len(dec)) {
			return nil, fmt.Errorf("meta group damaged")
		}
		b = b[w:]
		if j < n {
			off += int(v)
		} else if j == n {
			l = int(v)
		}
	}
	if off+l > len(b) {
		return nil, fmt.Errorf("meta group damaged")
	}
	return b[off : off+l : off+l], nil
}

// sortedRefs is a sorted array of refs named by 32-byte names: a base
// with a prefix table, and a small sorted tail (see the top of this file).
type sortedRefs[R any] struct {
	base   column[R]
	tail   []R
	starts []uint32 // starts[p]: first base entry whose name has prefix p
	bits   uint
	dead   int        // entries of packs gone
	file   *indexFile // where compact moves the base, when set
}

// prefix returns the first bits bits of name.
func prefix(name *[32]byte, bits uint) uint32 {
	if bits == 0 {
		return 0
	}
	return binary.BigEndian.Uint32(name[:4]) >> (32 - bits)
}

// run returns the entries of xs (sorted by name) named n.
func run[R any](xs []R, n *[32]byte, name func(*R) [32]byte) []R {
	lo, hi := 0, len(xs)
	for hi-lo > 8 { // binary search down to a few entries, then scan
		mid := int(uint(lo+hi) >> 1)
		if m := name(&xs[mid]); bytes.Compare(m[:], n[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for lo < len(xs) {
		if m := name(&xs[lo]); bytes.Compare(m[:], n[:]) >= 0 {
			break
		}
		lo++
	}
	hi = lo
	for hi < len(xs) && name(&xs[hi]) == *n {
		hi++
	}
	return xs[lo:hi]
}

// spanRead is how many entries of a base in the index file a lookup
// reads at once: a prefix's entries (about four) in one pread.
const spanRead = 32

// find returns the entries named n in the base and in the tail; entries
// of a base in the index file are read into buf's array when it has
// room.
func (x *sortedRefs[R]) find(n *[32]byte, name func(*R) [32]byte, buf []R) (base, tail []R) {
	if x.base.len() > 0 {
		p := prefix(n, x.bits)
		lo, hi := int(x.starts[p]), int(x.starts[p+1])
		if x.base.f == nil {
			base = run(x.base.mem[lo:hi], n, name)
		} else {
			base = x.findInFile(lo, hi, n, name, buf)
		}
	}
	if len(x.tail) > 0 {
		tail = run(x.tail, n, name)
	}
	return base, tail
}

// findInFile returns the entries named n among base entries lo to end,
// in the index file.
func (x *sortedRefs[R]) findInFile(lo, end int, n *[32]byte, name func(*R) [32]byte, buf []R) []R {
	// Every entry before lo is named less than n, and the one at hi,
	// if any, at least n.
	hi := end
	for hi-lo > spanRead {
		mid := int(uint(lo+hi) >> 1)
		e := x.base.at(mid)
		if m := name(&e); bytes.Compare(m[:], n[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	e := min(end, hi+spanRead)
	sp := x.base.span(lo, e, buf)
	got := run(sp, n, name)
	if len(got) == 0 || e == end || name(&sp[len(sp)-1]) != *n {
		return got
	}
	// The run goes on past the span (several records of one key).
	out := slices.Clone(got)
	for e < end {
		next := min(end, e+spanRead)
		for _, r := range x.base.span(e, next, buf) {
			if name(&r) != *n {
				return out
			}
			out = append(out, r)
		}
		e = next
	}
	return out
}

// add adds runs, each sorted by name; entries for which live is false
// are dropped when the tail is merged into the base.
func (x *sortedRefs[R]) add(runs [][]R, name func(*R) [32]byte, live func(*R) bool) {
	runs = append(runs, x.tail)
	x.tail = mergeRuns(runs, name)
	if n := x.base.len(); len(x.tail) > max(1024, n/8) || x.dead > n/4 {
		x.compact(name, live)
	}
}

// compact merges the tail into the base, leaving out dead entries, and
// rebuilds the prefix table. With an index file the merge reads the
// base from it and writes the new base there a chunk at a time, so that
// it holds no more than the tail and a chunk in memory; on a write error
// (the temporary folder full) the new base stays in memory.
func (x *sortedRefs[R]) compact(name func(*R) [32]byte, live func(*R) bool) {
	n := x.base.len() + len(x.tail)
	// About four entries per prefix: a lookup compares a few keys
	// of one cache line or two, and the table costs a byte an entry.
	// (n counts the dead entries too: a table a little larger.)
	bits := uint(min(24, max(0, bits.Len(uint(n))-3)))
	starts := make([]uint32, 1<<bits+1)
	var base column[R]
	ok := false
	if x.file != nil {
		base, ok = x.mergeToFile(n, bits, starts, name, live)
	}
	if !ok {
		all := make([]R, 0, n)
		x.merge(bits, starts, name, live, func(r *R) { all = append(all, *r) })
		base = inMem(slices.Clip(all))
	}
	old := x.base
	x.base, x.starts, x.bits, x.tail, x.dead = base, starts, bits, nil, 0
	old.free() // its readers hold the store's lock, which the caller holds for writing
}

// mergeChunk is how many entries a merge reads from the index file, or
// writes to it, at once. (A variable for the tests.)
var mergeChunk = 4096

// mergeToFile is compact's merge into the index file: n entries at most.
func (x *sortedRefs[R]) mergeToFile(n int, bits uint, starts []uint32, name func(*R) [32]byte, live func(*R) bool) (column[R], bool) {
	size := int64(sizeOf[R]())
	off := x.file.reserve(int64(n) * size)
	out := make([]R, 0, mergeChunk)
	written := 0
	var err error
	flush := func() {
		if err == nil && len(out) > 0 {
			err = x.file.writeAt(bytesOf(out), off+int64(written)*size)
		}
		written += len(out)
		out = out[:0]
	}
	x.merge(bits, starts, name, live, func(r *R) {
		if out = append(out, *r); len(out) == mergeChunk {
			flush()
		}
	})
	flush()
	if err != nil {
		x.file.free(off, int64(n)*size)
		return column[R]{}, false
	}
	x.file.free(off+int64(written)*size, int64(n-written)*size) // the dead entries' room
	return column[R]{f: x.file, off: off, n: written}, true
}

// merge calls emit with the live entries of the base and the tail in
// name order (the base's first among equal names), and fills starts, the
// prefix table of bits bits of what it emits.
func (x *sortedRefs[R]) merge(bits uint, starts []uint32, name func(*R) [32]byte, live func(*R) bool, emit func(*R)) {
	j, p := 0, 0 // entries emitted; the first prefix whose start is not set
	put := func(r *R) {
		if !live(r) {
			return
		}
		nm := name(r)
		for q := int(prefix(&nm, bits)); p <= q; p++ {
			starts[p] = uint32(j)
		}
		emit(r)
		j++
	}
	x.each(name, put)
	for ; p < len(starts); p++ {
		starts[p] = uint32(j)
	}
}

// each calls fn with every entry of the base and the tail, dead ones
// too, in name order (the base's first among equal names), reading a
// base in the index file a chunk at a time. fn must not keep the entry.
func (x *sortedRefs[R]) each(name func(*R) [32]byte, fn func(*R)) {
	tail := x.tail
	var buf []R
	for lo, n := 0, x.base.len(); lo < n; lo += mergeChunk {
		chunk := x.base.span(lo, min(n, lo+mergeChunk), buf)
		if x.base.f != nil {
			buf = chunk // the next chunk is read into the same array
		}
		for i := range chunk {
			nb := name(&chunk[i])
			for len(tail) > 0 {
				if nt := name(&tail[0]); bytes.Compare(nt[:], nb[:]) >= 0 {
					break
				}
				fn(&tail[0])
				tail = tail[1:]
			}
			fn(&chunk[i])
		}
	}
	for i := range tail {
		fn(&tail[i])
	}
}

// mergeRuns merges sorted runs into one new sorted slice, two at a time.
func mergeRuns[R any](runs [][]R, name func(*R) [32]byte) []R {
	runs = slices.DeleteFunc(slices.Clone(runs), func(r []R) bool { return len(r) == 0 })
	if len(runs) == 0 {
		return nil
	}
	if len(runs) == 1 {
		return slices.Clone(runs[0])
	}
	for len(runs) > 1 {
		var next [][]R
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, runs[i])
				continue
			}
			next = append(next, merge2(runs[i], runs[i+1], name))
		}
		runs = next
	}
	return runs[0]
}

func merge2[R any](a, b []R, name func(*R) [32]byte) []R {
	if len(a) < len(b) {
		a, b = b, a
	}
	out := make([]R, 0, len(a)+len(b))
	if len(b) < len(a)/16 {
		// A few entries into many (a pack written into a large
		// tail): each finds its place by binary search, and the
		// entries between are copied in one piece.
		for i := range b {
			n := name(&b[i])
			k, _ := slices.BinarySearchFunc(a, &n, func(r R, n *[32]byte) int { m := name(&r); return bytes.Compare(m[:], n[:]) })
			out = append(out, a[:k]...)
			out = append(out, b[i])
			a = a[k:]
		}
		return append(out, a...)
	}
	for len(a) > 0 && len(b) > 0 {
		if nb, na := name(&b[0]), name(&a[0]); bytes.Compare(nb[:], na[:]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// The store's side of the index; s.mu is held (read or write) by every
// caller.

func recName(r *recRef) [32]byte { return r.key }

func objName(r *objRef) [32]byte { return r.d }

// liveID reports whether pack id is in the index: not merged away,
// removed or dropped.
func (s *Store) liveID(id uint32) bool {
	p := s.byID[id]
	return p != nil && p.mem != nil && !p.gone.Load()
}

func (s *Store) liveRec(r *recRef) bool { return s.liveID(r.pack) }
func (s *Store) liveObj(r *objRef) bool { return s.liveID(r.pack) }

// rec is a record found in the index: record i of pack p, whose objects
// are ri, with dup other records of the same key.
type rec struct {
	p   *pack
	i   int
	ri  recInfo
	dup int
}

// recOf returns the record an entry of the sorted array names.
func (s *Store) recOf(r *recRef) rec { return rec{p: s.byID[r.pack], i: int(r.rec), ri: r.ri} }

// recsOf returns the live records of k.
func (s *Store) recsOf(k Key) []recRef {
	var buf [spanRead]recRef
	base, tail := s.recIx.find((*[32]byte)(&k), recName, buf[:])
	var out []recRef
	for _, rr := range [2][]recRef{base, tail} {
		for _, r := range rr {
			if s.liveRec(&r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// lookup returns the record of k. Of several records of one key
// (concurrent writers) the smallest response digest wins, then the
// smallest pack name, so that every process resolves them alike.
func (s *Store) lookup(k Key) (rec, bool) {
	var buf [spanRead]recRef
	base, tail := s.recIx.find((*[32]byte)(&k), recName, buf[:])
	var best rec
	n := 0
	for _, rr := range [2][]recRef{base, tail} {
		for _, r := range rr {
			if !s.liveRec(&r) {
				continue
			}
			n++
			c := s.recOf(&r)
			if n == 1 {
				best = c
				continue
			}
			a, b := s.respID(c), s.respID(best)
			if x := cmpDigest(a, b); x < 0 || x == 0 && c.p.name < best.p.name {
				best = c
			}
		}
	}
	best.dup = n - 1
	return best, n > 0
}

// respID returns the digest of r's response, or its local id.
func (s *Store) respID(r rec) Digest {
	m := r.p.mem
	if j := r.ri.resp; j >= 0 {
		d, _ := m.objDigest(r.p.name, int(j)) // a response has a name
		return d
	}
	j, _ := slices.BinarySearch(m.extRecs, uint32(r.i)) // r's record is there
	return m.extDigests.at(j)
}

// respLoc returns where r's response is in its pack, if it is there.
func (s *Store) respLoc(r rec) (objLoc, bool) {
	if j := r.ri.resp; j >= 0 {
		return objLoc{r.p, r.p.mem.where(int(j))}, true
	}
	return objLoc{}, false
}

// locs returns every copy of object d: objects with their own digest,
// and requests named by their records' keys.
func (s *Store) locs(d Digest) []objLoc { return s.appendLocs(nil, d) }

// appendLocs is locs appending to out: a read of one object passes a
// buffer of its own, as reproduce reads some 90,000 objects.
func (s *Store) appendLocs(out []objLoc, d Digest) []objLoc {
	var obuf [spanRead]objRef
	base, tail := s.objIx.find((*[32]byte)(&d), objName, obuf[:])
	for _, rs := range [2][]objRef{base, tail} {
		for _, r := range rs {
			if s.liveObj(&r) {
				p := s.byID[r.pack]
				out = append(out, objLoc{p, p.mem.where(int(r.obj))})
			}
		}
	}
	var rbuf [spanRead]recRef
	rb, rt := s.recIx.find((*[32]byte)(&d), recName, rbuf[:]) // the records of key d (recsOf)
	for _, rs := range [2][]recRef{rb, rt} {
		for _, r := range rs {
			if !s.liveRec(&r) {
				continue
			}
			p := s.byID[r.pack]
			if j := r.ri.req; j >= 0 {
				out = append(out, objLoc{p, p.mem.where(int(j))})
			}
		}
	}
	return out
}

// hasObj reports whether some pack holds object d.
func (s *Store) hasObj(d Digest) bool {
	var buf [spanRead]objRef
	base, tail := s.objIx.find((*[32]byte)(&d), objName, buf[:])
	for _, rr := range [2][]objRef{base, tail} {
		for _, r := range rr {
			if s.liveObj(&r) {
				return true
			}
		}
	}
	for _, r := range s.recsOf(Key(d)) {
		if r.ri.req >= 0 {
			return true
		}
	}
	return false
}

// addMem adds pack p, whose in-memory index is m, to the store's index;
// runs gathers its sorted entries so that many packs are added at once
// (addRuns).
func (s *Store) addMem(p *pack, m *packMem, keys []Key, runs *indexRuns) {
	p.id, p.mem = uint32(len(s.byID)), m
	s.byID = append(s.byID, p)
	if s.ixFile == nil {
		// The pack's arrays, and its entries in the sorted ones: a
		// record's and about one object's.
		p.ixBytes = m.bytes() + int64(m.nrecs*(sizeOf[recRef]()+sizeOf[objRef]()))
		s.ixBytes += p.ixBytes
	}
	p.recs = m.nrecs
	rr := make([]recRef, len(keys))
	for i, k := range keys {
		rr[i] = recRef{k, p.id, uint32(i), m.recs[i]}
	}
	runs.recs = append(runs.recs, rr)
	named := m.named.all()
	or := make([]objRef, len(named))
	for i, nm := range named {
		or[i] = objRef{nm.d, p.id, nm.obj}
	}
	runs.objs = append(runs.objs, or)
}

// indexRuns are the entries of packs being added.
type indexRuns struct {
	recs [][]recRef
	objs [][]objRef
}

// addRuns adds what addMem gathered to the sorted arrays.
func (s *Store) addRuns(runs *indexRuns) {
	if len(runs.recs) > 0 {
		s.recIx.add(runs.recs, recName, s.liveRec)
	}
	if len(runs.objs) > 0 {
		s.objIx.add(runs.objs, objName, s.liveObj)
	}
	*runs = indexRuns{}
	s.releaseGone()
}

// releaseGone lets go of the packs merged away or removed once no entry
// of the sorted arrays names them any more, so that their in-memory
// indexes are freed (reads under way keep what they hold).
func (s *Store) releaseGone() {
	if s.recIx.dead != 0 || s.objIx.dead != 0 {
		return
	}
	for i, p := range s.byID {
		if p != nil && p.gone.Load() {
			s.byID[i] = nil
		}
	}
}

// dropMem marks pack p's entries dead: lookups skip them and the next
// merge of the arrays removes them.
func (s *Store) dropMem(p *pack) {
	if p.mem == nil {
		return
	}
	s.recIx.dead += p.mem.nrecs
	s.objIx.dead += p.mem.named.len()
	s.ixBytes -= p.ixBytes
}

// resetIndex empties the in-memory index.
func (s *Store) resetIndex() {
	s.byID = nil
	s.recIx = sortedRefs[recRef]{}
	s.objIx = sortedRefs[objRef]{}
}

// winners calls fn with the record of every key, in key order.
func (s *Store) winners(fn func(Key, rec)) {
	var first recRef // of the key being read, whose records are n
	n := 0
	done := func() {
		switch {
		case n == 1:
			fn(first.key, s.recOf(&first))
		case n > 1:
			r, _ := s.lookup(first.key)
			fn(first.key, r)
		}
	}
	s.recIx.each(recName, func(r *recRef) {
		if !s.liveRec(r) {
			return
		}
		if n > 0 && r.key == first.key {
			n++
			return
		}
		done()
		first, n = *r, 1
	})
	done()
}

// recMeta returns the meta JSON of r (shared: not to be changed).
func (s *Store) recMeta(r rec) ([]byte, error) {
	m := r.p.mem
	g, first, count := m.metas.groupOf(r.i, m.nrecs)
	at := (uint(r.p.id)*0x9E3779B1 + uint(g)) % metaSlots
	if c := s.metaSlots[at].Load(); c != nil && c.p == r.p && c.g == g {
		return metaIn(c.dec, r.i-first, count)
	}
	b, compressed := m.metas.group(g)
	if !compressed {
		if m.metas.blob.f != nil { // read from the index file: kept as a decoded group
			s.keepMetaGroup(at, &metaSlot{r.p, g, b})
		}
		return metaIn(b, r.i-first, count)
	}
	dec, err := s.metaDec.DecodeAll(b, nil)
	if err != nil {
		return nil, fmt.Errorf("meta group: %w", err)
	}
	s.keepMetaGroup(at, &metaSlot{r.p, g, dec})
	return metaIn(dec, r.i-first, count)
}

// metaSlots is how many decoded groups of metas a store keeps (a group
// the index keeps uncompressed is read where it is), each in the slot
// its pack and group hash to, and metaSlotBytes how many bytes of
// decoded groups they hold at most, so that a walk in key order and
// reads of neighbouring keys decode each group about once, without a
// lock. Reads in no order (reproduce replays a benchmark's calls, then
// the site reads the exchanges it embeds) decode each group about once
// while the store's fit. With 512 slots they missed nearly every read of
// the full-scale demo (34,475), and a reproduce of it took 1.11x the
// user time it takes with 4,096 slots and 16 MB (medians of 4
// alternating reruns, quiet machine: 5.55 against 4.99 user-s; 1.00-1.16x
// at 2x and 4x the demo, single runs). At 8x, where the
// groups take about 50 MB, 64 MB saved no measurable time for 30-100 MB
// more peak RSS (perf; go test -bench Reproduce -memprofile with
// FINREPRO_BENCH_BUNDLE; /usr/bin/time of reproduce reruns). The demo's
// 1,041 groups take 6.5 MB.
const (
	metaSlots     = 4096
	metaSlotBytes = 16 << 20
)

// keepMetaGroup puts ms in slot at, then lets go of the groups in the
// slots after it while the kept ones take more than metaSlotBytes.
func (s *Store) keepMetaGroup(at uint, ms *metaSlot) {
	n := int64(cap(ms.dec))
	if old := s.metaSlots[at].Swap(ms); old != nil {
		n -= int64(cap(old.dec))
	}
	total := s.metaSlotBytes.Add(n)
	for j := uint(1); total > metaSlotBytes && j < metaSlots; j++ {
		if old := s.metaSlots[(at+j)%metaSlots].Swap(nil); old != nil {
			total = s.metaSlotBytes.Add(-int64(cap(old.dec)))
		}
	}
}

// metaSlot is one decoded group of metas.
type metaSlot struct {
	p   *pack
	g   int
	dec []byte
}

// countObjects returns the number of distinct objects: digests of
// objects that carry theirs, keys of requests, and local objects. The
// two sorted arrays are walked side by side, a chunk at a time, without
// a copy of either: with the copies, cache stats of 8x the full-scale
// demo peaked at 123-133 MB RSS, without them at 119-122 (2 rounds).
func (s *Store) countObjects() int {
	n := 0
	var last [32]byte
	count := func(d [32]byte) {
		if n == 0 || d != last {
			n, last = n+1, d
		}
	}
	next, stop := iter.Pull(func(yield func([32]byte) bool) {
		s.objIx.each(objName, func(r *objRef) {
			if s.liveObj(r) {
				yield(r.d) // every entry is pulled: it never returns false
			}
		})
	})
	defer stop()
	d, ok := next()
	s.recIx.each(recName, func(r *recRef) {
		if !s.liveRec(r) || r.ri.req < 0 {
			return
		}
		for ok && bytes.Compare(d[:], r.key[:]) < 0 {
			count(d)
			d, ok = next()
		}
		count(r.key)
	})
	for ok {
		count(d)
		d, ok = next()
	}
	for _, p := range s.byID {
		if p != nil && p.mem != nil && !p.gone.Load() {
			n += p.mem.locals()
		}
	}
	return n
}
