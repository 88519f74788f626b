package cache

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/klauspost/compress/zstd"
)

var testMetaDec, _ = zstd.NewReader(nil)

// indexBytesBound is the most the in-memory index may grow per exchange
// in TestIndexMemoryPerExchange: generous against the about 140 bytes it
// takes (docs/cache.md), far below the 810 of the maps it replaced.
const indexBytesBound = 300

// fileIndexBytesBound is the most the index may grow per exchange in
// the heap when its arrays are in the index file (indexfile.go): the
// prefix tables (about two bytes), and per pack and per block what
// stays in memory.
const fileIndexBytesBound = 20

// richExchange is exchange i with a meta as a recording writes one
// (provider, models, tokens, cost, latency, time, attempts).
func richExchange(i int) *Exchange {
	x := smallExchange(i)
	x.Meta = Meta{Provider: "openai", Model: "synthetic-judge", ReportedModel: "synthetic-judge-2026-01-05",
		InputTokens: 1000 + i%4000, OutputTokens: 10 + i%300, CostUSD: float64(i%977) / 1e5, LatencyMS: int64(200 + i%1500),
		RecordedAt: fmt.Sprintf("2026-01-%02dT%02d:%02d:00Z", 1+i%28, i%24, i%60), Attempts: 1 + i%3, Source: SourceAPI}
	return x
}

// buildStore writes n rich exchanges into a new store of pack format
// format, in packs of about a tenth of them, and returns its folder.
func buildStore(t *testing.T, format, n int) string {
	t.Helper()
	return buildPacks(t, format, n, n/10)
}

// heapOfOpen returns the live heap an opened store of dir holds.
func heapOfOpen(t *testing.T, dir string) int64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got, err := s.Stats(); err != nil || got.Exchanges == 0 {
		t.Fatalf("stats %+v, %v", got, err)
	}
	runtime.KeepAlive(s)
	s.Close()
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// buildPacks writes n rich exchanges into a new store of pack format
// format, in packs of per exchanges, and returns its folder.
func buildPacks(t *testing.T, format, n, per int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "c")
	s, err := Open(dir, Options{PackFormat: format, NoCompact: true})
	if err != nil {
		t.Fatal(err)
	}
	b := s.NewBatch()
	for i := range n {
		if _, _, err := b.Add(richExchange(i)); err != nil {
			t.Fatal(err)
		}
		if (i+1)%per == 0 {
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// peakOfOpen returns the most live heap Open of dir reached, beyond
// what was live before: the garbage collector runs after every few
// percent of growth, and a sampler keeps the largest live heap a
// collection found.
func peakOfOpen(t *testing.T, dir string) int64 {
	t.Helper()
	defer debug.SetGCPercent(debug.SetGCPercent(2))
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	before := int64(live[0].Value.Uint64())
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			if v := int64(s[0].Value.Uint64()); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Microsecond):
			}
		}
	}()
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	close(stop)
	<-done
	s.Close()
	return peak.Load() - before
}

// TestOpenPeakMemory fails when the most memory Open of a store in the
// index file takes on its way grows by more than openPeakBound per
// exchange: Open of a store of n exchanges and of one of 4n, in packs of
// the same size, in both pack formats. Open reads a few packs ahead and
// adds them openBatch records at a time, each batch's arrays then moved
// to the index file. It measured 30 to 70 bytes alone and up to 125
// beside the other packages' tests, mostly the sorted arrays' tails (up
// to an eighth of their bases) and the noise of the measure; adding
// every pack at once, as Open did before, grows by 290 to 370.
func TestOpenPeakMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds stores of 24,000 exchanges")
	}
	const n, per, openPeakBound = 6000, 500, 150
	defer func(b, s int64, o int) { rawMetaBytes, spillIndexBytes, openBatch = b, s, o }(rawMetaBytes, spillIndexBytes, openBatch)
	rawMetaBytes, spillIndexBytes, openBatch = 0, 0, 1000
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) {
			small, large := buildPacks(t, format, n, per), buildPacks(t, format, 4*n, per)
			// the least of five Opens: a collection may find some
			// garbage of the runtime's or of the test's live
			ps, pl := int64(math.MaxInt64), int64(math.MaxInt64)
			for range 5 {
				ps, pl = min(ps, peakOfOpen(t, small)), min(pl, peakOfOpen(t, large))
			}
			grow := float64(pl-ps) / (3 * n)
			t.Logf("peak live heap of Open: %d bytes for %d exchanges, %d for %d: %.0f bytes per exchange", ps, n, pl, 4*n, grow)
			if grow > openPeakBound {
				t.Errorf("the peak of Open grows by %.0f bytes per exchange, more than %d", grow, openPeakBound)
			}
		})
	}
}

// TestIndexMemoryPerExchange fails when the memory an opened store holds
// grows by more than indexBytesBound per exchange: the live heap after
// Open of a store of n exchanges and of one of 4n, in both pack formats.
func TestIndexMemoryPerExchange(t *testing.T) {
	const n = 4000
	// The metas a store keeps uncompressed are bounded apart, by
	// rawMetaBytes: measured here without them.
	defer func(b, s int64) { rawMetaBytes, spillIndexBytes = b, s }(rawMetaBytes, spillIndexBytes)
	rawMetaBytes = 0
	for _, format := range []int{1, 2} {
		small, large := buildStore(t, format, n), buildStore(t, format, 4*n)
		for _, tt := range []struct {
			where string
			spill int64
			bound float64
		}{
			{"in memory", 1 << 62, indexBytesBound},
			{"in the index file", 0, fileIndexBytesBound},
		} {
			t.Run(fmt.Sprintf("format%d/%s", format, tt.where), func(t *testing.T) {
				spillIndexBytes = tt.spill
				hs, hl := heapOfOpen(t, small), heapOfOpen(t, large)
				per := float64(hl-hs) / (3 * n)
				t.Logf("live heap after Open: %d bytes for %d exchanges, %d for %d: %.0f bytes per exchange", hs, n, hl, 4*n, per)
				if per > tt.bound {
					t.Errorf("the index grows by %.0f bytes per exchange, more than %.0f", per, tt.bound)
				}
			})
		}
	}
}

// TestSortedRefs checks the sorted arrays against a plain filter of
// every entry added: after each batch of runs (some entries then dead),
// every name finds exactly its live entries, whatever was merged into
// the base, in memory or in an index file. One name takes about a
// quarter of the entries, so that its run spans many of the file's
// reads.
func TestSortedRefs(t *testing.T) {
	type ent struct {
		name [32]byte
		pack int
	}
	name := func(e *ent) [32]byte { return e.name }
	defer func(n int) { mergeChunk = n }(mergeChunk)
	for _, tt := range []struct {
		inFile bool
		chunk  int // entries a merge reads or writes at once
	}{{false, 4096}, {true, 4096}, {true, 7}} {
		inFile := tt.inFile
		mergeChunk = tt.chunk
		t.Run(fmt.Sprintf("file=%v/chunk=%d", inFile, tt.chunk), func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			deadPack := map[int]bool{}
			live := func(e *ent) bool { return !deadPack[e.pack] }
			var x sortedRefs[ent]
			if inFile {
				f, err := newIndexFile()
				if err != nil {
					t.Fatal(err)
				}
				defer f.close()
				x.file = f
			}
			var all []ent
			names := make([][32]byte, 300) // few names: many entries share one
			for i := range names {
				for j := range names[i] {
					names[i][j] = byte(r.Uint32())
				}
			}
			for pack := range 200 {
				run := make([]ent, 1+r.IntN(40))
				for i := range run {
					n := names[r.IntN(len(names))]
					if r.IntN(4) == 0 {
						n = names[0]
					}
					run[i] = ent{n, pack}
				}
				slices.SortFunc(run, func(a, b ent) int { return bytes.Compare(a.name[:], b.name[:]) })
				x.add([][]ent{run}, name, live)
				all = append(all, run...)
				if r.IntN(5) == 0 {
					p := r.IntN(pack + 1)
					if !deadPack[p] {
						deadPack[p] = true
						for _, e := range all {
							if e.pack == p {
								x.dead++
							}
						}
					}
				}
				var buf [spanRead]ent
				for _, n := range names[:20] {
					base, tail := x.find(&n, name, buf[:])
					var got, want []ent
					for _, e := range slices.Concat(base, tail) {
						if live(&e) {
							got = append(got, e)
						}
					}
					for _, e := range all {
						if e.name == n && live(&e) {
							want = append(want, e)
						}
					}
					cmpEnt := func(a, b ent) int { return a.pack - b.pack }
					slices.SortFunc(got, cmpEnt)
					slices.SortFunc(want, cmpEnt)
					if !slices.Equal(got, want) {
						t.Fatalf("after pack %d: %d entries found, want %d", pack, len(got), len(want))
					}
				}
			}
			if x.base.len() == 0 {
				t.Fatal("nothing was merged into the base")
			}
			// Every live entry, in name order.
			var got []ent
			x.each(name, func(e *ent) {
				if live(e) {
					got = append(got, *e)
				}
			})
			var want []ent
			for _, e := range all {
				if live(&e) {
					want = append(want, e)
				}
			}
			byNamePack := func(a, b ent) int {
				return cmp.Or(bytes.Compare(a.name[:], b.name[:]), a.pack-b.pack)
			}
			if !slices.IsSortedFunc(got, func(a, b ent) int { return bytes.Compare(a.name[:], b.name[:]) }) {
				t.Fatal("each: not in name order")
			}
			slices.SortStableFunc(got, byNamePack)
			slices.SortFunc(want, byNamePack)
			if !slices.Equal(got, want) {
				t.Fatalf("each: %d live entries, want %d", len(got), len(want))
			}
			if inFile != (x.base.f != nil) {
				t.Fatalf("the base in the index file: %v, want %v", x.base.f != nil, inFile)
			}
			// The bases merged away are freed: the file takes about the
			// last one, where the system frees a file's blocks (its 200
			// runs wrote several times as much).
			if inFile {
				live := int64(x.base.len() * sizeOf[ent]())
				if got := diskBytes(x.file.f); got > 2*live+64<<10 {
					t.Errorf("the index file takes %d bytes on disk for a base of %d (written: %d)", got, live, x.file.end.Load())
				}
			}
		})
	}
}

// TestMetaArena checks that every meta packed into groups reads back as
// it was, compressed or not.
func TestMetaArena(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, metaGroup - 1, metaGroup, metaGroup + 1, 5*metaGroup + 7, 200} {
		metas := make([][]byte, n)
		for i := range metas {
			switch i % 3 {
			case 0:
				metas[i] = []byte(fmt.Sprintf(`{"provider":"sim","input_tokens":%d,"source":"sim"}`, r.IntN(10000)))
			case 1:
				metas[i] = nil // an empty meta
			default:
				b := make([]byte, r.IntN(300)+r.IntN(2)*r.IntN(MaxMetaBytes))
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				metas[i] = b
			}
		}
		for _, compress := range []func([]byte) []byte{compressMetas, nil, func(b []byte) []byte { return bytes.Repeat(b, 2) }} {
			a := packMetas(metas, compress)
			if compress == nil && len(a.blob.mem) != cap(a.blob.mem) {
				t.Fatalf("%d metas: a blob of %d bytes holds %d", n, len(a.blob.mem), cap(a.blob.mem))
			}
			for i, want := range metas {
				g, first, count := a.groupOf(i, n)
				b, compressed := a.group(g)
				if compressed && compress == nil {
					t.Fatalf("%d metas: group %d compressed without a compressor", n, g)
				}
				dec := b
				if compressed {
					var err error
					if dec, err = testMetaDec.DecodeAll(b, nil); err != nil {
						t.Fatal(err)
					}
				}
				if len(dec) > maxMetaGroupBytes {
					t.Fatalf("a group of %d bytes, more than %d", len(dec), maxMetaGroupBytes)
				}
				got, err := metaIn(dec, i-first, count)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d metas: meta %d: got %q, %v; want %q", n, i, got, err, want)
				}
			}
		}
	}
}

// TestMetaSlotBudget: whatever groups are kept and in which slots, the
// decoded groups the slots hold never take more than metaSlotBytes plus
// the group just kept, and the store's count is their exact size; a
// group kept again in its own slot is counted once.
func TestMetaSlotBudget(t *testing.T) {
	var s Store
	r := rand.New(rand.NewPCG(5, 6))
	p := &pack{}
	held := func() (n int64) {
		for i := range s.metaSlots {
			if ms := s.metaSlots[i].Load(); ms != nil {
				n += int64(cap(ms.dec))
			}
		}
		return n
	}
	for i := range 5000 {
		size := 1 + r.IntN(4*maxMetaGroupBytes) // up to 4 times a group's bound, to reach the budget in few slots
		at := uint(r.IntN(metaSlots))
		if i%7 == 0 {
			at = 0 // the same slot again
		}
		s.keepMetaGroup(at, &metaSlot{p, i, make([]byte, size)})
		got := held()
		if got != s.metaSlotBytes.Load() {
			t.Fatalf("after %d groups: slots hold %d bytes, the count says %d", i+1, got, s.metaSlotBytes.Load())
		}
		if got > metaSlotBytes+int64(size) {
			t.Fatalf("after %d groups: slots hold %d bytes, more than %d and the last group's %d", i+1, got, metaSlotBytes, size)
		}
		if ms := s.metaSlots[at].Load(); ms == nil || ms.g != i {
			t.Fatalf("group %d is not in its slot %d", i, at)
		}
	}
	// 5,000 groups of 49 KB on average, most in slots of their own,
	// are more than the budget: it was reached and kept.
	if got := held(); got < metaSlotBytes-4*maxMetaGroupBytes {
		t.Fatalf("slots hold %d bytes, the budget is %d", got, metaSlotBytes)
	}
}

// TestRawMetas: a store opened reads its packs' metas without
// compressing them while they fit in rawMetaBytes, and compresses those
// of packs found once the budget is spent; every meta reads back as it
// was written either way.
func TestRawMetas(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir, Options{NoCompact: true})
	var keys []Key
	put := func(from, to int) { // one pack
		b := w.NewBatch()
		for i := from; i < to; i++ {
			k, _, err := b.Add(testExchange(i, fmt.Sprintf(`{"answer":%d}`, i)))
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	put(0, 200)
	r := openTest(t, dir, Options{ReadOnly: true})
	r.rawMetas = rawMetaBytes - 1 // spent: what is found from now on is compressed
	put(200, 400)
	if err := r.refresh(); err != nil {
		t.Fatal(err)
	}
	compressed := map[bool]int{}
	for _, p := range r.packs {
		for g := range p.mem.metas.ends {
			_, c := p.mem.metas.group(g)
			compressed[c]++
		}
	}
	// Two packs of 200 records, 7 groups each (metaGroup): the first
	// pack's raw, the second's compressed.
	if compressed[true] != 7 || compressed[false] != 7 {
		t.Fatalf("groups compressed: %v", compressed)
	}
	for _, k := range keys {
		m, err := r.GetMeta(k)
		if err != nil || m.Source != SourceSim || m.CostUSD != 0.5 {
			t.Fatalf("%s: %+v, %v", k.Str(), m, err)
		}
	}
}

// TestWritersDisagree: two writers store the same request with
// different responses, each in its own pack, and a third store sees
// both records. Every store resolves them alike, as before the index
// moved to sorted arrays: in format 1 the record with the smaller
// response digest wins (the digests computed here with sha256), in
// format 2, where each response is named by its place, the record of
// the pack with the smaller name (its local id starts with the pack's
// name). Stats counts one exchange and one conflict, and gc keeps the
// winner alone.
func TestWritersDisagree(t *testing.T) {
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) {
			dir := t.TempDir()
			resps := []string{`{"answer":"first"}`, `{"answer":"second"}`}
			// Both open before either writes: neither sees the other's.
			ws := []*Store{openTest(t, dir, Options{PackFormat: format, NoCompact: true}), openTest(t, dir, Options{PackFormat: format, NoCompact: true})}
			for i, r := range resps {
				if _, err := ws[i].Put(testExchange(1, r)); err != nil {
					t.Fatal(err)
				}
				ws[i].Close()
			}
			var want string
			if format == 1 {
				a, b := sha256.Sum256([]byte(resps[0])), sha256.Sum256([]byte(resps[1]))
				want = resps[0]
				if bytes.Compare(b[:], a[:]) < 0 {
					want = resps[1]
				}
			} else {
				names := packNames(t, dir)
				if len(names) != 2 {
					t.Fatalf("%d packs, want 2", len(names))
				}
				// The pack of the smaller name holds the winner.
				want = responseInPack(t, dir, names[0])
			}
			k, _ := testKey(t, testExchange(1, ""))
			for range 2 { // two processes resolve alike
				s := openTest(t, dir, Options{ReadOnly: true})
				x, err := s.Get(k)
				if err != nil || string(x.Response) != want {
					t.Fatalf("got %s, %v; want %s", x.Response, err, want)
				}
				st, err := s.Stats()
				if err != nil || st.Exchanges != 1 || st.Conflicts != 1 {
					t.Fatalf("stats %+v, %v; want 1 exchange, 1 conflict", st, err)
				}
				s.Close()
			}
			s := openTest(t, dir, Options{PackFormat: format})
			if _, err := s.GC(); err != nil {
				t.Fatal(err)
			}
			st, err := s.Stats()
			if err != nil || st.Exchanges != 1 || st.Conflicts != 0 || st.Packs != 1 {
				t.Fatalf("after gc: stats %+v, %v; want 1 exchange in 1 pack, no conflict", st, err)
			}
			if x, err := s.Get(k); err != nil || string(x.Response) != want {
				t.Fatalf("after gc: got %s, %v; want %s", x.Response, err, want)
			}
		})
	}
}

// packNames returns the names of the pack files of the store in dir,
// sorted.
func packNames(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, packsDir, "*", "*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".pack"))
	}
	slices.Sort(names)
	return names
}

// responseInPack returns the response of the only record of pack name,
// read from that pack's index and blocks alone.
func responseInPack(t *testing.T, dir, name string) string {
	t.Helper()
	s := openTest(t, dir, Options{ReadOnly: true})
	p := &pack{name: name, path: s.packPath(name)}
	ix, _, err := s.loadPack(p.path, nil)
	if err != nil || len(ix.recs) != 1 || ix.v2 == nil || ix.v2.respAt[0] == 0 {
		t.Fatalf("pack %s: %v", name, err)
	}
	raw, err := s.readAt(nil, objLoc{p, ix.objs[ix.v2.respAt[0]-1].where}, Digest{})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// testKey returns the key of x's request.
func testKey(t *testing.T, x *Exchange) (Key, error) {
	t.Helper()
	k, err := reqkey.Of(x.Request)
	if err != nil {
		t.Fatal(err)
	}
	return k, nil
}

// checkPackMem checks the in-memory index of an accepted pack index
// against the index itself: every object's location, every record's key,
// meta and objects, in key order.
func checkPackMem(t *testing.T, ix *packIndex) {
	t.Helper()
	m, keys, err := buildPackMem(ix, compressMetas)
	if err != nil {
		return // an object 4 GiB or more into its block
	}
	if m.nobjs() != len(ix.objs) || len(keys) != len(ix.recs) || len(m.recs) != len(ix.recs) {
		t.Fatalf("%d objects, %d records; want %d, %d", m.nobjs(), len(keys), len(ix.objs), len(ix.recs))
	}
	same := func(a, b where) bool {
		return a.off == b.off && a.clen == b.clen && a.v2 == b.v2 && a.blockRaw == b.blockRaw && a.at == b.at && a.slen == b.slen && a.local == b.local &&
			(a.rawLen == b.rawLen || a.rawLen >= 1<<32-1 && b.rawLen == 1<<62) &&
			(a.blockSum == nil) == (b.blockSum == nil) && (a.blockSum == nil || *a.blockSum == *b.blockSum)
	}
	pos := map[*where]int{}
	for i := range ix.objs {
		pos[&ix.objs[i].where] = i
	}
	for i, o := range ix.objs {
		w := m.where(i)
		if !same(o.where, w) || (o.base == nil) != (w.base == nil) || o.base != nil && !same(*o.base, *w.base) {
			t.Fatalf("object %d: %+v in memory, %+v in the index", i, w, o.where)
		}
		if d, ok := m.objDigest("", i); ok && !o.local && d != o.digest {
			t.Fatalf("object %d: digest %s in memory, %s in the index", i, d.Str(), o.digest.Str())
		}
	}
	byKey := map[Key]int{}
	for i, r := range ix.recs {
		byKey[r.key] = i
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for i, k := range keys {
		if i > 0 && bytes.Compare(keys[i-1][:], k[:]) >= 0 {
			t.Fatalf("keys out of order at %d", i)
		}
		j, ok := byKey[k]
		if !ok {
			t.Fatalf("key %s not in the index", k.Str())
		}
		g, first, count := m.metas.groupOf(i, len(keys))
		b, compressed := m.metas.group(g)
		if compressed {
			if b, err = dec.DecodeAll(b, nil); err != nil {
				t.Fatal(err)
			}
		}
		meta, err := metaIn(b, i-first, count)
		if err != nil || !bytes.Equal(meta, ix.recs[j].meta) {
			t.Fatalf("record %s: meta %q, %v; want %q", k.Str(), meta, err, ix.recs[j].meta)
		}
		ri := m.recs[i]
		if ix.v2 != nil && (int(ri.req) != ix.v2.reqAt[j]-1 || int(ri.resp) != ix.v2.respAt[j]-1) {
			t.Fatalf("record %s: objects %d, %d; want %d, %d", k.Str(), ri.req, ri.resp, ix.v2.reqAt[j]-1, ix.v2.respAt[j]-1)
		}
		if ix.v2 == nil && ri.req >= 0 && ix.objs[ri.req].digest != Digest(k) {
			t.Fatalf("record %s: request object %d is %s", k.Str(), ri.req, ix.objs[ri.req].digest.Str())
		}
		if ix.v2 == nil && ri.resp >= 0 && ix.objs[ri.resp].digest != ix.recs[j].resp {
			t.Fatalf("record %s: response object %d is %s", k.Str(), ri.resp, ix.objs[ri.resp].digest.Str())
		}
	}
}

// TestIndexFileMidway writes a store past spillIndexBytes batch by batch,
// so that its index's arrays start going to the index file while it is
// open (the packs before stay in memory), automatic compaction merging
// packs on the way: every exchange written reads back as written before
// and after, from the open store and from the store opened again, with
// the same statistics, in both pack formats.
func TestIndexFileMidway(t *testing.T) {
	defer func(b int64) { spillIndexBytes = b }(spillIndexBytes)
	spillIndexBytes = 32 << 10
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "c")
			s := openTest(t, dir, Options{PackFormat: format})
			var keys []Key
			check := func(s *Store, what string) {
				t.Helper()
				for i, k := range keys {
					x, err := s.Get(k)
					if err != nil {
						t.Fatalf("%s: exchange %d: %v", what, i, err)
					}
					want := richExchange(i)
					if string(x.Response) != string(want.Response) || x.Meta != want.Meta {
						t.Fatalf("%s: exchange %d reads back as %s, %+v", what, i, x.Response, x.Meta)
					}
				}
			}
			inFile := func(s *Store) bool {
				s.mu.RLock()
				defer s.mu.RUnlock()
				return s.ixFile != nil
			}
			wasInMemory := false
			for i := range 3000 {
				if i%100 == 0 {
					wasInMemory = wasInMemory || !inFile(s)
				}
				k, err := s.Put(richExchange(i))
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
			if !wasInMemory || !inFile(s) {
				t.Fatalf("the index was in memory: %v; in its file at the end: %v", wasInMemory, inFile(s))
			}
			check(s, "open")
			st, err := s.Stats()
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			again := openTest(t, dir, Options{ReadOnly: true})
			if !inFile(again) {
				t.Fatal("opened again, the index is in memory")
			}
			check(again, "opened again")
			if st2, err := again.Stats(); err != nil || !reflect.DeepEqual(st2, st) {
				t.Fatalf("stats %+v, %v opened again; %+v before", *st2, err, *st)
			}
		})
	}
}
