package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/results"
)

// tempPrefix names the temporary folders bundle archives are extracted
// into, under the system's temporary folder.
const tempPrefix = "finrepro-bundle-"

// lockName is the file a running finrepro holds locked in each of its
// temporary folders; a folder whose lock is free was left by a process
// that died (kill -9) and is removed by the next run.
const lockName = ".lock"

// extractArchive extracts the bundle archive r into a new temporary folder
// and returns it with the function that removes it; on error nothing is
// left behind. When r can seek, the manifest is read first (writing
// nothing) and every member is then bounded by the size the manifest
// declares for it, checked before its first byte is written, so that a
// hostile archive costs at most the disk its manifest declares. Ctrl-C
// (ctx) stops the extraction and removes the folder. With sha (hex) the
// archive's SHA-256 is taken as it is extracted, then checked: a
// mismatch is an integrity error, and nothing is left behind.
func extractArchive(ctx context.Context, r io.Reader, name, sha string) (string, func(), error) {
	removeLeftovers()
	tmp, unlock, err := makeTemp()
	if err != nil {
		return "", func() {}, err
	}
	cleanup := func() {
		os.RemoveAll(tmp)
		unlock()
	}
	dir := filepath.Join(tmp, "bundle") // beside the lock file, not with it
	lim := archive.Limits{}
	if rs, ok := r.(io.ReadSeeker); ok {
		if lim.Declared, err = declaredSizes(ctx, rs, name); err != nil {
			cleanup()
			return "", func() {}, err
		}
	}
	h := sha256.New()
	if sha != "" {
		r = io.TeeReader(r, h)
	}
	err = archive.Read(ctx, r, dir, lim)
	if sha != "" && ctx.Err() == nil {
		// what extraction left unread is hashed too
		_, rerr := io.Copy(io.Discard, r)
		if got := hex.EncodeToString(h.Sum(nil)); rerr == nil && got != sha {
			cleanup()
			return "", func() {}, &results.IntegrityError{Err: errors.New(name + ": sha256 " + got + ", --sha256 says " + sha)}
		}
		if err == nil {
			err = rerr
		}
	}
	if err != nil {
		cleanup()
		return "", func() {}, fmt.Errorf("bundle %s: %w", name, err)
	}
	return dir, cleanup, nil
}

// declaredSizes reads the manifest of the bundle archive rs and returns
// the size of every member it declares (the manifest's own included),
// then rewinds rs. An archive without a manifest declares nothing (nil):
// opening it then fails on the missing manifest.
func declaredSizes(ctx context.Context, rs io.ReadSeeker, name string) (map[string]int64, error) {
	b, err := archive.ReadMember(ctx, rs, results.ManifestName, results.MaxManifestBytes)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", name, err)
	}
	if _, err := rs.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if b == nil {
		return nil, nil
	}
	m, err := results.ParseManifest(b, name+": "+results.ManifestName)
	if err != nil {
		return nil, &results.IntegrityError{Err: err}
	}
	sizes := map[string]int64{results.ManifestName: int64(len(b))}
	for _, f := range m.Files {
		sizes[f.Path] = f.Size
	}
	return sizes, nil
}

// makeTemp creates a temporary folder and holds its lock file locked
// until unlock.
func makeTemp() (dir string, unlock func(), err error) {
	dir, err = os.MkdirTemp("", tempPrefix)
	if err != nil {
		return "", nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lockFile(f)
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, func() { f.Close() }, nil
}

// leftoverAge is how old a temporary folder whose lock is free (or not
// yet made) must be to count as left behind: younger, its process may be
// between creating the folder and locking its lock file.
const leftoverAge = 10 * time.Second

// removeLeftovers removes the temporary folders of finrepro processes
// that died before their cleanup: those whose lock is free. Errors are
// ignored: what cannot be removed now is tried again next time.
func removeLeftovers() {
	ents, _ := os.ReadDir(os.TempDir())
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		dir := filepath.Join(os.TempDir(), e.Name())
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < leftoverAge {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR, 0)
		if err != nil {
			os.RemoveAll(dir) // old and never locked
			continue
		}
		if tryLock(f) {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
