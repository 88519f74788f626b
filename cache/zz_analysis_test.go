package cache

import (
	"encoding/binary"
	"fmt"
	"os"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func TestZZAnalysis(t *testing.T) {
	dir := os.Getenv("ZZDIR")
	if dir == "" {
		t.Skip()
	}
	s, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	c := func(b []byte) int { return len(enc.EncodeAll(b, nil)) }
	var blocks, idx, keys, resps, metas, rest, nrec, nobj, nblk int
	var metaRaw int
	for _, p := range s.packs {
		ix, _, err := s.loadPack(p.path)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := os.ReadFile(p.path)
		off := int(binary.LittleEndian.Uint64(f[len(f)-16:]))
		blocks += off - 8
		idx += len(f) - off - 16
		var kb, rb, mb []byte
		for _, r := range ix.recs {
			kb = append(kb, r.key[:]...)
			rb = append(rb, r.resp[:]...)
			mb = append(mb, r.meta...)
		}
		metaRaw += len(mb)
		keys += c(kb)
		resps += c(rb)
		metas += c(mb)
		full := c(ix.marshal())
		rest += full - c(kb) - c(rb) - c(mb)
		nrec += len(ix.recs)
		nobj += len(ix.objs)
		nblk += len(ix.v2.blocks)
	}
	fmt.Printf("packs %d recs %d objs %d blocks %d\nblocks bytes %d  index bytes %d\nkeys %d resps %d metas %d (raw %d) rest %d\n", len(s.packs), nrec, nobj, nblk, blocks, idx, keys, resps, metas, metaRaw, rest)
}
