package report

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestWriteStream writes files of about 600 KB (more than the 256 KB
// buffer) over every kind of file already in place and checks the bytes,
// the returned hash, that an equal file is not rewritten (its
// modification time stays) and that no temporary file is left.
func TestWriteStream(t *testing.T) {
	data := make([]byte, 600_000)
	for i := range data {
		data[i] = byte(i*7 + i/1000)
	}
	changed := func(at int) []byte { b := bytes.Clone(data); b[at] ^= 1; return b }
	tests := []struct {
		name    string
		old     []byte // nil: no file
		rewrite bool
	}{
		{"new", nil, true},
		{"equal", data, false},
		{"first byte differs", changed(0), true},
		{"differs after the first buffer", changed(300_000), true},
		{"last byte differs", changed(len(data) - 1), true},
		{"old longer", append(bytes.Clone(data), 'x'), true},
		{"old shorter", data[:len(data)-1], true},
		{"old empty", []byte{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "sub", "items.jsonl")
			past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
			if tc.old != nil {
				os.MkdirAll(filepath.Dir(name), 0o755)
				if err := os.WriteFile(name, tc.old, 0o644); err != nil {
					t.Fatal(err)
				}
				os.Chtimes(name, past, past)
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			sum, err := writeStream(root, "sub/items.jsonl", func(w io.Writer) error {
				for i := 0; i < len(data); i += 1000 {
					w.Write(data[i:min(i+1000, len(data))])
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(name)
			if !bytes.Equal(got, data) || sum != sha256.Sum256(data) {
				t.Fatalf("file of %d bytes (hash ok: %v), want the %d written", len(got), sum == sha256.Sum256(data), len(data))
			}
			st, _ := os.Stat(name)
			if rewritten := !st.ModTime().Equal(past); tc.old != nil && rewritten != tc.rewrite {
				t.Errorf("rewritten %v, want %v", rewritten, tc.rewrite)
			}
			if ents, _ := os.ReadDir(filepath.Dir(name)); len(ents) != 1 {
				t.Errorf("%d entries in the folder, want only the file", len(ents))
			}
		})
	}
}

// TestWriteStreamError checks that a rendering that fails midway leaves
// the file in place as it was and no temporary file.
func TestWriteStreamError(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "items.csv")
	old := bytes.Repeat([]byte("a"), 400_000)
	os.WriteFile(name, old, 0o644)
	boom := errors.New("boom")
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = writeStream(root, "items.csv", func(w io.Writer) error {
		w.Write(bytes.Repeat([]byte("b"), 300_000))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if got, _ := os.ReadFile(name); !bytes.Equal(got, old) {
		t.Error("the old file changed")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries, want only the old file", len(ents))
	}
}

// TestWriteStreamRerunWritesNothing checks that rendering the bytes a
// file already holds writes nothing while it renders: no temporary file
// appears beside it at any point, and the file keeps its modification
// time.
func TestWriteStreamRerunWritesNothing(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789"), 70_000) // more than the 256 KB buffer
	if err := os.WriteFile(filepath.Join(dir, "items.jsonl"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dir, "items.jsonl"), past, past)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	most := 0 // the most folder entries seen while rendering
	sum, err := writeStream(root, "items.jsonl", func(w io.Writer) error {
		for i := 0; i < len(data); i += 100_000 {
			w.Write(data[i:min(i+100_000, len(data))])
			ents, _ := os.ReadDir(dir)
			most = max(most, len(ents))
		}
		return nil
	})
	if err != nil || sum != sha256.Sum256(data) {
		t.Fatalf("err %v, hash ok %v", err, sum == sha256.Sum256(data))
	}
	if most != 1 {
		t.Errorf("%d folder entries while rendering, want the file alone", most)
	}
	if st, _ := os.Stat(filepath.Join(dir, "items.jsonl")); !st.ModTime().Equal(past) {
		t.Error("the file was rewritten")
	}
}

// TestWriteStreamOldChanged checks that when the file in place changes
// under a rerun, in the part already found equal, the rerun fails
// instead of putting a mix of the two into place, and leaves no
// temporary file.
func TestWriteStreamOldChanged(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "items.csv")
	data := bytes.Repeat([]byte("a"), 600_000)
	os.WriteFile(name, data, 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	_, err = writeStream(root, "items.csv", func(w io.Writer) error {
		w.Write(data[:300_000])
		// another writer changes the first byte, which matched
		f, _ := os.OpenFile(name, os.O_WRONLY, 0)
		f.WriteAt([]byte("X"), 0)
		f.Close()
		w.Write([]byte("different"))
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "changed while it was being rewritten") {
		t.Fatalf("error %v, want the file named as changed", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries, want only the file", len(ents))
	}
}
