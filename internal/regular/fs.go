package regular

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
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
