package cache

import (
	"fmt"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestZZSplit(t *testing.T) {
	dir := os.Getenv("ZZDIR")
	if dir == "" {
		t.Skip()
	}
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var d *dict
	for _, x := range s.dicts {
		d = x
	}
	dictBytes, _ := os.ReadFile(dir + "/dicts/" + d.digest.String() + ".dict")
	var reqs, resps, mixed [][]byte
	for _, p := range s.packs {
		ix, _, _ := s.loadPack(p.path)
		var rq, rs, mx []byte
		for _, o := range ix.objs {
			b, err := s.block(p, o.where, false)
			if err != nil {
				t.Fatal(err)
			}
			e := b[o.at : o.at+o.slen]
			mx = append(mx, e...)
			if o.local {
				rs = append(rs, e...)
			} else {
				rq = append(rq, e...)
			}
		}
		reqs, resps, mixed = append(reqs, rq), append(resps, rs), append(mixed, mx)
	}
	for _, lvl := range []zstd.EncoderLevel{zstd.SpeedDefault} {
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderDictRaw(dictID(d.digest), dictBytes), zstd.WithEncoderLevel(lvl), zstd.WithEncoderConcurrency(2))
		for _, size := range []int{16 << 10, 32 << 10, 64 << 10, 96 << 10} {
			tot := func(xs [][]byte) int {
				n := 0
				for _, all := range xs {
					for o := 0; o < len(all); o += size {
						n += len(enc.EncodeAll(all[o:min(len(all), o+size)], nil))
					}
				}
				return n
			}
			a, b, c := tot(reqs), tot(resps), tot(mixed)
			fmt.Printf("level %v block %d: mixed %d split %d (req %d resp %d)\n", lvl, size, c, a+b, a, b)
		}
	}
}
