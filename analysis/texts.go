package analysis

import (
	"encoding/binary"
	"fmt"
	"sync"
)

// A TextStore keeps texts that a collection needs only to write details
// and audits (a report as displayed, the answers read from it, a judge's
// verdicts and reasons) outside the collection, so that what a
// collection holds while the run goes on is what scoring needs: numbers,
// ids and short labels. A run gives one that keeps them in a file; a nil
// Input.Texts means MemoryTexts.
//
// Put and Get are safe for concurrent use. A store that fails to write
// or read keeps the error for its owner, which must check it before
// trusting what was written from the texts; Put then returns a reference
// that Get answers with nil.
type TextStore interface {
	// Put stores texts and returns where they are.
	Put(texts []string) TextRef
	// Get returns the texts Put stored at ref, in order.
	Get(ref TextRef) []string
}

// A TextRef is where a TextStore keeps a group of texts; the zero
// TextRef holds none (Get returns nil).
type TextRef struct{ Off, Len int64 }

// TextsOf returns in.Texts, or a new MemoryTexts when it is nil.
func TextsOf(in Input) TextStore {
	if in.Texts != nil {
		return in.Texts
	}
	return &MemoryTexts{}
}

// MemoryTexts is a TextStore that keeps the texts in memory.
type MemoryTexts struct {
	mu  sync.Mutex
	all [][]string
}

// Put keeps a copy of texts' slice (not of the strings).
func (m *MemoryTexts) Put(texts []string) TextRef {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.all = append(m.all, append([]string(nil), texts...))
	return TextRef{Off: int64(len(m.all)), Len: int64(len(texts))} // from 1: the zero TextRef holds none
}

// Get returns the texts at ref; nil for a reference it did not give.
func (m *MemoryTexts) Get(ref TextRef) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ref.Off < 1 || ref.Off > int64(len(m.all)) {
		return nil
	}
	return m.all[ref.Off-1]
}

// AppendTexts appends to b the record of texts that a file-backed
// TextStore keeps (demo's build and reproduce's details file): the
// number of texts, then each text's length and bytes, the counts as
// uvarints.
func AppendTexts(b []byte, texts []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(texts)))
	for _, s := range texts {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// DecodeTexts reads the record AppendTexts wrote, which must be all of
// rec; the texts are cut from rec, not copied, and no texts read as
// nil. Only the shortest form of each uvarint is accepted, so that a
// record it accepts is the one AppendTexts makes of what it returns. A
// record that is not one is an error "record damaged at byte N", with
// nothing made beyond what rec's length bounds.
func DecodeTexts(rec string) ([]string, error) {
	at := 0
	fail := func() ([]string, error) { return nil, fmt.Errorf("record damaged at byte %d", at) }
	n, ok := uvarintAt(rec, &at)
	if !ok || n > uint64(len(rec)-at) { // every text takes a byte at least
		return fail()
	}
	var texts []string
	if n > 0 {
		texts = make([]string, n)
	}
	for i := range texts {
		l, ok := uvarintAt(rec, &at)
		if !ok || l > uint64(len(rec)-at) {
			return fail()
		}
		texts[i] = rec[at : at+int(l)]
		at += int(l)
	}
	if at != len(rec) {
		return fail()
	}
	return texts, nil
}

// uvarintAt reads the uvarint at s[*at:] in its shortest form, with
// binary.Uvarint's rules, and moves *at past it.
func uvarintAt(s string, at *int) (uint64, bool) {
	var x uint64
	for i, shift := 0, uint(0); i < binary.MaxVarintLen64 && *at+i < len(s); i, shift = i+1, shift+7 {
		c := s[*at+i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 || i > 0 && c == 0 {
				return 0, false // overflow, or not the shortest form
			}
			*at += i + 1
			return x | uint64(c)<<shift, true
		}
		x |= uint64(c&0x7f) << shift
	}
	return 0, false
}
