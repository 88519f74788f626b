package regular

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
)

// Hash returns the SHA-256 in hex and the size of the regular file at
// path, stopping soon after ctx is done.
func Hash(ctx context.Context, path string) (string, int64, error) {
	f, _, err := Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, Reader{Ctx: ctx, R: f})
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// SyncDir makes a rename in dir durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFile writes b to path durably: a temporary file in tmpDir (on
// path's file system), fsync, rename over path, fsync of path's folder. A
// crash leaves either the old file or the new one; the temporary file is
// removed on every error.
func WriteFile(tmpDir, path string, b []byte) error {
	f, err := os.CreateTemp(tmpDir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name()) // best effort: the temporary name is never read
		return err
	}
	return SyncDir(filepath.Dir(path))
}
