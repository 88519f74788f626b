package cache

import (
	"os"
	"path/filepath"

	"github.com/finrepro/finrepro/internal/regular"
)

// Dictionary construction. A store trains one dictionary from the first
// batch that has at least minDictSamples objects and keeps it as
// dicts/<sha256>.dict; every pack names the dictionary its objects need.
// The dictionary is a raw zstd dictionary (plain bytes used as history):
// the first dictChunk bytes of sampled objects, concatenated. It is built
// by a fixed rule from the batch, so the same first batch gives the same
// dictionary.

const (
	dictSize  = 128 << 10 // 512 KiB gained 2% on realistic exchanges but cost 30% more CPU per object
	dictChunk = 2 << 10   // the start of an object holds its most shared structure
)

// dictPiece is the unit buildDict keeps once: the same 64 bytes twice
// (the shared instructions at the start of every judge request) would
// waste the dictionary's room.
const dictPiece = 64

// buildDict returns the raw dictionary for a batch's objects: of the
// first dictChunk bytes of each sampled object, the 64-byte pieces not
// already in it; with all (the rule of stores of pack format 1, kept so
// that they stay byte-identical), every piece.
func buildDict(items []item, all bool) []byte {
	out := make([]byte, 0, dictSize)
	seen := map[string]bool{}
	// Visit the objects in a fixed stride that is coprime with any
	// batch length that is not a multiple of 7, so that samples spread
	// over the batch; stop at dictSize or after one pass.
	n := len(items)
	for i := 0; i < n && len(out) < dictSize; i++ {
		raw := items[(i*7)%n].raw
		if n%7 == 0 {
			raw = items[i].raw
		}
		raw = raw[:min(len(raw), dictChunk)]
		for p := 0; p < len(raw) && len(out) < dictSize; p += dictPiece {
			piece := raw[p:min(len(raw), p+dictPiece)]
			if !all && seen[string(piece)] {
				continue
			}
			seen[string(piece)] = true
			out = append(out, piece[:min(len(piece), dictSize-len(out))]...)
		}
	}
	return out
}

// EachDict calls fn with the path in the store ("dicts/<name>") and the
// content of each of the store's dictionaries, in name order.
func (s *Store) EachDict(fn func(path string, b []byte) error) error {
	ents, _ := os.ReadDir(filepath.Join(s.dir, dictsDir)) // no folder: no dictionaries
	for _, e := range ents {
		b, err := regular.Read(filepath.Join(s.dir, dictsDir, e.Name()), maxDictBytes)
		if err != nil {
			return err
		}
		if err := fn(relPath(dictsDir, e.Name()), b); err != nil {
			return err
		}
	}
	return nil
}
