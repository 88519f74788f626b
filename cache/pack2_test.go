package cache

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/cache/internal/synth"
)

func TestPrefixSuffixLen(t *testing.T) {
	tests := []struct {
		a, b           string
		prefix, suffix int
	}{
		{"", "x", 0, 0},
		{"abc", "abd", 2, 0},
		{"abcdefghij", "abcdefghXj", 8, 1},
		{"abcdefgh12345678Z", "abcdefgh12345678Y", 16, 0},
		{"abcdefghijk", "abcdefghijk", 11, 11},
		{"abcdefghijk", "abcdefghijkLMN", 11, 0},
		{"Xbcdefghij", "abcdefghij", 0, 9},
		{"0123456789abcdefgh", "Z123456789abcdefgh", 0, 17},
		{"zzabcdefghij", "abcdefghij", 0, 10},
	}
	for _, tt := range tests {
		if got := prefixLen([]byte(tt.a), []byte(tt.b)); got != tt.prefix {
			t.Errorf("prefixLen(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.prefix)
		}
		if got := suffixLen([]byte(tt.a), []byte(tt.b)); got != tt.suffix {
			t.Errorf("suffixLen(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.suffix)
		}
	}
}

// TestEncodeDelta checks deltas worked out by hand from encodeDelta's
// rule (uvarint literal length, literals, then uvarint copy length and
// uvarint base offset; a match is at least minMatch bytes).
func TestEncodeDelta(t *testing.T) {
	tests := []struct {
		name, base, target, want string
	}{
		// At 2 the target matches the whole base (20 bytes from 0).
		{"literals around a copy", "0123456789abcdefghij", "XY0123456789abcdefghijZ", "\x02XY\x14\x00\x01Z"},
		// At 0 the table gives the later "12345678" of the base, a
		// match of 8 bytes, too short; at 1 the match runs 19 bytes
		// forwards and one backwards: 20 bytes from 0.
		{"match extended backwards", "12345678ABCDEFGHIJKL12345678tail", "12345678ABCDEFGHIJKL!", "\x00\x14\x00\x01!"},
		{"no match", "abcdefghijklmnopqrstuvwxyz", "0123456789", "\x0a0123456789"},
	}
	for _, tt := range tests {
		base := []byte(tt.base)
		if got := encodeDelta(base, baseTable(base), []byte(tt.target)); string(got) != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestFingerprints checks the rolled scan against fingerprints' rule
// written out position by position: a window of fpWindow bytes at each
// position whose 8 bytes hash (hash8) with the top fpSample bits zero,
// its fingerprint the hash of its four words folded in order.
func TestFingerprints(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(r.IntN(16)) // few values: many sampled positions
	}
	for _, n := range []int{0, 31, 32, 33, 39, 40, 1000, len(data)} {
		b := data[:n]
		var want []uint64
		for i := 0; i+fpWindow <= len(b); i++ {
			if binaryHash(b[i:i+8])>>(64-fpSample) != 0 {
				continue
			}
			h := uint64(0)
			for j := i; j < i+fpWindow; j += 8 {
				h = (h ^ binaryHash(b[j:j+8])) * hashMul
			}
			want = append(want, h)
		}
		got := fingerprints(nil, b)
		if len(got) != len(want) {
			t.Fatalf("%d bytes: %d fingerprints, want %d", n, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%d bytes: fingerprint %d is %x, want %x", n, i, got[i], want[i])
			}
		}
		if n == len(data) && len(want) < 100 {
			t.Fatalf("only %d fingerprints in %d bytes: the test samples too little", len(want), n)
		}
	}
}

// binaryHash is hash8 of the 8 bytes of w, read little-endian byte by
// byte.
func binaryHash(w []byte) uint64 {
	v := uint64(0)
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(w[i])
	}
	return v * hashMul
}

// TestLayoutLargeResponses checks which blocks layoutPack2 marks as
// blocks of a pack of large responses: every block, of requests and of
// responses, of a pack whose responses average largeResp bytes or more,
// and none of another; the pack as one of large responses in the same
// cases; and the sizes of its response blocks, each closed once it holds
// its target, derived by hand below for 100 responses of random bytes
// (no deltas).
func TestLayoutLargeResponses(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	random := func(first byte, n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		b[0] = first
		return b
	}
	repeat := func(n, size int, more ...int) []int {
		return append(slices.Repeat([]int{size}, n), more...)
	}
	for _, tt := range []struct {
		respBytes  int
		large      bool
		respBlocks []int // decoded sizes, in order
	}{
		// 32 KiB blocks: 16 x 2,048 = 32,768 closes one, so 6 of
		// 16 responses and the last 4 (8,192 bytes).
		{largeResp, true, repeat(6, 32768, 8192)},
		// 96 KiB (98,304) blocks: 48 x 2,047 = 98,256 is short of it,
		// 49 x 2,047 = 100,303 closes one, so two of 49 and the last 2
		// (4,094 bytes).
		{largeResp - 1, false, repeat(2, 100303, 4094)},
		// 100 x 600 = 60,000 bytes, under 96 KiB: one block.
		{600, false, []int{60000}},
	} {
		var items []item
		var recs []recEntry
		for range 100 {
			q, a := random('Q', 600), random('R', tt.respBytes)
			k, d := Key(sha256.Sum256(q)), Digest(sha256.Sum256(a))
			items = append(items, item{d: Digest(k), raw: q}, item{d: d, raw: a})
			recs = append(recs, recEntry{key: k, resp: d, meta: []byte(`{}`)})
		}
		var req, resp, largeReqBlocks, largeRespBlocks int
		var mu sync.Mutex // compress is called in parallel
		l := layoutPack2(Digest{}, items, recs, func(b []byte, large bool) []byte {
			mu.Lock()
			defer mu.Unlock()
			isReq := b[0] == 'Q'
			if isReq {
				req++
			} else {
				resp++
			}
			if large && isReq {
				largeReqBlocks++
			}
			if large && !isReq {
				largeRespBlocks++
			}
			return bytes.Clone(b)
		})
		if req == 0 || resp == 0 {
			t.Fatalf("responses of %d bytes: %d request blocks, %d response blocks", tt.respBytes, req, resp)
		}
		if want := map[bool]int{true: req, false: 0}[tt.large]; largeReqBlocks != want {
			t.Errorf("responses of %d bytes: %d of %d request blocks marked large, want %d", tt.respBytes, largeReqBlocks, req, want)
		}
		if want := map[bool]int{true: resp, false: 0}[tt.large]; largeRespBlocks != want {
			t.Errorf("responses of %d bytes: %d of %d response blocks marked large, want %d", tt.respBytes, largeRespBlocks, resp, want)
		}
		var respSizes []int
		for _, f := range l.frames { // compress returned each block as it is
			if f[0] == 'R' {
				respSizes = append(respSizes, len(f))
			}
		}
		if !slices.Equal(respSizes, tt.respBlocks) {
			t.Errorf("responses of %d bytes: response blocks of %v bytes, want %v", tt.respBytes, respSizes, tt.respBlocks)
		}
		if l.large != tt.large { // the pack's index is then encoded at largeIndexLevel
			t.Errorf("responses of %d bytes: pack marked large: %v, want %v", tt.respBytes, l.large, tt.large)
		}
	}
}

// BenchmarkDeltaSearch runs the delta search of a pack over the requests
// of synthetic judge traffic (each report's requests deltas against its
// first), as a load's layoutPack2 does.
func BenchmarkDeltaSearch(b *testing.B) {
	var objs [][]byte
	size := 0
	for _, x := range judgeExchanges(b, 300) {
		objs, size = append(objs, x), size+len(x)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		ds := newDeltaSearch()
		for p, raw := range objs {
			if _, delta, fps := ds.find(raw); delta == nil {
				ds.add(p, raw, fps)
			}
		}
	}
}

// judgeExchanges returns the canonical requests of n synthetic judge
// exchanges.
func judgeExchanges(b *testing.B, n int) [][]byte {
	j := synth.NewJudge(1)
	var out [][]byte
	for range n {
		x, canon, err := parseLine(j.Next())
		if err != nil || x == nil {
			b.Fatal(err)
		}
		out = append(out, canon)
	}
	return out
}
