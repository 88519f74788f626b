package demo

import (
	"context"
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

func TestFileTextsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ft, err := newFileTexts(dir)
	if err != nil {
		t.Fatal(err)
	}
	groups := [][]string{
		{"a report", "", "an answer with ünïcode"},
		nil,
		{""},
		{strings.Repeat("x", 70000), "after a long text"},
		{"\x00\xff not UTF-8 \xc3"},
	}
	refs := make([]analysis.TextRef, len(groups))
	for i, g := range groups {
		refs[i] = ft.Put(g)
	}
	// read back out of order, twice
	for range 2 {
		for i := len(groups) - 1; i >= 0; i-- {
			if got := ft.Get(refs[i]); !slices.Equal(got, groups[i]) {
				t.Errorf("group %d: got %q, want %q", i, got, groups[i])
			}
		}
	}
	if got := ft.Get(analysis.TextRef{}); got != nil {
		t.Errorf("zero ref: got %q, want nil", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the texts' file is listed in the bundle's folder: %v", ents)
	}
	if err := ft.close(); err != nil {
		t.Fatal(err)
	}
}

// A reference the store did not give is a failure that close reports, and
// Put gives nothing after it: the calls written from the texts can no
// longer be trusted.
func TestFileTextsFailureKept(t *testing.T) {
	ft, err := newFileTexts(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref := ft.Put([]string{"one", "two"})
	for _, bad := range []analysis.TextRef{
		{Off: ref.Off + 1, Len: ref.Len - 1}, // inside a record
		{Off: ref.Off, Len: ref.Len + 1},     // past the end
		{Off: -1, Len: 2},
	} {
		if got := ft.Get(bad); got != nil {
			t.Errorf("Get(%+v) = %q, want nil", bad, got)
		}
	}
	if got := ft.Put([]string{"three"}); got != (analysis.TextRef{}) {
		t.Errorf("Put after a failure = %+v, want the zero TextRef", got)
	}
	err = ft.close()
	if err == nil || !strings.Contains(err.Error(), "demo: texts at byte") {
		t.Errorf("close: %v, want the failed Get", err)
	}
}

// FuzzDecodeTexts: analysis.DecodeTexts never panics, and what it accepts is in
// the canonical form, the one Put writes (encoding it again gives b).
func FuzzDecodeTexts(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{2, 1, 'a', 0})
	f.Add([]byte{1, 5, 'a'})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		texts, err := analysis.DecodeTexts(string(b))
		if err != nil {
			return
		}
		again := binary.AppendUvarint(nil, uint64(len(texts)))
		for _, s := range texts {
			again = binary.AppendUvarint(again, uint64(len(s)))
			again = append(again, s...)
		}
		if string(again) != string(b) {
			t.Errorf("decoded %q from %x, which encodes as %x", texts, b, again)
		}
	})
}

// textsWatcher is a benchmark that notes the TextStore its Collect gets.
type textsWatcher struct {
	analysis.Benchmark
	got *analysis.TextStore
}

func (b textsWatcher) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	*b.got = in.Texts
	return b.Benchmark.Collect(ctx, in)
}

type watchedGenerator struct {
	Generator
	got *analysis.TextStore
}

func (g watchedGenerator) Benchmark() analysis.Benchmark {
	return textsWatcher{g.Generator.Benchmark(), g.got}
}

// TestBuildKeepsTextsInAFile checks that a build gives the benchmarks a
// TextStore in a file: one in memory (Input.Texts nil) holds every report
// and verdict of FinDeepResearch until the benchmark is done, most of a
// build's memory at full scale.
func TestBuildKeepsTextsInAFile(t *testing.T) {
	var got analysis.TextStore
	dir := t.TempDir()
	if _, err := Build(context.Background(), dir, Options{Scale: Small, Seed: 1}, []Generator{watchedGenerator{FinDeepResearch(), &got}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := got.(*fileTexts); !ok {
		t.Errorf("the benchmark got the TextStore %T, want *fileTexts", got)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".finrepro-texts") {
			t.Errorf("the texts' file %s is left in the bundle", e.Name())
		}
	}
}
