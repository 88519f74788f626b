package demo

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/finrepro/finrepro/analysis"
)

// A fileTexts is the analysis.TextStore of one benchmark's recording: the
// texts a collection keeps only for details and audits (FinDeepResearch's
// reports and every item's answer, verdict and reason) go to a file, not
// to memory, where they would be most of what a build holds and grow with
// the factor (160 MB at --factor 2). A demo build only records and counts
// tables: the texts are read back when the benchmark asks for them (the
// answers that go into the judge's prompts).
//
// A record is what analysis.AppendTexts writes; a TextRef is the
// record's offset and length.
type fileTexts struct {
	f    *os.File
	name string // removed by close, when it could not be at once
	mu   sync.Mutex
	size int64
	err  error // the first failed Put or Get
}

var _ analysis.TextStore = (*fileTexts)(nil)

// newFileTexts creates the file in dir, the bundle's folder (the texts can
// be as large as the bundle, more than a temporary folder in memory should
// take), under a name removed at once where the system allows it, so that
// nothing of it is left in the bundle.
func newFileTexts(dir string) (*fileTexts, error) {
	f, err := os.CreateTemp(dir, ".finrepro-texts-*")
	if err != nil {
		return nil, fmt.Errorf("demo: texts: %w", err)
	}
	t := &fileTexts{f: f, name: f.Name()}
	if os.Remove(f.Name()) == nil { // an open file can be unlinked (not on Windows: removed by close)
		t.name = ""
	}
	return t, nil
}

// Put appends texts as a record; after a failure, which is kept (see
// close), it returns the zero TextRef.
func (t *fileTexts) Put(texts []string) analysis.TextRef {
	b := analysis.AppendTexts(nil, texts)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return analysis.TextRef{}
	}
	if _, err := t.f.WriteAt(b, t.size); err != nil {
		t.err = fmt.Errorf("demo: texts: %w", err)
		return analysis.TextRef{}
	}
	ref := analysis.TextRef{Off: t.size, Len: int64(len(b))}
	t.size += int64(len(b))
	return ref
}

// Get reads the texts Put stored at ref: nil for the zero TextRef, and
// on a failure, which is kept (see close).
func (t *fileTexts) Get(ref analysis.TextRef) []string {
	if ref.Len == 0 {
		return nil
	}
	t.mu.Lock()
	size := t.size
	t.mu.Unlock()
	var texts []string
	var err error
	if ref.Off < 0 || ref.Len < 0 || ref.Off > size-ref.Len {
		err = errors.New("not a record of this file")
	} else {
		b := make([]byte, ref.Len)
		if _, err = t.f.ReadAt(b, ref.Off); err == nil {
			texts, err = analysis.DecodeTexts(string(b))
		}
	}
	if err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = fmt.Errorf("demo: texts at byte %d: %w", ref.Off, err)
		}
		t.mu.Unlock()
		return nil
	}
	return texts
}

// close closes and removes the file and returns the first failure of a
// Put or a Get: the benchmark's calls may have been written from texts
// that were lost.
func (t *fileTexts) close() error {
	err := t.f.Close()
	if t.name != "" {
		if rerr := os.Remove(t.name); err == nil {
			err = rerr
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		return t.err
	}
	if err != nil {
		return fmt.Errorf("demo: texts: %w", err)
	}
	return nil
}
