package cache

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/cache/internal/synth"
)

// benchN is the number of exchanges of the load and dump benchmarks (the
// issue's 20,000 unless FINREPRO_BENCH_N says otherwise).
func benchN() int {
	if n, err := strconv.Atoi(os.Getenv("FINREPRO_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 20000
}

var benchData = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	if err := synth.Write(&b, benchN(), 1); err != nil {
		panic(err)
	}
	return b.Bytes()
})

// loadedStore returns a store holding the benchmark exchanges.
func loadedStore(b *testing.B) *Store {
	s, err := Open(filepath.Join(b.TempDir(), "c"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := s.Load(bytes.NewReader(benchData()), LoadOptions{Strict: true})
	if err != nil {
		b.Fatal(err)
	}
	if st.Added == 0 {
		b.Fatal("nothing loaded")
	}
	return s
}

// BenchmarkLoad loads the synthetic exchanges into an empty store.
func BenchmarkLoad(b *testing.B) {
	data := benchData()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "c")
		b.StartTimer()
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
			b.Fatal(err)
		}
		s.Close()
		b.StopTimer()
		st := storeSize(b, dir)
		b.ReportMetric(float64(len(data))/float64(st), "raw/stored")
		b.StartTimer()
	}
}

// BenchmarkDump writes every exchange of a loaded store as JSONL.
func BenchmarkDump(b *testing.B) {
	s := loadedStore(b)
	defer s.Close()
	dir := s.Dir()
	b.SetBytes(int64(len(benchData())))
	for b.Loop() {
		s2, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s2.Dump(io.Discard); err != nil {
			b.Fatal(err)
		}
		s2.Close()
	}
}

// BenchmarkGet reads one exchange at a time.
func BenchmarkGet(b *testing.B) {
	s := loadedStore(b)
	defer s.Close()
	keys, err := s.Keys()
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		if _, err := s.Get(keys[i%len(keys)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPut stores one exchange durably at a time, as the recorder does.
func BenchmarkPut(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "c"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	g := synth.New(2)
	for b.Loop() {
		x, err := ParseLine(g.Next())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Put(x); err != nil {
			b.Fatal(err)
		}
	}
}

func storeSize(b *testing.B, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
