package hisrubric

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
)

// truthInputs returns the inputs of n companies and Default()'s 247
// items, every file in a shuffled order, and the truth written of each
// company and item.
func truthInputs(t testing.TB, n int, seed uint64) (fstest.MapFS, map[[2]string]Truth) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	lines := func(xs []any) []byte {
		rng.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
		var b []byte
		for _, x := range xs {
			j, err := json.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, j...), '\n')
		}
		return b
	}
	whole := func(x any) []byte {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var items, cs, truth []any
	want := map[[2]string]Truth{}
	for _, it := range DefaultItems() {
		items = append(items, it)
	}
	for k := range n {
		c := Company{ID: fmt.Sprintf("C%04d", k), Name: fmt.Sprintf("Company %d", k), Market: "US", Language: "en", FY: 2024, CY: 2024, ValuationDate: "2025-09-20"}
		cs = append(cs, c)
		for i, it := range DefaultItems() {
			tr := Truth{Company: c.ID, Item: it.ID, Answer: fmt.Sprintf("answer %d of %s: %s", i, c.ID, strings.Repeat("x", (i*7+k)%50))}
			if it.FreeRow() {
				tr.Row = fmt.Sprintf("Member %d of %s", i, c.ID)
			}
			truth = append(truth, tr)
			want[[2]string{c.ID, it.ID}] = tr
		}
	}
	fsys := fstest.MapFS{ConfigFile: {Data: whole(fixtureConfig())}, StructureFile: {Data: whole(Default())},
		ItemsFile: {Data: lines(items)}, CompaniesFile: {Data: lines(cs)}, TruthFile: {Data: lines(truth)}}
	return fsys, want
}

// TestTruth checks that Load puts items and companies in order of id
// whatever the order of the files, and that Truth answers for each the
// truth written of it.
func TestTruth(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			fsys, want := truthInputs(t, 5, seed)
			in, err := Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(in.Items); i++ {
				if in.Items[i-1].ID >= in.Items[i].ID {
					t.Fatalf("items %s, %s out of order", in.Items[i-1].ID, in.Items[i].ID)
				}
			}
			for ci := 1; ci < len(in.Companies); ci++ {
				if in.Companies[ci-1].ID >= in.Companies[ci].ID {
					t.Fatalf("companies %s, %s out of order", in.Companies[ci-1].ID, in.Companies[ci].ID)
				}
			}
			n := 0
			for ci := range in.Companies {
				for i := range in.Items {
					k := [2]string{in.Companies[ci].ID, in.Items[i].ID}
					if got := in.Truth(ci, i); got != want[k] {
						t.Errorf("Truth(%d, %d) = %+v, want %+v", ci, i, got, want[k])
					}
					n++
				}
			}
			if n != len(want) {
				t.Errorf("%d truths, want %d", n, len(want))
			}
		})
	}
}

// TestTruthGrowth checks what loaded inputs hold per further truth: from
// 16 to 128 companies (3,952 to 31,616 truths), the live heap grows by
// no more than the truths' texts and 16 bytes a truth, the texts' own
// size beside an index entry, a company's record shared by 247 truths
// and the heap's slack. Maps of strings held 300 bytes a truth more.
func TestTruthGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("loads 35,000 truths")
	}
	heldBy := func(n int) (heap, texts, truths int) {
		fsys, want := truthInputs(t, n, 1)
		for _, tr := range want {
			texts += len(tr.Answer) + len(tr.Row)
		}
		before := liveHeap()
		in, err := Load(fsys)
		if err != nil {
			t.Fatal(err)
		}
		after := liveHeap()
		runtime.KeepAlive(in)
		runtime.KeepAlive(fsys)
		return after - before, texts, len(want)
	}
	h1, x1, n1 := heldBy(16)
	h8, x8, n8 := heldBy(128)
	per := float64(h8-h1-(x8-x1)) / float64(n8-n1)
	t.Logf("inputs hold %d bytes for %d truths (texts %d), %d for %d (texts %d): %.1f bytes a further truth beyond its texts", h1, n1, x1, h8, n8, x8, per)
	if per > 16 {
		t.Errorf("the inputs hold %.1f bytes a further truth beyond its texts, more than 16", per)
	}
}

// liveHeap is the bytes of live heap objects after a collection.
func liveHeap() int {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int(m.HeapAlloc)
}
