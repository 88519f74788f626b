package results

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxManifestBytes caps a bundle's manifest.json.
const MaxManifestBytes = MaxLine

// openRegular opens path for reading when it is a regular file, refusing
// anything else (a link, a device, a FIFO, a socket) before opening it,
// and opening without following a link or waiting on a FIFO where the
// platform allows (openFlags), in case the file is swapped meanwhile.
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %s, not a regular file", path, fileKind(st.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fst, err := f.Stat()
	if err == nil && (!fst.Mode().IsRegular() || !os.SameFile(st, fst)) {
		err = fmt.Errorf("%s: replaced while being opened", path)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fst, nil
}

// fileKind names the type of a file mode, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a folder"
	}
	return "a special file"
}

// readRegular reads the regular file at path, refusing one larger than
// limit bytes.
func readRegular(path string, limit int64) ([]byte, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s: more than the limit of %d bytes", path, limit)
	}
	return b, err
}

// errSizeChanged is a file that grew or shrank while it was hashed.
var errSizeChanged = errors.New("size changed while hashing")

// hashRegular hashes the regular file at path, reading at most max bytes
// (-1: no bound) and stopping within one buffer of ctx being done. It
// returns the size and the hex SHA-256; a file larger than max returns its
// size unhashed.
func hashRegular(ctx context.Context, path string, max int64) (int64, string, error) {
	f, st, err := openRegular(path)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if max >= 0 && st.Size() != max {
		return st.Size(), "", nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(ctxReader{ctx, f}, st.Size()+1))
	if err != nil {
		return n, "", err
	}
	if n != st.Size() {
		return n, "", fmt.Errorf("%s: %w", path, errSizeChanged)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// A ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(b)
}
