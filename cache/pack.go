package cache

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/finrepro/finrepro/internal/regular"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/errgroup"
)

// Pack file layout (see docs/cache.md):
//
//	magic        8 bytes "FRPACK1\n"
//	objects      one zstd frame per object, back to back
//	index        one zstd frame (no dictionary) holding the pack index
//	trailer      8-byte little-endian offset of the index frame, then "FRPKEND\n"
//
// The pack's name is the SHA-256 of the whole file.
const (
	packMagic    = "FRPACK1\n"
	packEndMagic = "FRPKEND\n"
	trailerLen   = 16
	indexHeader  = "finrepro-pack-index/1\n"
)

// maxIndexBytes caps the uncompressed index of one pack.
const maxIndexBytes = 256 << 20

// MaxMetaBytes caps the meta JSON of one exchange (a few hundred bytes in
// practice), in a Put and in a pack index.
const MaxMetaBytes = 16 << 10

// maxIndexFor caps the uncompressed index of a pack of size bytes, so
// that what a pack's index makes the store hold is bounded by the pack's
// real size, not by what its index claims: 1 MiB plus 16 times the pack.
// Real packs hold an index of a fifth of their size (the demo store's
// pack: 379,366 bytes of index in 1,973,248); a pack of records only
// (after gc) about 6 times, as each record's key and response digest are
// 64 bytes that do not compress.
// maxUndeclaredIndex caps an index frame that does not declare its size
// (zstd leaves it out below 256 bytes).
const maxUndeclaredIndex = 4 << 10

func maxIndexFor(size int64) int64 { return min(maxIndexBytes, 1<<20+16*size) }

// objEntry locates one object inside a pack.
type objEntry struct {
	digest Digest
	where
}

// where locates an object's content inside its pack. In a pack of format
// 1 it is a frame of its own (off, clen); in a pack of format 2 it is an
// entry of a block (the block's frame at off, clen, decoding to blockRaw
// bytes, of which the entry is slen bytes at at), holding either the
// object itself or, when base is set, its delta against base.
type where struct {
	off    int64
	clen   int64
	rawLen int64
	v2     bool
	// format 2 only
	blockRaw int64
	at, slen int64
	base     *where // a literal object of the same pack; nil: literal
	// blockSum is the SHA-256 of the decoded block (format 2), checked
	// when the block is decoded for an untrusted read.
	blockSum *Digest
	// local marks a response object its pack stores without a digest
	// (format 2): its digest field holds a local id (localID), not the
	// hash of its content, so a read cannot re-hash it against its name;
	// its block's SHA-256 vouches for it instead.
	local bool
}

// recEntry is one exchange record: the request object has digest key.
type recEntry struct {
	key  Key
	resp Digest
	meta []byte // JSON of Meta
}

// packIndex is the decoded index of one pack.
type packIndex struct {
	dict Digest // zero: no dictionary
	objs []objEntry
	recs []recEntry
	v2   *index2 // format 2 only
}

// metaBytes is the size of the index's metas.
func (ix *packIndex) metaBytes() int64 {
	n := 0
	for i := range ix.recs {
		n += len(ix.recs[i].meta)
	}
	return int64(n)
}

// marshal encodes the index in its pack's format.
func (ix *packIndex) marshal() []byte {
	if ix.v2 != nil {
		return ix.marshal2()
	}
	b := []byte(indexHeader)
	b = append(b, ix.dict[:]...)
	b = binary.AppendUvarint(b, uint64(len(ix.objs)))
	for _, o := range ix.objs {
		b = append(b, o.digest[:]...)
		b = binary.AppendUvarint(b, uint64(o.off))
		b = binary.AppendUvarint(b, uint64(o.clen))
		b = binary.AppendUvarint(b, uint64(o.rawLen))
	}
	b = binary.AppendUvarint(b, uint64(len(ix.recs)))
	for _, r := range ix.recs {
		b = append(b, r.key[:]...)
		b = append(b, r.resp[:]...)
		b = binary.AppendUvarint(b, uint64(len(r.meta)))
		b = append(b, r.meta...)
	}
	return b
}

var errBadIndex = errors.New("malformed pack index")

func uvarintLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// cutUvarint reads a uvarint in its shortest form, at most 2^62, from
// the start of *b and cuts it off.
func cutUvarint(b *[]byte) (int64, bool) {
	v, n := binary.Uvarint(*b)
	if n <= 0 || v > 1<<62 || n != uvarintLen(v) {
		return 0, false
	}
	*b = (*b)[n:]
	return int64(v), true
}

// badIndex is errBadIndex with what broke the rule.
func badIndex(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadIndex, fmt.Sprintf(format, args...))
}

// parsePackIndex decodes an index and checks it against its pack: the
// objects must tile the pack from byte 8 to indexOff, in order, each
// digest once; keys must be distinct and each meta at most MaxMetaBytes.
// Metas are copied out, so the result does not keep b.
func parsePackIndex(b []byte, indexOff int64, sc *indexScratch) (*packIndex, error) {
	rest, ok := bytes.CutPrefix(b, []byte(indexHeader))
	if !ok || len(rest) < 32 {
		return nil, errBadIndex
	}
	ix := &packIndex{}
	copy(ix.dict[:], rest)
	rest = rest[32:]
	uv := func() (int64, bool) { return cutUvarint(&rest) }
	bad := badIndex
	n, ok := uv()
	if !ok || n > int64(len(rest))/35 {
		return nil, errBadIndex
	}
	ix.objs = sc.objEntries(int(n))[:0]
	next := int64(len(packMagic)) // where the next object must start
	for range n {
		if len(rest) < 32 {
			return nil, errBadIndex
		}
		var o objEntry
		copy(o.digest[:], rest)
		rest = rest[32:]
		var ok1, ok2, ok3 bool
		o.off, ok1 = uv()
		o.clen, ok2 = uv()
		o.rawLen, ok3 = uv()
		if !ok1 || !ok2 || !ok3 || o.clen == 0 {
			return nil, errBadIndex
		}
		if o.off != next || o.clen > indexOff-o.off {
			return nil, bad("object %s at %d+%d does not follow the previous object (at %d) inside the pack's %d bytes of objects", o.digest.Str(), o.off, o.clen, next, indexOff)
		}
		next = o.off + o.clen
		ix.objs = append(ix.objs, o)
	}
	if next != indexOff {
		return nil, bad("objects end at %d, the index starts at %d", next, indexOff)
	}
	if d, ok := repeated(ix.objs, func(o *objEntry) (Digest, bool) { return o.digest, true }); ok {
		return nil, bad("object %s listed twice", d.Str())
	}
	n, ok = uv()
	if !ok || n > int64(len(rest))/65 {
		return nil, errBadIndex
	}
	ix.recs = sc.recEntries(int(n))[:0]
	metaBytes := 0
	for range n {
		if len(rest) < 64 {
			return nil, errBadIndex
		}
		var r recEntry
		copy(r.key[:], rest)
		copy(r.resp[:], rest[32:])
		rest = rest[64:]
		m, ok := uv()
		if !ok || m > int64(len(rest)) {
			return nil, errBadIndex
		}
		if m > MaxMetaBytes {
			return nil, bad("meta of %s: %d bytes exceed the limit of %d", r.key.Str(), m, MaxMetaBytes)
		}
		r.meta = rest[:m:m]
		metaBytes += int(m)
		rest = rest[m:]
		ix.recs = append(ix.recs, r)
	}
	if len(rest) != 0 {
		return nil, errBadIndex
	}
	if k, ok := repeated(ix.recs, recKey); ok {
		return nil, bad("key %s recorded twice", k.Str())
	}
	// One allocation for every meta, not sub-slices of b.
	arena := make([]byte, 0, metaBytes)
	for i := range ix.recs {
		r := &ix.recs[i]
		arena = append(arena, r.meta...)
		r.meta = arena[len(arena)-len(r.meta) : len(arena) : len(arena)]
	}
	return ix, nil
}

// repeated returns a digest that occurs twice among the ids of xs, of
// those id gives one (ok).
func repeated[T any](xs []T, id func(*T) (d Digest, ok bool)) (Digest, bool) {
	ds := make([]Digest, 0, len(xs))
	for i := range xs {
		if d, ok := id(&xs[i]); ok {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, cmpDigest)
	for i := 1; i < len(ds); i++ {
		if ds[i] == ds[i-1] {
			return ds[i], true
		}
	}
	return Digest{}, false
}

// recKey is the key of record r, for repeated.
func recKey(r *recEntry) (Digest, bool) { return Digest(r.key), true }

// readPackIndex reads and decodes the index of a pack of size bytes,
// named name (its local objects' ids derive from it), into sc's buffers
// when sc is not nil (the index is then valid until sc is reused).
func (s *Store) readPackIndex(f io.ReaderAt, size int64, name string, sc *indexScratch) (*packIndex, error) {
	if size < int64(len(packMagic))+trailerLen {
		return nil, errors.New("pack truncated")
	}
	var tr [trailerLen]byte
	if _, err := f.ReadAt(tr[:], size-trailerLen); err != nil {
		return nil, err
	}
	if string(tr[8:]) != packEndMagic {
		return nil, errors.New("pack truncated or bad trailer")
	}
	off := int64(binary.LittleEndian.Uint64(tr[:8]))
	if off < int64(len(packMagic)) || off >= size-trailerLen {
		return nil, errors.New("bad index offset")
	}
	var magic [len(packMagic)]byte
	if _, err := f.ReadAt(magic[:], 0); err != nil {
		return nil, err
	}
	if string(magic[:]) != packMagic && string(magic[:]) != packMagic2 {
		return nil, errors.New("not a pack file")
	}
	limit := maxIndexFor(size)
	if size-trailerLen-off > limit {
		return nil, errors.New("pack index too large")
	}
	frame := sc.frameBuf(int(size - trailerLen - off))
	if _, err := f.ReadAt(frame, off); err != nil {
		return nil, err
	}
	// The decoder writes no more than the frame declares into a buffer of
	// that size; finrepro's writer declares the size of every index of 256
	// bytes or more.
	var h zstd.Header
	if err := h.Decode(frame); err != nil {
		return nil, fmt.Errorf("pack index: %w", err)
	}
	want := uint64(maxUndeclaredIndex)
	if h.HasFCS {
		want = h.FrameContentSize
	}
	if want > uint64(limit) {
		return nil, fmt.Errorf("pack index: declares %d bytes, more than the %d a pack of %d bytes may hold", want, limit, size)
	}
	raw, err := s.indexDec.DecodeAll(frame, sc.rawBuf(int(want))[:0])
	if err != nil {
		return nil, fmt.Errorf("pack index: %w", err)
	}
	if sc != nil {
		sc.raw = raw
	}
	if string(magic[:]) == packMagic2 {
		ix, err := parsePackIndex2(raw, off, sc)
		if err != nil {
			return nil, err
		}
		ix.nameLocal(name)
		return ix, nil
	}
	return parsePackIndex(raw, off, sc)
}

// An indexScratch holds the buffers a pack's index is read, decoded and
// parsed into, which readIndexes reuses from pack to pack (indexBufs):
// it lets the parsed index go once the pack's in-memory index is built
// (buildPackMem copies what it keeps). With a new set of buffers for
// every pack, opening the judge corpus's store (20,000 exchanges, 11
// packs) allocated 35.8 MB, ten times the index it builds, and ran the
// collector ten times, most of the open (BenchmarkOpen; GODEBUG=gctrace=1
// finrepro cache dump).
type indexScratch struct {
	frame, raw []byte
	objs       []objEntry
	recs       []recEntry
}

var indexBufs = sync.Pool{New: func() any { return new(indexScratch) }}

// frameBuf and rawBuf return a buffer of n bytes, sc's when sc is not
// nil, for the index's frame and for what it decodes to; objEntries and
// recEntries return n zeroed entries, likewise.
func (sc *indexScratch) frameBuf(n int) []byte {
	if sc == nil {
		return make([]byte, n)
	}
	return reuse(&sc.frame, n)
}

func (sc *indexScratch) rawBuf(n int) []byte {
	if sc == nil {
		return make([]byte, n)
	}
	return reuse(&sc.raw, n)
}

func (sc *indexScratch) objEntries(n int) []objEntry {
	if sc == nil {
		return make([]objEntry, n)
	}
	return zeroed(reuse(&sc.objs, n))
}

func (sc *indexScratch) recEntries(n int) []recEntry {
	if sc == nil {
		return make([]recEntry, n)
	}
	return zeroed(reuse(&sc.recs, n))
}

// reuse returns *buf's array grown to n elements (not cleared), keeping
// it in *buf.
func reuse[T any](buf *[]T, n int) []T {
	*buf = slices.Grow((*buf)[:0], n)[:n]
	return *buf
}

func zeroed[T any](s []T) []T {
	clear(s)
	return s
}

// packWriter builds one pack in a temporary file.
type packWriter struct {
	f    *os.File
	bw   *bufio.Writer
	h    io.Writer // hashes what is written
	sum  interface{ Sum([]byte) []byte }
	off  int64
	ix   packIndex
	tail []byte // the index frame, once written
	// largeIndex: a format-2 index is encoded at largeIndexLevel (the
	// pack's responses are large), not indexLevel.
	largeIndex bool
}

// largeIndexLevel is indexLevel for the indexes of packs whose responses
// are large (largeResp): at the best level their encoding was 3.3 % of
// the samples of a one-core load on the random corpus (perf of
// GOMAXPROCS=1 finrepro cache load of gensynth -corpus random -n 20000
// -seed 1; BenchmarkLoad), and the better level took 0.92-1.02 times
// that load's user+sys CPU (paired, 3 rounds on a busy machine) for
// packs 26 KB (0.02 %) larger, 113.78 MB. The judge corpus's packs,
// whose responses are small, keep indexLevel and their bytes.
const largeIndexLevel = zstd.SpeedBetterCompression

var largeIndexEncoder = sharedEncoder(largeIndexLevel)

func (s *Store) newPackWriter(dict Digest) (*packWriter, error) {
	if s.opt.ReadOnly {
		return nil, errors.New("store opened read-only")
	}
	f, err := os.CreateTemp(filepath.Join(s.dir, tmpDir), "pack-*")
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	bw := bufio.NewWriterSize(f, 1<<20)
	pw := &packWriter{f: f, bw: bw, h: io.MultiWriter(bw, h), sum: h}
	pw.ix.dict = dict
	magic := packMagic2
	if s.packFormat == 1 {
		magic = packMagic
	}
	if _, err := pw.h.Write([]byte(magic)); err != nil {
		pw.abort()
		return nil, err
	}
	pw.off = int64(len(magic))
	return pw, nil
}

func (pw *packWriter) addObject(d Digest, frame []byte, rawLen int) error {
	if _, err := pw.h.Write(frame); err != nil {
		return err
	}
	pw.ix.objs = append(pw.ix.objs, objEntry{d, where{off: pw.off, clen: int64(len(frame)), rawLen: int64(rawLen)}})
	pw.off += int64(len(frame))
	return nil
}

func (pw *packWriter) abort() {
	pw.f.Close()
	os.Remove(pw.f.Name()) // best effort: a leftover temp file is removed by gc
}

// writePack writes items (objects) and recs as one pack in the store's
// pack format, compressed with d (nil: no dictionary), and returns its
// name, index and size.
func (s *Store) writePack(d *dict, items []item, recs []recEntry) (string, *packIndex, int64, error) {
	var dd Digest
	enc, blkEnc := plainEncoder(), plainBlockEncoder()
	if d != nil {
		dd, enc, blkEnc = d.digest, d.enc, d.blkEnc
	}
	if err := s.upgradeFormat(); err != nil {
		return "", nil, 0, err
	}
	pw, err := s.newPackWriter(dd)
	if err != nil {
		return "", nil, 0, err
	}
	if s.packFormat == 1 {
		frames := make([][]byte, len(items))
		var g errgroup.Group
		g.SetLimit(compressWorkers())
		for i, it := range items {
			g.Go(func() error {
				if it.frame != nil && it.fdict == d {
					frames[i] = it.frame
				} else {
					frames[i] = enc.EncodeAll(it.raw, nil)
				}
				return nil
			})
		}
		g.Wait() // the workers return no errors
		for i, it := range items {
			if err := pw.addObject(it.d, frames[i], len(it.raw)); err != nil {
				pw.abort()
				return "", nil, 0, err
			}
		}
		pw.ix.recs = recs
		name, ix, err := s.finishPack(pw)
		if err == nil {
			s.noteGood([]string{name}, false) // every digest in it was computed here
		}
		return name, ix, pw.off + int64(len(pw.tail)) + trailerLen, err
	}
	l := layoutPack2(dd, items, recs, func(b []byte, large bool) []byte {
		if large {
			// A pack of large responses at encoderLevel, zstd's
			// fastest: the blocks' encoding was about half of a
			// one-core load's CPU on the random corpus (responses of
			// 10 KB on average, in 32 KiB blocks). The fastest level
			// for its response blocks took 18 % less of that load's CPU
			// than blockLevel for a store 0.75 % larger (113.9 MB
			// against 113.0 MB), for its request blocks too another
			// 11-13 % less for 1.9 % more (115.9 MB; GOMAXPROCS=1
			// finrepro cache load of gensynth -corpus random -n 20000
			// -seed 1, paired rounds, and BenchmarkLoad). The judge
			// corpus's packs have small responses and keep blockLevel:
			// the fastest made that store 1.6 % larger for no CPU saved.
			return encodeBlock(enc, b)
		}
		return encodeBlock(blkEnc, b)
	})
	for _, f := range l.frames {
		if _, err := pw.h.Write(f); err != nil {
			pw.abort()
			return "", nil, 0, err
		}
		pw.off += int64(len(f))
	}
	pw.ix, pw.largeIndex = *l.ix, l.large
	name, ix, err := s.finishPack(pw)
	if err == nil {
		ix.nameLocal(name)
		s.noteGood([]string{name}, false) // every digest in it was computed here
	}
	return name, ix, pw.off + int64(len(pw.tail)) + trailerLen, err
}

// encodeBlock returns b encoded by enc, encoded in a reused buffer (see
// blockBufs) and copied out at its own size.
func encodeBlock(enc *zstd.Encoder, b []byte) []byte {
	fp := blockBufs.Get().(*[]byte)
	f := enc.EncodeAll(b, (*fp)[:0])
	out := bytes.Clone(f)
	*fp = f
	blockBufs.Put(fp)
	return out
}

func compressWorkers() int { return runtime.GOMAXPROCS(0) }

// finish writes index and trailer, syncs the file and renames it into
// place, then syncs its folder. It returns the pack's name.
func (s *Store) finishPack(pw *packWriter) (string, *packIndex, error) {
	enc := s.indexEnc
	switch {
	case pw.largeIndex:
		enc = largeIndexEncoder()
	case pw.ix.v2 != nil:
		enc = s.index2Enc
	}
	frame := enc.EncodeAll(pw.ix.marshal(), nil)
	pw.tail = frame
	var tr [trailerLen]byte
	binary.LittleEndian.PutUint64(tr[:8], uint64(pw.off))
	copy(tr[8:], packEndMagic)
	if _, err := pw.h.Write(frame); err != nil {
		pw.abort()
		return "", nil, err
	}
	if _, err := pw.h.Write(tr[:]); err != nil {
		pw.abort()
		return "", nil, err
	}
	if err := pw.bw.Flush(); err != nil {
		pw.abort()
		return "", nil, err
	}
	if err := pw.f.Sync(); err != nil {
		pw.abort()
		return "", nil, err
	}
	if err := pw.f.Close(); err != nil {
		os.Remove(pw.f.Name())
		return "", nil, err
	}
	name := hex.EncodeToString(pw.sum.Sum(nil))
	dst := s.packPath(name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		os.Remove(pw.f.Name())
		return "", nil, err
	}
	if err := os.Rename(pw.f.Name(), dst); err != nil {
		os.Remove(pw.f.Name())
		return "", nil, err
	}
	if err := regular.SyncDir(filepath.Dir(dst)); err != nil {
		return "", nil, err
	}
	return name, &pw.ix, nil
}

func (s *Store) packPath(name string) string {
	return filepath.Join(s.dir, packsDir, name[:2], name+".pack")
}

// writeFileAtomic writes b to path durably, through the store's tmp
// folder (regular.WriteFile).
func (s *Store) writeFileAtomic(path string, b []byte) error {
	return regular.WriteFile(filepath.Join(s.dir, tmpDir), path, b)
}
