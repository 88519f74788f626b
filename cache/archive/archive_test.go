package archive

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/internal/synth"
	"github.com/klauspost/compress/zstd"
)

func loadedDir(t *testing.T, n int, seed uint64) string {
	dir := t.TempDir()
	s := openTest(t, dir)
	var lines bytes.Buffer
	if err := synth.Write(&lines, n, seed); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(&lines, cache.LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir
}

func openTest(t *testing.T, dir string) *cache.Store {
	t.Helper()
	s, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// verifyClean opens the store in dir and checks that it verifies.
func verifyClean(t *testing.T, dir string) *cache.Store {
	t.Helper()
	s := openTest(t, dir)
	if n, err := s.Verify(context.Background(), func(p cache.Problem) { t.Error(p) }); n > 0 || err != nil {
		t.Fatalf("verify: %d problems, %v", n, err)
	}
	return s
}

func testExchange(i int, resp string) *cache.Exchange {
	return &cache.Exchange{
		Request:  json.RawMessage(fmt.Sprintf(`{"provider":"openai","endpoint":"chat/completions","body":{"model":"m","messages":[{"role":"user","content":"question %d"}]}}`, i)),
		Response: json.RawMessage(resp),
		Meta:     cache.Meta{Source: cache.SourceSim},
	}
}
func TestArchiveRoundTrip(t *testing.T) {
	dir := loadedDir(t, 30, 9)
	os.WriteFile(filepath.Join(dir, "tmp", "pack-leftover"), []byte("x"), 0o644)
	var a1, a2 bytes.Buffer
	if err := Write(&a1, dir); err != nil {
		t.Fatal(err)
	}
	if err := Write(&a2, dir); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a1.Bytes(), a2.Bytes()) {
		t.Fatal("two archives of one folder differ")
	}
	out := t.TempDir()
	if err := Read(context.Background(), bytes.NewReader(a1.Bytes()), out, Limits{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, "tmp", "pack-leftover")); err == nil {
		t.Error("temporary file archived")
	}
	s := verifyClean(t, out)
	var d1, d2 bytes.Buffer
	s.Dump(&d1)
	openTest(t, dir).Dump(&d2)
	if !bytes.Equal(d1.Bytes(), d2.Bytes()) || d1.Len() == 0 {
		t.Fatal("extracted store differs")
	}
	// Extracting again over the same files is fine; over a differing file
	// is refused.
	if err := Read(context.Background(), bytes.NewReader(a1.Bytes()), out, Limits{}); err != nil {
		t.Fatalf("same files again: %v", err)
	}
	os.WriteFile(filepath.Join(out, "FORMAT"), []byte("other\n"), 0o644)
	if err := Read(context.Background(), bytes.NewReader(a1.Bytes()), out, Limits{}); err == nil || !strings.Contains(err.Error(), "not replaced") {
		t.Fatalf("differing file: %v", err)
	}
}

type tarMember struct {
	hdr  tar.Header
	body string
}

// craft builds an archive with the given members after a SHA256SUMS that
// lists sums (computed from the members when nil).
func craft(t *testing.T, members []tarMember, sums *string) []byte {
	var s strings.Builder
	if sums == nil {
		for _, m := range members {
			h := sha256.Sum256([]byte(m.body))
			fmt.Fprintf(&s, "%s  %s\n", hex.EncodeToString(h[:]), m.hdr.Name)
		}
	} else {
		s.WriteString(*sums)
	}
	var b bytes.Buffer
	zw, _ := zstd.NewWriter(&b)
	tw := tar.NewWriter(zw)
	all := append([]tarMember{{tar.Header{Name: SumsName, Typeflag: tar.TypeReg, Mode: 0o644}, s.String()}}, members...)
	for _, m := range all {
		h := m.hdr
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(m.body))
	}
	tw.Close()
	zw.Close()
	return b.Bytes()
}

func TestReadArchiveRefuses(t *testing.T) {
	reg := func(name, body string) tarMember {
		return tarMember{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644}, body}
	}
	badSums := "0000000000000000000000000000000000000000000000000000000000000000  a\n"
	tests := []struct {
		name    string
		members []tarMember
		sums    *string
		lim     Limits
		want    string
	}{
		{"traversal", []tarMember{reg("../evil", "x")}, &badSums, Limits{}, "escapes"},
		{"absolute", []tarMember{reg("/etc/evil", "x")}, &badSums, Limits{}, "escapes"},
		{"symlink", []tarMember{{tar.Header{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"}, ""}}, nil, Limits{}, "not a regular file"},
		{"hard link", []tarMember{{tar.Header{Name: "l", Typeflag: tar.TypeLink, Linkname: "x"}, ""}}, nil, Limits{}, "not a regular file"},
		{"oversized", []tarMember{reg("a", strings.Repeat("x", 100))}, nil, Limits{MaxFileBytes: 10}, "exceeds"},
		{"too many", []tarMember{reg("a", "1"), reg("b", "2")}, nil, Limits{MaxFiles: 1}, "more than"},
		{"bad hash", []tarMember{reg("a", "x")}, &badSums, Limits{}, "does not match"},
		{"unlisted", []tarMember{reg("b", "x")}, &badSums, Limits{}, "not listed"},
		{"missing", nil, &badSums, Limits{}, "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			err := Read(context.Background(), bytes.NewReader(craft(t, tt.members, tt.sums)), filepath.Join(out, "x"), tt.lim)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(out, "evil")); err == nil {
				t.Fatal("wrote outside the destination")
			}
		})
	}
}

func TestScanSecrets(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	s.Put(testExchange(1, `"clean"`))
	k, _ := s.Put(testExchange(2, `"my key is sk-proj-abcdefghijklmnopqrstuvwx"`))
	k3, _ := s.Put(testExchange(3, `"the value s3cr3t-value-123 leaked"`))
	found, err := ScanSecrets(dir, []string{"s3cr3t-value-123", "short"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[cache.Key]string{}
	for _, f := range found {
		got[f.Key] = f.What
	}
	if len(found) != 2 || got[k] != "OpenAI or Anthropic API key" || got[k3] != "value of a secret" {
		t.Fatalf("findings %v", found)
	}
}

func FuzzReadArchive(f *testing.F) {
	var b bytes.Buffer
	dir := f.TempDir()
	os.WriteFile(filepath.Join(dir, "a"), []byte("hello"), 0o644)
	Write(&b, dir)
	f.Add(b.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		out := t.TempDir()
		Read(context.Background(), bytes.NewReader(data), out, Limits{MaxFileBytes: 1 << 20, MaxTotalBytes: 4 << 20, MaxFiles: 100})
		// Whatever happened, nothing may be outside out or be a link.
		filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
			if err == nil && info.Mode()&os.ModeSymlink != 0 {
				t.Fatalf("link %s", p)
			}
			return nil
		})
	})
}
