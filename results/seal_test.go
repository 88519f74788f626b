package results

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDiffFiles(t *testing.T) {
	h := func(c byte) string { return strings.Repeat(string(c), 64) }
	a := []File{{"a", 1, h('1')}, {"b", 2, h('2')}, {"c", 3, h('3')}, {"e", 5, h('5')}}
	b := []File{{"b", 2, h('2')}, {"c", 4, h('4')}, {"d", 9, h('9')}, {"e", 5, h('6')}}
	// By hand: a removed; b equal; c resized; d added; e same size, other hash.
	want := []Change{
		{Path: "a", Kind: Removed, OldSize: 1},
		{Path: "c", Kind: Changed, OldSize: 3, NewSize: 4},
		{Path: "d", Kind: Added, NewSize: 9},
		{Path: "e", Kind: Changed, OldSize: 5, NewSize: 5},
	}
	if got := DiffFiles(a, b); !reflect.DeepEqual(got, want) {
		t.Errorf("DiffFiles:\n got %v\nwant %v", got, want)
	}
	if got := DiffFiles(a, a); len(got) != 0 {
		t.Errorf("a list against itself: %v", got)
	}
	// Property: the changes from b to a mirror those from a to b.
	back := DiffFiles(b, a)
	if len(back) != len(want) || back[0].Kind != Added || back[2].Kind != Removed || back[1].OldSize != 4 {
		t.Errorf("reverse: %v", back)
	}
}

func TestReseal(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("abc"), 0o644)
	if _, _, err := Reseal(dir); err == nil || !strings.Contains(err.Error(), "is not a bundle") {
		t.Fatalf("reseal of a plain folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		t.Fatal("reseal wrote a manifest into a plain folder")
	}
	if _, err := Seal(dir, Manifest{Name: "t", Producer: "test", Benchmarks: []string{"b"}}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("abcdef"), 0o644)
	os.WriteFile(filepath.Join(dir, "y.txt"), []byte("y"), 0o644)
	m, changes, err := Reseal(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{Path: "x.txt", Kind: Changed, OldSize: 3, NewSize: 6}, {Path: "y.txt", Kind: Added, NewSize: 1}}
	if !reflect.DeepEqual(changes, want) || m.Name != "t" || m.Producer != "test" || len(m.Benchmarks) != 1 {
		t.Errorf("reseal: %v %+v", changes, m)
	}
	b, err := OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if probs, err := b.Verify(context.Background()); err != nil || len(probs) != 0 {
		t.Errorf("verify after reseal: %v %v", probs, err)
	}
}
