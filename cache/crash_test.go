package cache

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/finrepro/finrepro/internal/trusttest"
)

// helperEnv makes the test binary act as a loader process: it loads its
// standard input into the store named by the variable and exits.
const helperEnv = "FINREPRO_CACHE_TEST_LOAD"

func TestMain(m *testing.M) {
	// Every store of these tests keeps its index's arrays in an index
	// file, however small (indexfile.go): the stores of the other
	// packages' tests, all small, keep theirs in memory. Benchmarks
	// (-test.bench) keep the threshold a user's store has.
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		spillIndexBytes = 0
	}
	if dir := os.Getenv(helperEnv); dir != "" {
		packTarget = 64 << 10 // many packs, so that kills land mid-load
		s, err := Open(dir, Options{})
		if err == nil {
			_, err = s.Load(os.Stdin, LoadOptions{Strict: true})
		}
		if err == nil {
			err = s.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	trusttest.Main(m) // the tests' trust records go to a folder of their own
}

// loader starts a process loading data into dir.
func loader(t *testing.T, dir string, data []byte) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Stdin = bytes.NewReader(data)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func verifyClean(t *testing.T, dir string) *Store {
	t.Helper()
	s := openTest(t, dir, Options{})
	if n, err := s.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 || err != nil {
		t.Fatalf("verify: %d problems, %v", n, err)
	}
	return s
}

// TestKillDuringLoad kills loader processes with SIGKILL at random moments
// and checks that the store always verifies and that a rerun completes.
func TestKillDuringLoad(t *testing.T) {
	trials, n := 12, 400
	if testing.Short() {
		trials, n = 3, 200
	}
	data := synthLines(t, n, 7)
	r := rand.New(rand.NewPCG(7, 7))
	dir := t.TempDir()
	for i := range trials {
		cmd := loader(t, dir, data)
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL) // it may have finished: then nothing happens
		err := cmd.Wait()                   // killed or exited: both are fine here
		s := verifyClean(t, dir)
		st, _ := s.Stats()
		s.Close()
		t.Logf("trial %d: %v, %d exchanges stored", i, err, st.Exchanges)
	}
	cmd := loader(t, dir, data)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	s := verifyClean(t, dir)
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := openTest(t, t.TempDir(), Options{})
	ls, err := want.Load(bytes.NewReader(data), LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Exchanges != ls.Added {
		t.Fatalf("%d exchanges after rerun, want %d", st.Exchanges, ls.Added)
	}
}

// TestConcurrentLoads runs several loader processes at once on
// overlapping inputs: the store ends with exactly the union.
func TestConcurrentLoads(t *testing.T) {
	data := synthLines(t, 300, 8)
	lines := bytes.SplitAfter(bytes.TrimSpace(data), []byte("\n"))
	parts := [][]byte{
		bytes.Join(lines[0:150], nil),
		bytes.Join(lines[100:250], nil),
		bytes.Join(lines[200:300], nil),
		bytes.Join(lines[50:120], nil),
	}
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for i, p := range parts {
		cmd := loader(t, dir, p)
		wg.Go(func() { errs[i] = cmd.Wait() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("loader %d: %v", i, err)
		}
	}
	s := verifyClean(t, dir)
	var got bytes.Buffer
	if err := s.Dump(&got); err != nil {
		t.Fatal(err)
	}
	ref := openTest(t, filepath.Join(t.TempDir(), "ref"), Options{})
	if _, err := ref.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := ref.Dump(&want); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("concurrent loads did not give the union")
	}
}
