package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestOutputFolderNotOurs: reproduce refuses a non-empty --out folder
// without a marker (exit 2, naming --force) and writes nothing there;
// with --force it writes its outputs and the user's csv/mydata.csv and
// notes survive, then and in a rerun.
func TestOutputFolderNotOurs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	mine := filepath.Join(out, "csv", "mydata.csv")
	os.MkdirAll(filepath.Dir(mine), 0o755)
	os.WriteFile(mine, []byte("a,b\n1,2\n"), 0o644)
	code, _, stderr := run(t, "reproduce", "--quiet", "--no-sweep", "--out", out)
	if code != ExitUsage || !strings.Contains(stderr, "--force") || !strings.Contains(stderr, markerName) {
		t.Fatalf("non-empty folder without a marker: exit %d, want %d naming --force\n%s", code, ExitUsage, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "site")); err == nil {
		t.Error("a refused run wrote the site")
	}
	for range 2 {
		if code, _, stderr := run(t, "reproduce", "--quiet", "--no-sweep", "--force", "--out", out); code != ExitOK {
			t.Fatalf("--force: exit %d\n%s", code, stderr)
		}
		if b, err := os.ReadFile(mine); err != nil || string(b) != "a,b\n1,2\n" {
			t.Fatalf("csv/mydata.csv after a run: %q, %v", b, err)
		}
	}
	checkSums(t, out)
	// The site command keeps the files reproduce listed in the marker
	// outside site/, and the user's.
	if code, _, stderr := run(t, "site", "--no-sweep", "--out", out); code != ExitOK {
		t.Fatalf("site: exit %d\n%s", code, stderr)
	}
	b, _ := os.ReadFile(filepath.Join(out, markerName))
	listed, _ := parseMarker(bytes.NewReader(b))
	for _, p := range listed {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); err != nil {
			t.Errorf("the marker lists %s: %v", p, err)
		}
	}
	if !slices.Contains(listed, "xlsx/all.xlsx") || slices.Contains(listed, "csv/mydata.csv") {
		t.Errorf("after site, the marker lacks xlsx/all.xlsx or lists csv/mydata.csv")
	}
	if _, err := os.Stat(mine); err != nil {
		t.Error(err)
	}
}

// TestOutputFolderHostileMarker: a marker cannot make finrepro remove a
// file outside the folder, by a path that leaves it (refused, naming the
// line) or through a link inside it (the removal goes through os.Root).
func TestOutputFolderHostileMarker(t *testing.T) {
	tmp := t.TempDir()
	outside := filepath.Join(tmp, "precious")
	os.WriteFile(outside, []byte("x"), 0o644)
	out := filepath.Join(tmp, "out")
	os.MkdirAll(out, 0o755)
	os.WriteFile(filepath.Join(out, markerName), []byte(markerHeader+"\ncsv/a.csv\n../precious\n"), 0o644)
	if _, err := claimOutputFolder(out, false); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("marker with ../precious: %v, want an error naming line 3", err)
	}
	if err := os.Symlink(tmp, filepath.Join(out, "link")); err != nil {
		t.Skip(err)
	}
	os.WriteFile(filepath.Join(out, markerName), []byte("link/precious\n"), 0o644)
	o, err := claimOutputFolder(out, false)
	if err != nil {
		t.Fatal(err)
	}
	o.finish(nil)
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("a file outside the folder was removed through a link: %v", err)
	}
}

// TestOutputFolderFinish: finish removes the listed files no longer
// written, within its scope only, and the folders this empties; it keeps
// unlisted files and lists what it wrote and what it kept.
func TestOutputFolderFinish(t *testing.T) {
	out := t.TempDir()
	for _, p := range []string{"site/a.html", "site/old/b.html", "csv/x.csv", "csv/user.csv"} {
		f := filepath.Join(out, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(f), 0o755)
		os.WriteFile(f, []byte("x"), 0o644)
	}
	writeMarker(out, []string{"csv/gone.csv", "csv/x.csv", "site/a.html", "site/old/b.html"})
	o, err := claimOutputFolder(out, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.finish([]string{"site/a.html"}, "site/"); err != nil {
		t.Fatal(err)
	}
	for p, survives := range map[string]bool{"site/a.html": true, "site/old": false, "csv/x.csv": true, "csv/user.csv": true} {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(p))); (err == nil) != survives {
			t.Errorf("%s: exists %v, want %v", p, err == nil, survives)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, markerName))
	got, err := parseMarker(bytes.NewReader(b))
	if err != nil || !slices.Equal(got, []string{"csv/x.csv", "site/a.html"}) {
		t.Errorf("marker lists %q, %v; want csv/x.csv site/a.html", got, err)
	}
}

// FuzzParseMarker: whatever the marker, every path parsed stays inside
// the folder and is clean, and writing the paths back parses to the same
// list.
func FuzzParseMarker(f *testing.F) {
	f.Add(markerHeader + "\ncsv/a.csv\nsite/index.html\n")
	f.Add("../x\n")
	f.Add("/etc/passwd\n")
	f.Add("a//b\n./c\n")
	f.Fuzz(func(t *testing.T, s string) {
		paths, err := parseMarker(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, p := range paths {
			if !filepath.IsLocal(p) || filepath.Clean(p) != p || strings.Contains(p, "..") && slices.Contains(strings.Split(p, "/"), "..") {
				t.Fatalf("path %q leaves the folder", p)
			}
		}
		dir := t.TempDir()
		if err := writeMarker(dir, paths); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, markerName))
		again, err := parseMarker(bytes.NewReader(b))
		if err != nil || !slices.Equal(again, paths) {
			t.Fatalf("round trip: %q, %v; want %q", again, err, paths)
		}
	})
}
