package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/demo"
	"github.com/finrepro/finrepro/results"
)

// TestBundleURL serves the demo archive from a local TLS server: a bundle
// URL with the right --sha256 is downloaded once and used; a wrong hash,
// a truncated body, plain http and a missing --sha256 are refused, and
// nothing bad is kept.
func TestBundleURL(t *testing.T) {
	archive := demo.Embedded()
	sum := sha256.Sum256(archive)
	sha := hex.EncodeToString(sum[:])
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		switch r.URL.Path {
		case "/demo.tar.zst":
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive)
		case "/truncated.tar.zst":
			// The length promises the whole archive; half of it comes.
			w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
			w.Write(archive[:len(archive)/2])
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	saved := downloadClient
	downloadClient = srv.Client // trusts the test server's certificate
	defer func() { downloadClient = saved }()
	downloads := t.TempDir()
	env := map[string]string{DownloadsEnv: downloads}
	count := func(p string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[p]
	}

	url := srv.URL + "/demo.tar.zst"
	code, out, errOut := cacheCLI(t, "", env, "bundle", "verify", url, "--sha256", sha)
	if code != ExitOK || !strings.Contains(errOut, "downloading") || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("first verify: %d %s%s", code, out, errOut)
	}
	kept := filepath.Join(downloads, sha+".tar.zst")
	if b, err := os.ReadFile(kept); err != nil || len(b) != len(archive) {
		t.Fatalf("download not kept at %s: %v", kept, err)
	}
	code, _, errOut = cacheCLI(t, "", env, "sweep", url, "--sha256", strings.ToUpper(sha), "--knob", "findeepforecast.tolerance_scale=0.5;2")
	if code != ExitOK || count("/demo.tar.zst") != 1 || !strings.Contains(errOut, "downloaded before") {
		t.Errorf("second use: exit %d, %d downloads\n%s", code, count("/demo.tar.zst"), errOut)
	}

	wrong := strings.Repeat("0", 64)
	code, _, errOut = cacheCLI(t, "", env, "bundle", "verify", url, "--sha256", wrong)
	if code != ExitIntegrity || !strings.Contains(errOut, "--sha256 says "+wrong) {
		t.Errorf("wrong hash: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(downloads, wrong+".tar.zst")); err == nil {
		t.Error("a download with the wrong hash was kept")
	}
	// Downloads are kept by hash: a truncated one is tried in a fresh folder.
	fresh := map[string]string{DownloadsEnv: t.TempDir()}
	code, _, errOut = cacheCLI(t, "", fresh, "reproduce", srv.URL+"/truncated.tar.zst", "--sha256", sha, "--out", filepath.Join(t.TempDir(), "o"))
	if code != ExitIntegrity || count("/truncated.tar.zst") != 1 {
		t.Errorf("truncated download: exit %d, want %d\n%s", code, ExitIntegrity, errOut)
	}
	if ents, _ := os.ReadDir(fresh[DownloadsEnv]); len(ents) != 0 {
		t.Errorf("a truncated download left %d files", len(ents))
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"bundle", "verify", url}, "needs --sha256"},
		{[]string{"bundle", "verify", strings.Replace(url, "https://", "http://", 1), "--sha256", sha}, "only https://"},
		{[]string{"site", srv.URL + "/demo.zip", "--sha256", sha}, "NAME.tar.zst"},
		{[]string{"bundle", "verify", url, "--sha256", "abc"}, "64 hex digits"},
	} {
		if code, _, errOut := cacheCLI(t, "", env, tt.args...); code != ExitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\n%s", tt.args, code, ExitUsage, tt.want, errOut)
		}
	}
	// A kept download that was damaged is fetched again.
	os.WriteFile(kept, []byte("damaged"), 0o644)
	if code, _, errOut := cacheCLI(t, "", env, "bundle", "verify", url, "--sha256", sha); code != ExitOK || count("/demo.tar.zst") != 3 { // first, wrong hash, this
		t.Errorf("after damage: exit %d, %d downloads\n%s", code, count("/demo.tar.zst"), errOut)
	}
	// downloads leave no temporary file behind
	ents, _ := os.ReadDir(downloads)
	if len(ents) != 1 {
		t.Errorf("downloads folder holds %d entries, want 1", len(ents))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestArchiveSHA256 checks that a local archive's --sha256 is checked in
// the one read that extracts it: extraction with the hash reads every
// byte of the archive exactly once; a wrong hash is an integrity error
// that leaves no folder behind, on the command line too, and the right
// one verifies.
func TestArchiveSHA256(t *testing.T) {
	archive := demo.Embedded()
	sum := sha256.Sum256(archive)
	sha := hex.EncodeToString(sum[:])
	wrong := strings.Repeat("0", 64)
	for _, c := range []struct {
		sha string
		ok  bool
	}{{sha, true}, {wrong, false}} {
		r := &countingReader{r: bytes.NewReader(archive)}
		dir, cleanup, err := extractArchive(context.Background(), struct{ io.Reader }{r}, "demo.tar.zst", c.sha)
		var ie *results.IntegrityError
		switch {
		case c.ok && err != nil, !c.ok && !errors.As(err, &ie):
			t.Fatalf("sha %s: %v", c.sha[:8], err)
		case r.n != len(archive):
			t.Errorf("sha %s: read %d bytes of %d", c.sha[:8], r.n, len(archive))
		}
		if c.ok {
			if _, err := results.OpenBundle(dir); err != nil {
				t.Error(err)
			}
			cleanup()
		}
		if _, err := os.Stat(dir); dir != "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("sha %s: %s left behind", c.sha[:8], dir)
		}
	}
	file := filepath.Join(t.TempDir(), "demo.tar.zst")
	os.WriteFile(file, archive, 0o644)
	if code, _, errOut := run(t, "bundle", "verify", file, "--sha256", wrong); code != ExitIntegrity || !strings.Contains(errOut, "--sha256 says "+wrong) {
		t.Errorf("wrong --sha256: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "bundle", "verify", file, "--sha256", strings.ToUpper(sha)); code != ExitOK {
		t.Errorf("right --sha256: exit %d\n%s", code, errOut)
	}
}
