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
	if _, _, err := Reseal(dir, nil, nil); err == nil || !strings.Contains(err.Error(), "is not a bundle") {
		t.Fatalf("reseal of a plain folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err == nil {
		t.Fatal("reseal wrote a manifest into a plain folder")
	}
	if _, err := Seal(dir, Manifest{Name: "t", Producer: "test", Benchmarks: []string{"b"}}, nil, nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("abcdef"), 0o644)
	os.WriteFile(filepath.Join(dir, "y.txt"), []byte("y"), 0o644)
	m, changes, err := Reseal(dir, nil, nil)
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

// TestSealTrustsVerified checks what Seal hashes again when given the
// files it verified: a written file is hashed (its same-size change
// shows), a file outside written keeps its verified hash even after a
// same-size change behind the process's back (the trust Seal is given),
// unless its size changed; a new file is hashed, a removed one dropped,
// and a written folder ("sub/") covers every file below it.
func TestSealTrustsVerified(t *testing.T) {
	dir := t.TempDir()
	write := func(p, s string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"written.txt", "trusted.txt", "grown.txt", "gone.txt", "sub/a.txt"} {
		write(p, "old")
	}
	m0, err := Seal(dir, Manifest{Name: "t"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]File{}
	for _, f := range m0.Files {
		old[f.Path] = f
	}
	write("written.txt", "new")
	write("trusted.txt", "NEW")
	write("grown.txt", "longer")
	write("sub/a.txt", "new")
	write("added.txt", "new")
	os.Remove(filepath.Join(dir, "gone.txt"))
	m, err := Seal(dir, Manifest{Name: "t"}, m0.Files, []string{"written.txt", "sub/", "added.txt", "gone.txt"})
	if err != nil {
		t.Fatal(err)
	}
	// sha256("new") and sha256("longer"), from sha256sum
	const newSum = "11507a0e2f5e69d5dfa40a62a1bd7b6ee57e6bcd85c67c9b8431b36fff21c437"
	const longerSum = "73834addcec75fafd7d73717ca1614a1324652ffa70b4b6c44fa359ae5a69dab"
	got := map[string]File{}
	var paths []string
	for _, f := range m.Files {
		got[f.Path] = f
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, " ") != "added.txt grown.txt sub/a.txt trusted.txt written.txt" {
		t.Fatalf("files %v", paths)
	}
	for _, p := range []string{"written.txt", "sub/a.txt", "added.txt"} {
		if got[p].SHA256 != newSum {
			t.Errorf("%s: %s, want the hash of \"new\"", p, got[p].SHA256)
		}
	}
	if got["trusted.txt"] != old["trusted.txt"] {
		t.Errorf("trusted.txt hashed again: %+v, verified %+v", got["trusted.txt"], old["trusted.txt"])
	}
	if g := got["grown.txt"]; g.Size != 6 || g.SHA256 != longerSum {
		t.Errorf("grown.txt kept its verified entry: %+v", g)
	}
}
