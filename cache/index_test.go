package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

var testMetaDec, _ = zstd.NewReader(nil)

// indexBytesBound is the most the in-memory index may grow per exchange
// in TestIndexMemoryPerExchange: generous against the about 140 bytes it
// takes (docs/cache.md), far below the 810 of the maps it replaced.
const indexBytesBound = 300

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
		if (i+1)%(n/10) == 0 {
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

// TestIndexMemoryPerExchange fails when the memory an opened store holds
// grows by more than indexBytesBound per exchange: the live heap after
// Open of a store of n exchanges and of one of 4n, in both pack formats.
func TestIndexMemoryPerExchange(t *testing.T) {
	const n = 4000
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) {
			small, large := buildStore(t, format, n), buildStore(t, format, 4*n)
			hs, hl := heapOfOpen(t, small), heapOfOpen(t, large)
			per := float64(hl-hs) / (3 * n)
			t.Logf("live heap after Open: %d bytes for %d exchanges, %d for %d: %.0f bytes per exchange", hs, n, hl, 4*n, per)
			if per > indexBytesBound {
				t.Errorf("the index grows by %.0f bytes per exchange, more than %d", per, indexBytesBound)
			}
		})
	}
}

// TestSortedRefs checks the sorted arrays against a plain filter of
// every entry added: after each batch of runs (some entries then dead),
// every name finds exactly its live entries, whatever was merged into
// the base.
func TestSortedRefs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	type ent struct {
		name [32]byte
		pack int
	}
	name := func(e *ent) *[32]byte { return &e.name }
	deadPack := map[int]bool{}
	live := func(e *ent) bool { return !deadPack[e.pack] }
	var x sortedRefs[ent]
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
			run[i] = ent{names[r.IntN(len(names))], pack}
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
		for _, n := range names[:20] {
			base, tail := x.find(&n, name)
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
	if len(x.base) == 0 {
		t.Fatal("nothing was merged into the base")
	}
}

// TestMetaArena checks that every meta packed into groups reads back as
// it was, compressed or not.
func TestMetaArena(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, metaGroup - 1, metaGroup, metaGroup + 1, 5*metaGroup + 7} {
		metas := make([][]byte, n)
		for i := range metas {
			switch i % 3 {
			case 0:
				metas[i] = []byte(fmt.Sprintf(`{"provider":"sim","input_tokens":%d,"source":"sim"}`, r.IntN(10000)))
			case 1:
				metas[i] = nil // an empty meta
			default:
				b := make([]byte, r.IntN(300))
				for j := range b {
					b[j] = byte(r.Uint32())
				}
				metas[i] = b
			}
		}
		for _, compress := range []func([]byte) []byte{compressMetas, func(b []byte) []byte { return bytes.Repeat(b, 2) }} {
			a := packMetas(metas, compress)
			for i, want := range metas {
				g := i / metaGroup
				b, compressed := a.group(g)
				dec := b
				if compressed {
					var err error
					if dec, err = testMetaDec.DecodeAll(b, nil); err != nil {
						t.Fatal(err)
					}
				}
				got, err := metaIn(dec, i%metaGroup, min(metaGroup, n-g*metaGroup))
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%d metas: meta %d: got %q, %v; want %q", n, i, got, err, want)
				}
			}
		}
	}
}
