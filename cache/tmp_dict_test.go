package cache

import (
	"bufio"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

func TestTmpDict(t *testing.T) {
	f, _ := os.Open("/tmp/ex5k.jsonl")
	defer f.Close()
	var items []item
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	raw := 0
	for sc.Scan() {
		x, c, err := parseLine(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, item{raw: c}, item{raw: x.Response})
		raw += len(sc.Bytes())
		if len(items) >= 4000 {
			break
		}
	}
	for _, size := range []int{64 << 10, 128 << 10, 512 << 10} {
		for _, lvl := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression} {
			var d []byte
			for i := 0; i < len(items) && len(d) < size; i++ {
				r := items[(i*7)%len(items)].raw
				d = append(d, r[:min(len(r), 2048, size-len(d))]...)
			}
			enc, _ := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(40000, d), zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(1))
			t0 := cpu()
			n := 0
			for _, it := range items[256:] {
				n += len(enc.EncodeAll(it.raw, nil))
			}
			t.Logf("dict %d level %v: %.2f ratio, %v", size, lvl, float64(raw)*float64(len(items)-256)/float64(len(items))/float64(n), cpu()-t0)
		}
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	t0 := cpu()
	n := 0
	for _, it := range items[256:] {
		n += len(enc.EncodeAll(it.raw, nil))
	}
	t.Logf("no dict: %.2f ratio, %v", float64(raw)*float64(len(items)-256)/float64(len(items))/float64(n), cpu()-t0)
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
