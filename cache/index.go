package cache

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// The in-memory index of a store holds no pointer per exchange and no
// map entry per exchange: each pack keeps fixed-size arrays of its
// objects' locations and of its records (packMem), its records' metas
// compressed in groups (metaArena), and the store keeps two sorted
// arrays over all packs: the records by key (recRef, the key inline) and
// the objects that carry a digest of their own by digest (objRef, the
// digest in the pack's arrays). A request object is found through its
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
	pack uint32 // pack id (Store.byID)
	rec  uint32 // the record's position in its pack's records (key order)
}

// objRef is one object with a digest of its own in the store's sorted
// object array: the pack's named[i].
type objRef struct {
	pack uint32
	i    uint32
}

// packMem is the in-memory index of one pack, pointer-free but for its
// slices.
type packMem struct {
	v2 bool
	// objects: objs1 (format 1) or objs2 (format 2), in pack order.
	objs1  []obj1
	objs2  []obj2
	end1   int64   // format 1: where the last object ends (the index frame)
	wide1  []int64 // format 1: the objects' offsets, in a pack of 4 GiB or more
	blocks []blockLoc
	// named are the objects that carry a digest of their own, sorted
	// by digest.
	named []namedObj
	// recs are the pack's records, sorted by key.
	recs []recInfo
	// ext holds the response digests of the records whose response
	// object is in another pack, in record order.
	ext   []extResp
	metas metaArena
}

// extResp is the response digest of record rec, whose response is in
// another pack.
type extResp struct {
	rec uint32
	d   Digest
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
	m.recs = make([]recInfo, len(perm))
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
			m.recs[i] = recInfo{int32(v.reqAt[p]) - 1, int32(v.respAt[p]) - 1}
			if v.respAt[p] == 0 {
				m.ext = append(m.ext, extResp{uint32(i), ix.recs[p].resp})
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
				m.ext = append(m.ext, extResp{uint32(i), r.resp})
			}
			m.recs[i] = ri
		}
		// A request object is named by its record's key; any other
		// object (a response, or an object no record of the pack
		// names) carries its digest.
		reqOf := make([]bool, nobj)
		for _, ri := range m.recs {
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
	m.ext = slices.Clip(m.ext)
	m.named = make([]namedObj, 0, nNamed)
	for i, n := range names {
		if n == 0 {
			m.named = append(m.named, namedObj{ix.objs[i].digest, uint32(i)})
		}
	}
	slices.SortFunc(m.named, func(a, b namedObj) int { return bytes.Compare(a.d[:], b.d[:]) })
	for j, nm := range m.named {
		names[nm.obj] = int32(j)
	}
	if m.v2 {
		m.objs2 = make([]obj2, nobj)
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
			m.objs2[i] = e
		}
	} else {
		m.objs1 = make([]obj1, nobj)
		if m.end1 > 1<<32-1 {
			m.wide1 = make([]int64, nobj)
		}
		for i, o := range ix.objs {
			m.objs1[i] = obj1{off: uint32(o.off), raw: satLen(o.rawLen), name: names[i]}
			if m.wide1 != nil {
				m.wide1[i] = o.off
			}
		}
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
	if !m.v2 {
		off, end := m.off1(i), m.end1
		if i+1 < len(m.objs1) {
			end = m.off1(i + 1)
		}
		return where{off: off, clen: end - off, rawLen: rawLen(m.objs1[i].raw)}
	}
	o := m.objs2[i]
	b := &m.blocks[o.blk]
	w := where{off: b.off, clen: b.clen, rawLen: rawLen(o.raw), v2: true, blockRaw: b.raw, at: int64(o.at), slen: int64(o.slen), blockSum: &b.sum, local: o.name == localName}
	if o.base >= 0 {
		bw := m.where(int(o.base))
		w.base = &bw
	}
	return w
}

// off1 returns the offset of object i of a format-1 pack.
func (m *packMem) off1(i int) int64 {
	if m.wide1 != nil {
		return m.wide1[i]
	}
	return int64(m.objs1[i].off)
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
		n = m.objs2[i].name
	} else {
		n = m.objs1[i].name
	}
	switch {
	case n >= 0:
		return m.named[n].d, true
	case n == localName:
		return localID(name, i), true
	}
	return Digest{}, false
}

// nobjs returns the number of objects of the pack.
func (m *packMem) nobjs() int {
	if m.v2 {
		return len(m.objs2)
	}
	return len(m.objs1)
}

// locals counts the pack's local objects.
func (m *packMem) locals() int {
	n := 0
	for _, o := range m.objs2 {
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
	blob  []byte
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
	a.blob = out
	if compress != nil {
		a.blob = bytes.Clone(out) // exactly its size
	}
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

// group returns the stored bytes of group g and whether they are
// compressed.
func (a *metaArena) group(g int) ([]byte, bool) {
	lo := uint32(0)
	if g > 0 {
		lo = a.ends[g-1] &^ rawGroup
	}
	e := a.ends[g]
	return a.blob[lo : e&^rawGroup], e&rawGroup == 0
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
	base, tail []R
	starts     []uint32 // starts[p]: first base entry whose name has prefix p
	bits       uint
	dead       int // entries of packs gone
}

// prefix returns the first bits bits of name.
func prefix(name *[32]byte, bits uint) uint32 {
	if bits == 0 {
		return 0
	}
	return binary.BigEndian.Uint32(name[:4]) >> (32 - bits)
}

// run returns the entries of xs (sorted by name) named n.
func run[R any](xs []R, n *[32]byte, name func(*R) *[32]byte) []R {
	lo, hi := 0, len(xs)
	for hi-lo > 8 { // binary search down to a few entries, then scan
		mid := int(uint(lo+hi) >> 1)
		if bytes.Compare(name(&xs[mid])[:], n[:]) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	for lo < len(xs) && bytes.Compare(name(&xs[lo])[:], n[:]) < 0 {
		lo++
	}
	hi = lo
	for hi < len(xs) && *name(&xs[hi]) == *n {
		hi++
	}
	return xs[lo:hi]
}

// find returns the entries named n in the base and in the tail.
func (x *sortedRefs[R]) find(n *[32]byte, name func(*R) *[32]byte) (base, tail []R) {
	if len(x.base) > 0 {
		p := prefix(n, x.bits)
		base = run(x.base[x.starts[p]:x.starts[p+1]], n, name)
	}
	if len(x.tail) > 0 {
		tail = run(x.tail, n, name)
	}
	return base, tail
}

// add adds runs, each sorted by name; entries for which live is false
// are dropped when the tail is merged into the base.
func (x *sortedRefs[R]) add(runs [][]R, name func(*R) *[32]byte, live func(*R) bool) {
	runs = append(runs, x.tail)
	x.tail = mergeRuns(runs, name)
	if len(x.tail) > max(1024, len(x.base)/8) || x.dead > len(x.base)/4 {
		x.compact(name, live)
	}
}

// compact merges the tail into the base, leaving out dead entries, and
// rebuilds the prefix table.
func (x *sortedRefs[R]) compact(name func(*R) *[32]byte, live func(*R) bool) {
	all := mergeRuns([][]R{x.base, x.tail}, name)
	all = slices.DeleteFunc(all, func(r R) bool { return !live(&r) })
	x.base, x.tail, x.dead = slices.Clip(all), nil, 0
	// About four entries per prefix: a lookup compares a few keys
	// of one cache line or two, and the table costs a byte an entry.
	x.bits = uint(min(24, max(0, bits.Len(uint(len(x.base)))-3)))
	x.starts = make([]uint32, 1<<x.bits+1)
	j := 0
	for p := range 1 << x.bits {
		for j < len(x.base) && prefix(name(&x.base[j]), x.bits) < uint32(p) {
			j++
		}
		x.starts[p] = uint32(j)
	}
	x.starts[1<<x.bits] = uint32(len(x.base))
}

// mergeRuns merges sorted runs into one new sorted slice, two at a time.
func mergeRuns[R any](runs [][]R, name func(*R) *[32]byte) []R {
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

func merge2[R any](a, b []R, name func(*R) *[32]byte) []R {
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
			k, _ := slices.BinarySearchFunc(a, n, func(r R, n *[32]byte) int { return bytes.Compare(name(&r)[:], n[:]) })
			out = append(out, a[:k]...)
			out = append(out, b[i])
			a = a[k:]
		}
		return append(out, a...)
	}
	for len(a) > 0 && len(b) > 0 {
		if bytes.Compare(name(&b[0])[:], name(&a[0])[:]) < 0 {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	out = append(out, a...)
	return append(out, b...)
}

// each calls fn with every entry, base then tail (not in name order).
func (x *sortedRefs[R]) each(fn func(*R)) {
	for i := range x.base {
		fn(&x.base[i])
	}
	for i := range x.tail {
		fn(&x.tail[i])
	}
}

// sorted returns every entry for which keep is true, sorted by name:
// the base itself when nothing was added or dropped since it was merged
// (shared: not to be changed).
func (x *sortedRefs[R]) sorted(name func(*R) *[32]byte, keep func(*R) bool) []R {
	if len(x.tail) == 0 && x.dead == 0 {
		return x.base
	}
	all := mergeRuns([][]R{x.base, x.tail}, name)
	return slices.DeleteFunc(all, func(r R) bool { return !keep(&r) })
}

// The store's side of the index; s.mu is held (read or write) by every
// caller.

func recName(r *recRef) *[32]byte { return (*[32]byte)(&r.key) }

func (s *Store) objName(r *objRef) *[32]byte {
	return (*[32]byte)(&s.byID[r.pack].mem.named[r.i].d)
}

// liveID reports whether pack id is in the index: not merged away,
// removed or dropped.
func (s *Store) liveID(id uint32) bool {
	p := s.byID[id]
	return p != nil && p.mem != nil && !p.gone.Load()
}

func (s *Store) liveRec(r *recRef) bool { return s.liveID(r.pack) }
func (s *Store) liveObj(r *objRef) bool { return s.liveID(r.pack) }

// rec is a record found in the index: record i of pack p, with dup other
// records of the same key.
type rec struct {
	p   *pack
	i   int
	dup int
}

// recsOf returns the live records of k.
func (s *Store) recsOf(k Key) []recRef {
	base, tail := s.recIx.find((*[32]byte)(&k), recName)
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
	base, tail := s.recIx.find((*[32]byte)(&k), recName)
	var best rec
	n := 0
	for _, rr := range [2][]recRef{base, tail} {
		for _, r := range rr {
			if !s.liveRec(&r) {
				continue
			}
			n++
			c := rec{p: s.byID[r.pack], i: int(r.rec)}
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
	if j := m.recs[r.i].resp; j >= 0 {
		d, _ := m.objDigest(r.p.name, int(j)) // a response has a name
		return d
	}
	j, _ := slices.BinarySearchFunc(m.ext, uint32(r.i), func(e extResp, i uint32) int { return int(e.rec) - int(i) })
	return m.ext[j].d
}

// respLoc returns where r's response is in its pack, if it is there.
func (s *Store) respLoc(r rec) (objLoc, bool) {
	if j := r.p.mem.recs[r.i].resp; j >= 0 {
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
	base, tail := s.objIx.find((*[32]byte)(&d), s.objName)
	for _, rs := range [2][]objRef{base, tail} {
		for _, r := range rs {
			if s.liveObj(&r) {
				p := s.byID[r.pack]
				out = append(out, objLoc{p, p.mem.where(int(p.mem.named[r.i].obj))})
			}
		}
	}
	rb, rt := s.recIx.find((*[32]byte)(&d), recName) // the records of key d (recsOf)
	for _, rs := range [2][]recRef{rb, rt} {
		for _, r := range rs {
			if !s.liveRec(&r) {
				continue
			}
			p := s.byID[r.pack]
			if j := p.mem.recs[r.rec].req; j >= 0 {
				out = append(out, objLoc{p, p.mem.where(int(j))})
			}
		}
	}
	return out
}

// hasObj reports whether some pack holds object d.
func (s *Store) hasObj(d Digest) bool {
	base, tail := s.objIx.find((*[32]byte)(&d), s.objName)
	for _, rr := range [2][]objRef{base, tail} {
		for _, r := range rr {
			if s.liveObj(&r) {
				return true
			}
		}
	}
	for _, r := range s.recsOf(Key(d)) {
		if s.byID[r.pack].mem.recs[r.rec].req >= 0 {
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
	p.recs = len(m.recs)
	rr := make([]recRef, len(keys))
	for i, k := range keys {
		rr[i] = recRef{k, p.id, uint32(i)}
	}
	runs.recs = append(runs.recs, rr)
	or := make([]objRef, len(m.named))
	for i := range or {
		or[i] = objRef{p.id, uint32(i)}
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
		s.objIx.add(runs.objs, s.objName, s.liveObj)
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
	s.recIx.dead += len(p.mem.recs)
	s.objIx.dead += len(p.mem.named)
}

// resetIndex empties the in-memory index.
func (s *Store) resetIndex() {
	s.byID = nil
	s.recIx = sortedRefs[recRef]{}
	s.objIx = sortedRefs[objRef]{}
}

// winners calls fn with the record of every key, in key order.
func (s *Store) winners(fn func(Key, rec)) {
	all := s.recIx.sorted(recName, s.liveRec)
	for lo := 0; lo < len(all); {
		hi := lo + 1
		for hi < len(all) && all[hi].key == all[lo].key {
			hi++
		}
		k := all[lo].key
		if hi == lo+1 {
			fn(k, rec{p: s.byID[all[lo].pack], i: int(all[lo].rec)})
		} else {
			r, _ := s.lookup(k)
			fn(k, r)
		}
		lo = hi
	}
}

// recMeta returns the meta JSON of r (shared: not to be changed).
func (s *Store) recMeta(r rec) ([]byte, error) {
	m := r.p.mem
	g, first, count := m.metas.groupOf(r.i, len(m.recs))
	at := (uint(r.p.id)*0x9E3779B1 + uint(g)) % metaSlots
	if c := s.metaSlots[at].Load(); c != nil && c.p == r.p && c.g == g {
		return metaIn(c.dec, r.i-first, count)
	}
	b, compressed := m.metas.group(g)
	if !compressed {
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
// objects that carry theirs, keys of requests, and local objects.
func (s *Store) countObjects() int {
	named := s.objIx.sorted(s.objName, s.liveObj)
	recs := s.recIx.sorted(recName, s.liveRec)
	n, i := 0, 0
	var last *[32]byte
	for j := range recs {
		r := &recs[j]
		if s.byID[r.pack].mem.recs[r.rec].req < 0 || last != nil && *last == r.key {
			continue
		}
		last = (*[32]byte)(&r.key)
		for i < len(named) && bytes.Compare(s.objName(&named[i])[:], last[:]) < 0 {
			if i == 0 || *s.objName(&named[i]) != *s.objName(&named[i-1]) {
				n++
			}
			i++
		}
		if i < len(named) && *s.objName(&named[i]) == *last {
			continue // counted with the named objects
		}
		n++
	}
	for ; i < len(named); i++ {
		if i == 0 || *s.objName(&named[i]) != *s.objName(&named[i-1]) {
			n++
		}
	}
	for _, p := range s.byID {
		if p != nil && p.mem != nil && !p.gone.Load() {
			n += p.mem.locals()
		}
	}
	return n
}
