package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiff checks Diff on known inputs; the expected hunks are written
// out by hand from the line numbers of a and b.
func TestDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"
	want := `--- a
+++ b
@@ -1,6 +1,6 @@
 1
 2
-3
+three
 4
 5
 6
@@ -10,3 +10,4 @@
 10
 11
 12
+13
`
	if got := Diff("a", "b", a, b); got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
	if got := Diff("a", "b", "x", "x"); got != "" {
		t.Errorf("Diff of equal texts = %q", got)
	}
	want = "--- a\n+++ b\n@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+x\n"
	if got := Diff("a", "b", "x", "x\n"); got != want {
		t.Errorf("Diff of a missing newline = %q, want %q", got, want)
	}
	// Changes closer than twice the context share a hunk.
	got := Diff("a", "b", "1\n2\n3\n4\n5\n6\n7\n", "1\nb\n3\n4\n5\n6\nf\n")
	if strings.Count(got, "@@ -") != 1 || !strings.Contains(got, "@@ -1,7 +1,7 @@\n 1\n-2\n+b\n 3\n 4\n 5\n 6\n-7\n+f\n") {
		t.Errorf("Diff = %q", got)
	}
}

// TestCheck checks that a difference fails, writes name.got and names it.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	Check(rec, path, []byte("a\nc\n"))
	if !rec.failed || !strings.Contains(rec.msg, "-b\n+c\n") {
		t.Fatalf("Check of a difference: failed %v, message %q", rec.failed, rec.msg)
	}
	if got, err := os.ReadFile(path + ".got"); err != nil || string(got) != "a\nc\n" {
		t.Fatalf("%s.got = %q, %v", path, got, err)
	}
	rec = &recorder{TB: t}
	Check(rec, path, []byte("a\nb\n"))
	if rec.failed {
		t.Fatalf("Check of equal output failed: %s", rec.msg)
	}
	if _, err := os.Stat(path + ".got"); !os.IsNotExist(err) {
		t.Fatalf("%s.got left behind after a pass", path)
	}
}

// A recorder is a testing.TB that records a failure instead of failing.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg += sprintf(format, args...)
}

func (r *recorder) Helper() {}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
