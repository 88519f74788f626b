package cache

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// TestGCAcrossPacks gc's a store whose live contents fill many new packs:
// every exchange must come out as it went in, the store must verify, and
// the records must be spread over the new packs with their objects
// instead of all written into the last one, so that gc never holds every
// record at once.
func TestGCAcrossPacks(t *testing.T) {
	defer func(v int) { packTarget = v }(packTarget)
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format%d", format), func(t *testing.T) {
			const n = 2000
			dir := buildStore(t, format, n) // ten small packs
			// A second writer's copies of the first 50 exchanges: records
			// and objects gc drops.
			w := openTest(t, dir, Options{PackFormat: format, NoCompact: true})
			b := w.NewBatch()
			for i := range 50 {
				if _, _, err := b.Add(richExchange(i)); err != nil {
					t.Fatal(err)
				}
			}
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
			var before bytes.Buffer
			if err := w.Dump(&before); err != nil {
				t.Fatal(err)
			}
			packTarget = 32 << 10 // many new packs
			st, err := w.GC()
			if err != nil {
				t.Fatal(err)
			}
			if st.PacksWritten < 10 {
				t.Fatalf("gc wrote %d packs, want many: %+v", st.PacksWritten, st)
			}
			s := openTest(t, dir, Options{})
			var after bytes.Buffer
			if err := s.Dump(&after); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(before.Bytes(), after.Bytes()) {
				t.Fatal("gc changed the exchanges")
			}
			if n, _ := s.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 {
				t.Fatal("verify after gc")
			}
			stats, err := s.Stats()
			if err != nil || stats.Exchanges != n || stats.Conflicts != 0 {
				t.Fatalf("after gc: %+v, %v; want %d exchanges, no conflict", stats, err, n)
			}
			// Records per pack: each pack's share of them, in name order.
			most, with := 0, 0
			for _, name := range packNames(t, dir) {
				ix, _, err := s.loadPack(s.packPath(name), nil)
				if err != nil {
					t.Fatal(err)
				}
				most = max(most, len(ix.recs))
				if len(ix.recs) > 0 {
					with++
				}
			}
			if with < st.PacksWritten/2 || most > n/4 {
				t.Errorf("records in %d of %d packs, at most %d in one: gc gathered them", with, st.PacksWritten, most)
			}
		})
	}
}
