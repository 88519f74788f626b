package cache

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/cache/internal/synth"
	"github.com/finrepro/finrepro/cache/reqkey"
)

// benchN is the number of exchanges of the load and dump benchmarks (the
// issue's 20,000 unless FINREPRO_BENCH_N says otherwise).
func benchN() int {
	if n, err := strconv.Atoi(os.Getenv("FINREPRO_BENCH_N")); err == nil && n > 0 {
		return n
	}
	return 20000
}

// benchData is the exchanges of the load and dump benchmarks: the random
// corpus, or with FINREPRO_BENCH_CORPUS=judge the repetitive judge
// traffic (bench/compare.sh's CORPUS).
var benchData = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	write := synth.Write
	if os.Getenv("FINREPRO_BENCH_CORPUS") == "judge" {
		write = synth.WriteJudge
	}
	if err := write(&b, benchN(), 1); err != nil {
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

// BenchmarkOpen opens a loaded store read-only: its packs' indexes read,
// parsed and built into the in-memory index (FINREPRO_BENCH_CORPUS=judge
// for the judge corpus, whose dump it is a large part of).
func BenchmarkOpen(b *testing.B) {
	s := loadedStore(b)
	dir := s.Dir()
	s.Close()
	b.ReportAllocs()
	for b.Loop() {
		s2, err := Open(dir, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s2.Close()
	}
}

// BenchmarkDump writes every exchange of a loaded store as JSONL; its
// B/op is what an open and a dump allocate (20,000 exchanges: 1,066 MB
// before the dump's lines and blocks were made in reused buffers,
// 208-218 MB after).
func BenchmarkDump(b *testing.B) {
	s := loadedStore(b)
	defer s.Close()
	dir := s.Dir()
	b.SetBytes(int64(len(benchData())))
	b.ReportAllocs()
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

// openN is the number of exchanges of BenchmarkOpenReplayOne: 100,000
// unless FINREPRO_BENCH_OPEN_N says otherwise.
func openN() int {
	if n, err := strconv.Atoi(os.Getenv("FINREPRO_BENCH_OPEN_N")); err == nil && n > 0 {
		return n
	}
	return 100000
}

// smallExchange is a small judge call, so that a store of many of them is
// quick to build; BenchmarkOpenReplayOne measures the cost of the packs'
// indexes, not of content.
func smallExchange(i int) *Exchange {
	return &Exchange{
		Request:  []byte(fmt.Sprintf(`{"provider":"openai","endpoint":"chat/completions","body":{"model":"synthetic-judge","messages":[{"role":"user","content":"Synthetic rubric item %d: does the report state the net interest margin?"}]}}`, i)),
		Response: []byte(fmt.Sprintf(`{"id":"synthetic-%d","choices":[{"message":{"role":"assistant","content":"yes"}}]}`, i)),
		Meta:     Meta{Source: SourceSim},
	}
}

// BenchmarkOpenReplayOne opens a store and replays one request from it (a
// 1-request replay), against a store of openN exchanges each stored by
// its own Put, one at a time, as a recorder stores them (compacted as it
// grew), and against the same store after gc. The store is built once,
// in FINREPRO_BENCH_DIR when set (/dev/shm makes its 100,000 fsyncs
// cheap; what is measured is read from the page cache either way).
func BenchmarkOpenReplayOne(b *testing.B) {
	n := openN()
	root := b.TempDir()
	if d := os.Getenv("FINREPRO_BENCH_DIR"); d != "" {
		var err error
		if root, err = os.MkdirTemp(d, "open-bench-"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(root)
	}
	oneByOne := filepath.Join(root, "one-by-one")
	s, err := Open(oneByOne, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := s.Put(smallExchange(i)); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	compacted := filepath.Join(root, "compacted")
	if err := os.CopyFS(compacted, os.DirFS(oneByOne)); err != nil {
		b.Fatal(err)
	}
	s, err = Open(compacted, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.GC(); err != nil {
		b.Fatal(err)
	}
	s.Close()
	req := smallExchange(n / 2).Request
	for _, dir := range []string{oneByOne, compacted} {
		b.Run(filepath.Base(dir), func(b *testing.B) {
			s, _ := Open(dir, Options{ReadOnly: true})
			st, _ := s.Stats()
			s.Close()
			b.Logf("%d exchanges in %d packs", st.Exchanges, st.Packs)
			for b.Loop() {
				s, err := Open(dir, Options{ReadOnly: true})
				if err != nil {
					b.Fatal(err)
				}
				k, err := reqkey.Of(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := s.GetResponse(k); err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

// BenchmarkGetMetaParallel reads metas from every processor at once, in
// key order, as the site does.
func BenchmarkGetMetaParallel(b *testing.B) {
	s := loadedStore(b)
	defer s.Close()
	keys, err := s.Keys()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := s.GetMeta(keys[i%len(keys)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkGetParallel reads exchanges from every processor at once.
func BenchmarkGetParallel(b *testing.B) {
	s := loadedStore(b)
	defer s.Close()
	keys, err := s.Keys()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := s.Get(keys[(i*7919)%len(keys)]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}

// BenchmarkParseLine parses lines of the random corpus, by parseLine
// (its scanner first, see linescan.go) and by the token decoder alone.
func BenchmarkParseLine(b *testing.B) {
	g := synth.New(1)
	lines := make([][]byte, 200)
	size := 0
	for i := range lines {
		lines[i] = g.Next()
		size += len(lines[i])
	}
	for _, bc := range []struct {
		name  string
		parse func([]byte) (*Exchange, []byte, error)
	}{{"scan", parseLine}, {"tokens", parseLineTokens}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, l := range lines {
					if _, _, err := bc.parse(l); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
