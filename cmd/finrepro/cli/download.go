package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// DownloadsEnv names the environment variable that overrides the folder
// where bundles given by URL are kept (default: the user cache folder's
// finrepro/bundles).
const DownloadsEnv = "FINREPRO_DOWNLOADS"

// maxDownload bounds a downloaded bundle, so that a hostile server cannot
// fill the disk.
const maxDownload = 64 << 30

// downloadClient is the HTTP client of bundle downloads. Tests replace it
// with the client of an httptest TLS server, which trusts its certificate.
var downloadClient = func() *http.Client { return http.DefaultClient }

// A bundleArg is a bundle to open: a folder, a .tar.zst archive or ""
// for the built-in demo, with the SHA-256 the archive must have ("" for
// none), checked as the archive is extracted.
type bundleArg struct{ path, sha256 string }

// resolveBundle returns the local path of a bundle argument. An https://
// URL of a .tar.zst needs sha (its SHA-256 in hex): the archive is
// downloaded once into the downloads folder, named by its hash, checked,
// and its path returned; a later run finds it there and checks it again
// instead of downloading. A local .tar.zst given with sha is checked as
// openBundle extracts it, so that it is read once. Anything else is
// returned as it is.
func resolveBundle(ctx context.Context, env *Env, arg, sha string) (bundleArg, error) {
	isURL := strings.Contains(arg, "://")
	if sha != "" {
		b, err := hex.DecodeString(sha)
		if err != nil || len(b) != sha256.Size {
			return bundleArg{}, usageErr("--sha256 %q: want 64 hex digits", sha)
		}
		sha = strings.ToLower(sha)
	}
	if !isURL {
		if sha == "" {
			return bundleArg{path: arg}, nil
		}
		if !strings.HasSuffix(arg, ".tar.zst") {
			return bundleArg{}, usageErr("--sha256 checks a .tar.zst archive or an https:// URL of one, not %q", arg)
		}
		return bundleArg{path: arg, sha256: sha}, nil // checked as it is extracted
	}
	u, err := url.Parse(arg)
	switch {
	case err != nil:
		return bundleArg{}, usageErr("bundle URL %q: %v", arg, err)
	case u.Scheme != "https":
		return bundleArg{}, usageErr("bundle URL %q: only https:// is accepted", arg)
	case u.Host == "" || !strings.HasSuffix(u.Path, ".tar.zst"):
		return bundleArg{}, usageErr("bundle URL %q: want https://HOST/.../NAME.tar.zst", arg)
	case u.User != nil:
		return bundleArg{}, usageErr("bundle URL: credentials in a URL are refused")
	case sha == "":
		return bundleArg{}, usageErr("a bundle URL needs --sha256 HEX, the archive's SHA-256")
	}
	dir := env.Getenv(DownloadsEnv)
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return bundleArg{}, fmt.Errorf("download: no user cache folder (set %s): %w", DownloadsEnv, err)
		}
		dir = filepath.Join(c, "finrepro", "bundles")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return bundleArg{}, fmt.Errorf("download: %w", err)
	}
	dst := filepath.Join(dir, sha+".tar.zst")
	if _, err := os.Lstat(dst); err == nil {
		if err := checkSHA256(dst, sha); err == nil {
			fmt.Fprintf(env.Stderr, "using %s, downloaded before from %s\n", dst, u.Redacted())
			return bundleArg{path: dst}, nil
		}
		// A damaged earlier download is replaced.
		if err := os.Remove(dst); err != nil {
			return bundleArg{}, fmt.Errorf("download: %w", err)
		}
	}
	fmt.Fprintf(env.Stderr, "downloading %s to %s\n", u.Redacted(), dst)
	if err := download(ctx, u.String(), dir, dst, sha); err != nil {
		return bundleArg{}, err
	}
	return bundleArg{path: dst}, nil
}

// download fetches url into a temporary file of dir, checks its length
// and SHA-256 and renames it to dst.
func download(ctx context.Context, url, dir, dst, sha string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	resp, err := downloadClient().Do(req)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("download: %s: HTTP %s", req.URL.Redacted(), resp.Status)
	}
	if resp.ContentLength > maxDownload {
		return fmt.Errorf("download: %s: %d bytes, more than the %d accepted", req.URL.Redacted(), resp.ContentLength, int64(maxDownload))
	}
	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing left to remove
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, maxDownload+1))
	if err == nil && n > maxDownload {
		err = fmt.Errorf("more than %d bytes", int64(maxDownload))
	}
	if err == nil && resp.ContentLength >= 0 && n != resp.ContentLength {
		err = fmt.Errorf("truncated: %d of %d bytes", n, resp.ContentLength)
	}
	if err != nil {
		tmp.Close()
		return &results.IntegrityError{Err: fmt.Errorf("download: %s: %w", req.URL.Redacted(), err)}
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("download: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return &results.IntegrityError{Err: fmt.Errorf("download: %s: sha256 %s, --sha256 says %s (%d bytes); not kept", req.URL.Redacted(), got, sha, n)}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	return nil
}

// checkSHA256 checks that the file at p has the SHA-256 sha.
func checkSHA256(p, sha string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sha {
		return errors.New(p + ": sha256 " + got + ", --sha256 says " + sha)
	}
	return nil
}
