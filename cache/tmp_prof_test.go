package cache

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTmpProf(t *testing.T) {
	f, _ := os.Open("/tmp/ex5k.jsonl")
	defer f.Close()
	s, _ := Open(filepath.Join(t.TempDir(), "c"), Options{})
	if _, err := s.Load(f, LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
}
