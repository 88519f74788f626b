package results

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/finrepro/finrepro/internal/regular"
)

// MaxManifestBytes caps a bundle's manifest.json.
const MaxManifestBytes = MaxLine

// errSizeChanged is a file that grew or shrank while it was hashed.
var errSizeChanged = errors.New("size changed while hashing")

// hashRegular hashes the regular file at path, reading at most max bytes
// (-1: no bound) and stopping within one buffer of ctx being done. It
// returns the size and the hex SHA-256; a file larger than max returns its
// size unhashed.
func hashRegular(ctx context.Context, path string, max int64) (int64, string, error) {
	f, st, err := regular.Open(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if max >= 0 && st.Size() != max {
		return st.Size(), "", nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(regular.Reader{Ctx: ctx, R: f}, st.Size()+1))
	if err != nil {
		return n, "", err
	}
	if n != st.Size() {
		return n, "", fmt.Errorf("%s: %w", path, errSizeChanged)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
