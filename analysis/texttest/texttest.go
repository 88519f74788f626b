// Package texttest has an analysis.TextStore for tests of collections
// that keep their texts out of memory.
package texttest

import (
	"sync"

	"github.com/finrepro/finrepro/analysis"
)

// A Store keeps its records encoded (analysis.AppendTexts), as a run's
// details file does: Get decodes new copies, so nothing a collection
// holds is shared with it. When Broken is set, Put loses every record, as
// a store whose file failed does. Puts and Gets count the calls.
type Store struct {
	Broken     bool
	Puts, Gets int
	mu         sync.Mutex
	b          []byte
}

var _ analysis.TextStore = (*Store)(nil)

// Put appends texts as a record; the zero TextRef when Broken.
func (s *Store) Put(texts []string) analysis.TextRef {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Puts++
	if s.Broken {
		return analysis.TextRef{}
	}
	off := len(s.b)
	s.b = analysis.AppendTexts(s.b, texts)
	return analysis.TextRef{Off: int64(off), Len: int64(len(s.b) - off)}
}

// Get decodes the record at ref; nil for the zero TextRef. A ref Put did
// not return panics: it is the test's bug.
func (s *Store) Get(ref analysis.TextRef) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Gets++
	if ref.Len == 0 {
		return nil
	}
	t, err := analysis.DecodeTexts(string(s.b[ref.Off : ref.Off+ref.Len]))
	if err != nil {
		panic(err)
	}
	return t
}
