package cli

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/results"
	"github.com/klauspost/compress/zstd"
)

// zeroReader reads as an endless run of zero bytes.
type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// written returns the bytes this process has written so far (the wchar
// line of /proc/self/io: every write, to any file).
func written(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar: "); ok {
			var n int64
			fmt.Sscan(v, &n)
			return n
		}
	}
	t.Skip("no wchar in /proc/self/io")
	return 0
}

// bombArchive writes a bundle archive whose manifest declares
// inputs/a.bin as declared bytes while its tar member holds bomb zero
// bytes (a few kilobytes compressed) that match no hash, placed before or
// after the manifest.
func bombArchive(t *testing.T, path string, declared, bomb int64, before bool) {
	t.Helper()
	dsum := sha256.Sum256([]byte("not the content"))
	name := "inputs/a.bin"
	if !before {
		name = "zzz/a.bin" // sorts after manifest.json
	}
	m := results.Manifest{Format: results.BundleFormat, Name: "bomb", Benchmarks: []string{}, Producer: "test",
		Files: []results.File{{Path: name, Size: declared, SHA256: hex.EncodeToString(dsum[:])}}}
	mb, _ := json.Marshal(&m)
	msum := sha256.Sum256(mb)
	sums := fmt.Sprintf("%s  %s\n%s  %s\n", hex.EncodeToString(dsum[:]), name, hex.EncodeToString(msum[:]), results.ManifestName)
	if !before {
		sums = fmt.Sprintf("%s  %s\n%s  %s\n", hex.EncodeToString(msum[:]), results.ManifestName, hex.EncodeToString(dsum[:]), name)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	zw, _ := zstd.NewWriter(bw, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	tw := tar.NewWriter(zw)
	add := func(n string, size int64, r io.Reader) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Size: size, Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := io.CopyN(tw, r, size); err != nil {
			t.Fatal(err)
		}
	}
	add("SHA256SUMS", int64(len(sums)), strings.NewReader(sums))
	if before {
		add(name, bomb, zeroReader{})
		add(results.ManifestName, int64(len(mb)), strings.NewReader(string(mb)))
	} else {
		add(results.ManifestName, int64(len(mb)), strings.NewReader(string(mb)))
		add(name, bomb, zeroReader{})
	}
	tw.Close()
	zw.Close()
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// TestArchiveDiskBomb opens bundle archives of a few kilobytes whose
// member a.bin holds 300 MB of zeros (before or after the manifest in the
// archive) while the manifest declares 1,000 bytes, or declares the
// 100 MB the member holds but with another hash: bundle verify and
// reproduce exit 4, and the process writes no more than the declared
// bytes plus a small margin. No temporary folder is left behind.
func TestArchiveDiskBomb(t *testing.T) {
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	for _, tc := range []struct {
		declared, bomb int64
		before         bool
	}{{1000, 300 << 20, true}, {1000, 300 << 20, false}, {100 << 20, 100 << 20, true}} {
		before := tc.before
		arch := filepath.Join(t.TempDir(), "bomb.tar.zst")
		bombArchive(t, arch, tc.declared, tc.bomb, before)
		if st, _ := os.Stat(arch); st.Size() > 1<<20 {
			t.Fatalf("bomb archive of %d bytes", st.Size())
		}
		for _, args := range [][]string{
			{"bundle", "verify", arch},
			{"reproduce", arch, "--quiet", "--out", filepath.Join(t.TempDir(), "out")},
		} {
			w0 := written(t)
			code, _, errOut := run(t, args...)
			w := written(t) - w0
			if code != ExitIntegrity || !strings.Contains(errOut, "a.bin") {
				t.Errorf("%s (bomb before the manifest: %v): exit %d, want %d\n%s", args[0], before, code, ExitIntegrity, errOut)
			}
			if w > tc.declared+1<<20 {
				t.Errorf("%s (bomb before the manifest: %v): wrote %d bytes, the manifest declares %d", args[0], before, w, tc.declared)
			}
		}
	}
	if ents, _ := os.ReadDir(tmpdir); len(ents) != 0 {
		t.Errorf("%d temporary folders left behind", len(ents))
	}
}

// TestArchiveInterrupt cancels the extraction of an archive whose first
// member decodes to 1 GiB of zeros (seconds of decoding): it stops within
// a second with the context's error and leaves no temporary folder.
func TestArchiveInterrupt(t *testing.T) {
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	arch := filepath.Join(t.TempDir(), "bomb.tar.zst")
	bombArchive(t, arch, 1000, 1<<30, true)
	f, err := os.Open(arch)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, _, err = extractArchive(ctx, f, arch, "")
	if d := time.Since(start); !errors.Is(err, context.Canceled) || d > 1100*time.Millisecond {
		t.Errorf("extraction returned %v after %v, want context.Canceled within a second", err, d)
	}
	if ents, _ := os.ReadDir(tmpdir); len(ents) != 0 {
		t.Errorf("%d temporary folders left behind", len(ents))
	}
}

// TestLeftoverTemp plants the temporary folder of a process killed with
// kill -9 (its lock free) and one of a live process (locked): the next
// run removes the first and keeps the second.
func TestLeftoverTemp(t *testing.T) {
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	dead := filepath.Join(tmpdir, tempPrefix+"dead")
	os.MkdirAll(filepath.Join(dead, "bundle", "cache"), 0o755)
	os.WriteFile(filepath.Join(dead, lockName), nil, 0o600)
	os.WriteFile(filepath.Join(dead, "bundle", "cache", "big.pack"), make([]byte, 1<<20), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(dead, old, old)
	live, unlock, err := makeTemp()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	os.Chtimes(live, old, old)
	dir := makeBundle(t)
	arch := filepath.Join(t.TempDir(), "b.tar.zst")
	if err := writeArchiveFile(arch, dir); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := run(t, "bundle", "verify", arch); code != 0 {
		t.Fatalf("verify: %d %s", code, errOut)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead process's folder is still there: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live process's folder was removed: %v", err)
	}
}
