package cache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// putLines stores every line of data with one Put each, one at a time, as
// a recorder does.
func putLines(t testing.TB, s *Store, data []byte) []Key {
	t.Helper()
	var keys []Key
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		x, err := ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		k, err := s.Put(x)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// dumpOf returns the store's dump.
func dumpOf(t *testing.T, s *Store) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.Dump(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// loadedDump is the dump of a fresh store that loaded data in bulk: what
// any way of storing the same exchanges must dump.
func loadedDump(t *testing.T, data []byte) []byte {
	t.Helper()
	ref := openTest(t, t.TempDir(), Options{})
	if _, err := ref.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	return dumpOf(t, ref)
}

// TestGroupCommit: concurrent Puts share packs, and each is durable and
// visible to another process when it returns.
func TestGroupCommit(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoCompact: true})
	other := openTest(t, dir, Options{}) // another process's view
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	var slowest time.Duration
	var mu sync.Mutex
	for i := range n {
		wg.Go(func() {
			start := time.Now()
			k, err := s.Put(testExchange(i, fmt.Sprintf(`{"answer":%d}`, i)))
			d := time.Since(start)
			mu.Lock()
			slowest = max(slowest, d)
			mu.Unlock()
			if err != nil {
				errs[i] = err
				return
			}
			if ok, err := other.Has(k); !ok || err != nil {
				errs[i] = fmt.Errorf("put %d returned, but another store does not have it: %v", i, err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	st, err := openTest(t, dir, Options{}).Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d concurrent puts: %d packs, slowest put %v", n, st.Packs, slowest)
	if st.Exchanges != n {
		t.Fatalf("%d exchanges, want %d", st.Exchanges, n)
	}
	// 64 goroutines start within microseconds; an fsync takes far
	// longer, so Puts that arrive during one must share the next pack.
	if st.Packs >= n {
		t.Errorf("%d packs for %d concurrent puts: no group commit", st.Packs, n)
	}
	// A second Put of a stored exchange, and one of the same key twice
	// at once, store nothing new.
	var wg2 sync.WaitGroup
	for range 4 {
		wg2.Go(func() {
			if _, err := s.Put(testExchange(1000, `{"answer":"same"}`)); err != nil {
				t.Error(err)
			}
		})
	}
	wg2.Wait()
	if _, err := s.Put(testExchange(0, `{"answer":0}`)); err != nil {
		t.Fatal(err)
	}
	if st, _ := openTest(t, dir, Options{}).Stats(); st.Exchanges != n+1 {
		t.Fatalf("%d exchanges, want %d", st.Exchanges, n+1)
	}
}

// TestPutAfterClose: a closed store refuses Puts instead of hanging.
func TestPutAfterClose(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := s.Put(testExchange(1, `{}`)); err == nil {
		t.Fatal("put after close succeeded")
	}
}

// TestCompactOneByOne: a store recorded one exchange at a time is
// compacted as it grows, to few packs, with the same content as a bulk
// load of the same exchanges and no problem.
func TestCompactOneByOne(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 120
	}
	data := synthLines(t, n, 11)
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	putLines(t, s, data)
	if err := s.Close(); err != nil { // waits for compaction
		t.Fatal(err)
	}
	s = verifyClean(t, dir)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// Fewer than compactFanIn small packs per tier remain, whatever
	// the order the background merges ran in.
	t.Logf("%d puts: %d packs", n, st.Packs)
	if bound := len(tierLimits) * (compactFanIn - 1); st.Packs > bound {
		t.Errorf("%d packs after %d puts, want at most %d", st.Packs, n, bound)
	}
	if !bytes.Equal(dumpOf(t, s), loadedDump(t, data)) {
		t.Fatal("compacted store differs from a bulk load of the same exchanges")
	}
	ents, _ := os.ReadDir(filepath.Join(dir, tmpDir))
	if len(ents) != 0 {
		t.Errorf("%d files left in tmp/", len(ents))
	}
}

// TestCompactUnderReader: packs merged away by one process are found
// where they moved by another that had read their indexes.
func TestCompactUnderReader(t *testing.T) {
	data := synthLines(t, 40, 12)
	dir := t.TempDir()
	w := openTest(t, dir, Options{NoCompact: true})
	keys := putLines(t, w, data)
	r := openTest(t, dir, Options{}) // indexes all 40 packs
	if st, _ := r.Stats(); st.Packs != 40 {
		t.Fatalf("%d packs before compaction, want 40", st.Packs)
	}
	n, err := w.Compact()
	if err != nil || n < compactFanIn {
		t.Fatalf("compact merged %d packs: %v", n, err)
	}
	for _, k := range keys {
		if _, err := r.Get(k); err != nil {
			t.Fatalf("get %s after compaction by another store: %v", k.Str(), err)
		}
	}
	if p := r.Problems(); len(p) > 0 {
		t.Fatalf("problems: %v", p)
	}
	if st, _ := openTest(t, dir, Options{}).Stats(); st.Packs >= 40 || st.Exchanges != 40 {
		t.Fatalf("after compaction: %+v", st)
	}
}

// TestCompactLeavesSharedKeys: packs holding a key another pack records
// too (two writers stored the same key) are left for gc, so that stats and
// verify still see what the writers did.
func TestCompactLeavesSharedKeys(t *testing.T) {
	dir := t.TempDir()
	a := openTest(t, dir, Options{NoCompact: true})
	b := openTest(t, dir, Options{NoCompact: true}) // does not see a's packs yet
	for i := range 2 * compactFanIn {
		if _, err := a.Put(testExchange(i, fmt.Sprintf(`{"a":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Put(testExchange(0, `{"b":0}`)); err != nil {
		t.Fatal(err)
	}
	c := openTest(t, dir, Options{})
	if _, err := c.Compact(); err != nil {
		t.Fatal(err)
	}
	st, err := openTest(t, dir, Options{}).Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Conflicts != 1 || st.Exchanges != 2*compactFanIn {
		t.Fatalf("after compaction: %d conflicts, %d exchanges; want 1 and %d", st.Conflicts, st.Exchanges, 2*compactFanIn)
	}
	if st.Packs > 3 {
		t.Errorf("%d packs: the packs without a shared key were not merged", st.Packs)
	}
}

// putEnv makes the test binary a recorder process: it Puts its standard
// input's lines one at a time into the store the variable names.
const putEnv = "FINREPRO_CACHE_TEST_PUT"

func init() {
	dir := os.Getenv(putEnv)
	if dir == "" {
		return
	}
	s, err := Open(dir, Options{})
	if err == nil {
		var data bytes.Buffer
		data.ReadFrom(os.Stdin)
		putLines(failer{}, s, data.Bytes())
		err = s.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// failer is the testing.TB of a helper process: a failure exits.
type failer struct{ testing.TB }

func (failer) Helper() {}
func (failer) Fatal(args ...any) {
	fmt.Fprintln(os.Stderr, args...)
	os.Exit(1)
}

// TestConcurrentRecorders runs recorder processes at once, each storing
// its exchanges one at a time (so each compacts the packs of all), and
// kills one of them midway: the store verifies and holds the union of
// what the others stored and what the killed one stored before it died.
func TestConcurrentRecorders(t *testing.T) {
	n := 240
	if testing.Short() {
		n = 120
	}
	data := synthLines(t, n, 13)
	lines := bytes.SplitAfter(bytes.TrimSpace(data), []byte("\n"))
	q := n / 4
	parts := [][]byte{
		bytes.Join(lines[0:2*q], nil),
		bytes.Join(lines[q:3*q], nil),
		bytes.Join(lines[2*q:4*q], nil),
		bytes.Join(lines[0:4*q], nil), // killed
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for i, p := range parts {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), putEnv+"="+dir)
		cmd.Stdin = bytes.NewReader(p)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if i == len(parts)-1 {
			time.AfterFunc(700*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
		}
		wg.Go(func() {
			if err := cmd.Wait(); err != nil && i != len(parts)-1 {
				errs[i] = fmt.Errorf("recorder %d: %v: %s", i, err, stderr.Bytes())
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := verifyClean(t, dir)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d exchanges in %d packs", st.Exchanges, st.Packs)
	if !bytes.Equal(dumpOf(t, s), loadedDump(t, data)) {
		t.Fatal("the store is not the union of the recorders' exchanges")
	}
	if n, err := s.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 || err != nil {
		t.Fatalf("verify: %d, %v", n, err)
	}
}

// TestCompactListingRace: listings of the packs taken while a merge has
// written its pack but not yet removed the old ones (by this store, or by
// another process that then sees both) lose nothing: every exchange is
// still found, gc keeps them all, and a new store finds them all.
func TestCompactListingRace(t *testing.T) {
	data := synthLines(t, 2*compactFanIn, 14)
	dir := t.TempDir()
	w := openTest(t, dir, Options{NoCompact: true})
	keys := putLines(t, w, data)
	var other *Store
	mergedHook = func() {
		if err := w.refresh(); err != nil { // lists the old packs, still on disk
			t.Error(err)
		}
		other = openTest(t, dir, Options{}) // sees old and new packs
	}
	defer func() { mergedHook = nil }()
	if _, err := w.Compact(); err != nil {
		t.Fatal(err)
	}
	mergedHook = nil
	for _, s := range []*Store{w, other} {
		for _, k := range keys {
			if _, err := s.Get(k); err != nil {
				t.Fatalf("get %s: %v", k.Str(), err)
			}
		}
		if st, err := s.Stats(); err != nil || st.Exchanges != len(keys) {
			t.Fatalf("stats: %+v, %v", st, err)
		}
	}
	for _, s := range []*Store{w, other} {
		if _, err := s.GC(); err != nil {
			t.Fatal(err)
		}
		st, err := openTest(t, dir, Options{}).Stats()
		if err != nil || st.Exchanges != len(keys) {
			t.Fatalf("after gc: %+v, %v", st, err)
		}
	}
	verifyClean(t, dir)
}
