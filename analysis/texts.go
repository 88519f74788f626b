package analysis

import "sync"

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
