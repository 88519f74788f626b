package cache

import (
	"bytes"
	"context"
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
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache/internal/synth"

	"github.com/klauspost/compress/zstd"
)

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// bombIndex returns a zstd frame of a pack index holding one record whose
// meta is metaLen zero bytes: a few kilobytes that decode to metaLen.
// declare is the content size the frame declares: 0 for the true size,
// -1 for none.
func bombIndex(t testing.TB, metaLen int64, declare int64) []byte {
	t.Helper()
	var head bytes.Buffer
	head.WriteString(indexHeader)
	head.Write(make([]byte, 32)) // no dictionary
	head.Write(binary.AppendUvarint(nil, 0))
	head.Write(binary.AppendUvarint(nil, 1))
	head.Write(bytes.Repeat([]byte{1}, 64)) // key, response
	head.Write(binary.AppendUvarint(nil, uint64(metaLen)))
	var out bytes.Buffer
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	if declare == 0 {
		declare = int64(head.Len()) + metaLen
	}
	if declare >= 0 {
		enc.ResetContentSize(&out, declare)
	} else {
		enc.Reset(&out)
	}
	if _, err := enc.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(enc, zeros{}, metaLen); err != nil && declare < 0 {
		t.Fatal(err)
	}
	enc.Close() // a declared size that does not match is an error here, not a test failure
	return out.Bytes()
}

// packOf wraps an index frame into a pack without objects.
func packOf(frame []byte) []byte {
	b := append([]byte(packMagic), frame...)
	b = binary.LittleEndian.AppendUint64(b, uint64(len(packMagic)))
	return append(b, packEndMagic...)
}

// plantPack writes pack bytes into the store folder dir under their name.
func plantPack(t testing.TB, dir string, b []byte) string {
	t.Helper()
	sum := sha256.Sum256(b)
	name := hex.EncodeToString(sum[:])
	p := filepath.Join(dir, packsDir, name[:2], name+".pack")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// allocated returns the bytes f allocates on the heap (an upper bound of
// its peak heap).
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestPackIndexBomb plants packs of a few kilobytes whose index decodes to
// 250 MiB, declared in the frame, left undeclared, or declared small: each
// store is refused as corrupt, naming the pack, and opening it allocates
// a few MiB at most, not the 250 MiB the index claims.
func TestPackIndexBomb(t *testing.T) {
	const claim = 250 << 20
	for _, tc := range []struct {
		name    string
		declare int64
	}{{"declared", 0}, {"undeclared", -1}, {"understated", 1000}} {
		t.Run(tc.name, func(t *testing.T) {
			frame := bombIndex(t, claim, tc.declare)
			pack := packOf(frame)
			t.Logf("%d-byte pack", len(pack))
			if len(pack) > 64<<10 {
				t.Fatalf("bomb pack of %d bytes, want a few kilobytes", len(pack))
			}
			dir := t.TempDir()
			openTest(t, dir, Options{}).Close()
			p := plantPack(t, dir, pack)
			var err error
			n := allocated(func() {
				var s *Store
				if s, err = Open(dir, Options{ReadOnly: true}); err == nil {
					s.Close()
				}
			})
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != filepath.ToSlash(p[len(dir)+1:]) {
				t.Errorf("open: %v, want a *CorruptError naming the pack", err)
			}
			if n > 8<<20 {
				t.Errorf("opening a %d-byte pack allocated %d MiB", len(pack), n>>20)
			}
		})
	}
}

// firstPackIndex returns the index of the first pack of the store s in
// dir, and where it starts.
func firstPackIndex(t *testing.T, s *Store, dir string) (int64, *packIndex) {
	t.Helper()
	b, err := os.ReadFile(packFiles(t, dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	ix, err := s.readPackIndex(bytes.NewReader(b), int64(len(b)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return int64(binary.LittleEndian.Uint64(b[len(b)-trailerLen:])), ix
}

// TestPackIndexChecks builds pack indexes of format 1 that lie about their
// pack: each is refused, and the real pack's index is accepted.
func TestPackIndexChecks(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{PackFormat: 1})
	if _, err := s.Load(bytes.NewReader(synthLines(t, 5, 2)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	indexOff, ix := firstPackIndex(t, s, dir)
	if len(ix.objs) < 2 || len(ix.recs) < 2 {
		t.Fatalf("%d objects, %d records", len(ix.objs), len(ix.recs))
	}
	for _, tc := range []struct {
		name string
		edit func(ix *packIndex)
	}{
		{"gap before the first object", func(ix *packIndex) { ix.objs[0].off++; ix.objs[0].clen-- }},
		{"overlap", func(ix *packIndex) { ix.objs[1].off--; ix.objs[1].clen++ }},
		{"object past the index", func(ix *packIndex) { ix.objs[len(ix.objs)-1].clen++ }},
		{"objects end early", func(ix *packIndex) { ix.objs[len(ix.objs)-1].clen-- }},
		{"object missing", func(ix *packIndex) { ix.objs = ix.objs[1:] }},
		{"object twice", func(ix *packIndex) { ix.objs[1].digest = ix.objs[0].digest }},
		{"key twice", func(ix *packIndex) { ix.recs[1].key = ix.recs[0].key }},
		{"meta too large", func(ix *packIndex) { ix.recs[0].meta = bytes.Repeat([]byte(" "), MaxMetaBytes+1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &packIndex{dict: ix.dict, objs: append([]objEntry(nil), ix.objs...), recs: append([]recEntry(nil), ix.recs...)}
			tc.edit(c)
			if _, err := parsePackIndex(c.marshal(), indexOff, nil); !errors.Is(err, errBadIndex) {
				t.Errorf("parse: %v, want a malformed index", err)
			}
		})
	}
	if _, err := parsePackIndex(ix.marshal(), indexOff, nil); err != nil {
		t.Errorf("the unchanged index: %v", err)
	}
}

// TestPackIndex2Checks does the same for indexes of format 2.
func TestPackIndex2Checks(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	var lines bytes.Buffer // judge traffic: requests stored as deltas
	if err := synth.WriteJudge(&lines, 200, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(bytes.NewReader(lines.Bytes()), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	indexOff, ix := firstPackIndex(t, s, dir)
	if ix.v2 == nil || len(ix.v2.blocks) < 2 || len(ix.recs) < 2 {
		t.Fatalf("format 2: %v, %d records", ix.v2 != nil, len(ix.recs))
	}
	clone := func(ix *packIndex) *packIndex {
		c := *ix
		c.objs = slices.Clone(ix.objs)
		c.recs = slices.Clone(ix.recs)
		v := *ix.v2
		v.blocks, v.named, v.reqAt, v.respAt = slices.Clone(v.blocks), slices.Clone(v.named), slices.Clone(v.reqAt), slices.Clone(v.respAt)
		c.v2 = &v
		return &c
	}
	last := func(ix *packIndex) *blockEntry { return &ix.v2.blocks[len(ix.v2.blocks)-1] }
	for _, tc := range []struct {
		name string
		edit func(ix *packIndex)
	}{
		{"block past the index", func(ix *packIndex) { last(ix).clen++ }},
		{"blocks end early", func(ix *packIndex) { last(ix).clen-- }},
		{"object across a block's end", func(ix *packIndex) { ix.objs[0].slen++ }},
		{"block not filled", func(ix *packIndex) { ix.v2.blocks[0].rawLen++ }},
		{"object missing", func(ix *packIndex) { ix.objs = ix.objs[:len(ix.objs)-1] }},
		{"unnamed object", func(ix *packIndex) { ix.v2.reqAt[0] = 0 }},
		{"object named twice", func(ix *packIndex) { ix.v2.respAt[0] = ix.v2.reqAt[0] }},
		{"record past the objects", func(ix *packIndex) { ix.v2.respAt[0] = len(ix.objs) + 1 }},
		{"key twice", func(ix *packIndex) { ix.recs[1].key = ix.recs[0].key }},
		{"meta too large", func(ix *packIndex) { ix.recs[0].meta = bytes.Repeat([]byte(" "), MaxMetaBytes+1) }},
		{"delta of a delta", func(ix *packIndex) {
			for i := range ix.objs {
				if ix.objs[i].base != nil {
					ix.objs[i+1].base, ix.objs[i+1].rawLen = &ix.objs[i].where, 100
					return
				}
			}
			t.Fatal("no delta in the pack")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clone(ix)
			tc.edit(c)
			if _, err := parsePackIndex2(c.marshal(), indexOff, nil); !errors.Is(err, errBadIndex) {
				t.Errorf("parse: %v, want a malformed index", err)
			}
		})
	}
	if _, err := parsePackIndex2(ix.marshal(), indexOff, nil); err != nil {
		t.Errorf("the unchanged index: %v", err)
	}
}

// FuzzReadPackIndex reads a pack's index from arbitrary bytes. Property: what
// it allocates is bounded by a constant factor of the pack's size (plus a
// constant for the decoder's first use), whatever the index claims.
func FuzzReadPackIndex(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Load(bytes.NewReader(synthLines(f, 5, 3)), LoadOptions{Strict: true}); err != nil {
		f.Fatal(err)
	}
	// and a pack of format 1
	s1, err := Open(dir, Options{PackFormat: 1})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := s1.Load(bytes.NewReader(synthLines(f, 5, 4)), LoadOptions{Strict: true}); err != nil {
		f.Fatal(err)
	}
	s1.Close()
	files, _ := filepath.Glob(filepath.Join(dir, packsDir, "*", "*.pack"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(packOf(bombIndex(f, 8<<20, -1)))
	f.Add(packOf(bombIndex(f, 8<<20, 0)))
	f.Add(packOf(bombIndex(f, 1000, 100)))
	sc := new(indexScratch) // reused by every input, as readIndexes reuses it
	f.Fuzz(func(t *testing.T, b []byte) {
		var ix *packIndex
		var err error
		n := allocated(func() { ix, err = s.readPackIndex(bytes.NewReader(b), int64(len(b)), "", nil) })
		// Read into buffers an earlier input left, the same index or
		// error (the index is marshalled before sc is reused).
		inSc, scErr := s.readPackIndex(bytes.NewReader(b), int64(len(b)), "", sc)
		if fmt.Sprint(scErr) != fmt.Sprint(err) || (ix == nil) != (inSc == nil) || ix != nil && !bytes.Equal(inSc.marshal(), ix.marshal()) {
			t.Errorf("read into reused buffers: %v, %v; without them: %v", inSc != nil, scErr, err)
		}
		if limit := uint64(8<<20 + 100*len(b)); n > limit {
			t.Errorf("a %d-byte pack allocated %d bytes, more than %d", len(b), n, limit)
		}
		if ix != nil {
			// What is accepted round-trips.
			off := int64(binary.LittleEndian.Uint64(b[len(b)-trailerLen:]))
			parse := parsePackIndex
			if ix.v2 != nil {
				parse = parsePackIndex2
			}
			again, err := parse(ix.marshal(), off, nil)
			if err != nil || !bytes.Equal(again.marshal(), ix.marshal()) {
				t.Errorf("accepted index does not round-trip: %v", err)
			}
			checkPackMem(t, ix)
		}
	})
}

// TestVerifyInterrupt plants an 8 GiB sparse pack: a Verify whose context
// is cancelled returns within a second with the context's error.
func TestVerifyInterrupt(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, Options{}).Close()
	p := plantPack(t, dir, []byte("placeholder"))
	if err := os.Truncate(p, 8<<30); err != nil {
		t.Fatal(err)
	}
	s := openTest(t, dir, Options{ReadOnly: true, AllowCorrupt: true})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Verify(ctx, func(Problem) {})
	if d := time.Since(start); d > 1100*time.Millisecond || !errors.Is(err, context.Canceled) {
		t.Errorf("verify returned %v after %v, want context.Canceled within a second", err, d)
	}
}

// TestPutRefusesInvalidUTF8 stores a response that is JSON but not UTF-8:
// refused, so that every stored exchange dumps to a line Load reads.
func TestPutRefusesInvalidUTF8(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	x := &Exchange{
		Request:  []byte(`{"provider":"p","endpoint":"e","body":{"model":"m"}}`),
		Response: []byte("{\"text\":\"caf\xe9\"}"),
		Meta:     Meta{Source: SourceImport},
	}
	if _, err := s.Put(x); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("put: %v, want a refusal", err)
	}
	if keys, _ := s.Keys(); len(keys) != 0 {
		t.Errorf("%d exchanges stored", len(keys))
	}
}

// TestLoadCountsStoredOnly loads into a store whose tmp folder has become
// a file: the load fails and reports no exchange added.
func TestLoadCountsStoredOnly(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	os.RemoveAll(filepath.Join(dir, tmpDir))
	os.WriteFile(filepath.Join(dir, tmpDir), []byte("not a folder"), 0o644)
	if err := s.CheckWritable(); err == nil {
		t.Error("CheckWritable passed")
	}
	st, err := s.Load(bytes.NewReader(synthLines(t, 3, 1)), LoadOptions{})
	if err == nil || st.Added != 0 {
		t.Errorf("load: %+v, %v; want an error and nothing added", st, err)
	}
}

// TestBogusRecordsPack plants a well-formed pack of records whose objects
// no pack holds (what a bomb of many small records looks like once its
// index is valid): the store is refused as corrupt, naming the pack,
// rather than opened with exchanges that cannot be read.
func TestBogusRecordsPack(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	if _, err := s.Load(bytes.NewReader(synthLines(t, 3, 5)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ix := &packIndex{}
	for i := range 100 {
		ix.recs = append(ix.recs, recEntry{key: Key{byte(i), 1}, resp: Digest{byte(i), 2}, meta: []byte(`{"provider":"p","model":"m","source":"sim"}`)})
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	p := plantPack(t, dir, packOf(enc.EncodeAll(ix.marshal(), nil)))
	_, err := Open(dir, Options{ReadOnly: true})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != filepath.ToSlash(p[len(dir)+1:]) || !strings.Contains(ce.Msg, "in no pack") {
		t.Fatalf("open: %v, want a *CorruptError naming %s", err, p)
	}
}

// TestObjectLengthClaim plants a pack whose index claims 256 MiB for each
// of its small objects: reading them allocates in proportion to the
// objects' real size, and the claim is reported as corruption.
func TestObjectLengthClaim(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{PackFormat: 1})
	x := &Exchange{Request: []byte(`{"provider":"p","endpoint":"e","body":{"model":"m"}}`), Response: []byte(`{"text":"hello"}`), Meta: Meta{Source: SourceImport}}
	k, err := s.Put(x)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	p := packFiles(t, dir)[0]
	b, _ := os.ReadFile(p)
	off := int64(binary.LittleEndian.Uint64(b[len(b)-trailerLen:]))
	r := openTest(t, dir, Options{ReadOnly: true})
	ix, err := r.readPackIndex(bytes.NewReader(b), int64(len(b)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.objs {
		ix.objs[i].rawLen = DefaultMaxObjectBytes
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	nb := append(bytes.Clone(b[:off]), enc.EncodeAll(ix.marshal(), nil)...)
	nb = binary.LittleEndian.AppendUint64(nb, uint64(off))
	nb = append(nb, packEndMagic...)
	os.Remove(p)
	plantPack(t, dir, nb)
	s2 := openTest(t, dir, Options{ReadOnly: true})
	var got error
	n := allocated(func() { _, got = s2.Get(k) })
	if !errors.Is(got, ErrCorrupt) {
		t.Errorf("get: %v, want a corruption", got)
	}
	if n > 16<<20 {
		t.Errorf("reading two small objects allocated %d MiB", n>>20)
	}
}
