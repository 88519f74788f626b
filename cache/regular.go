package cache

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Bounds of the store's small files; the pack index is bounded by
// maxIndexFor.
const (
	maxFormatBytes = 256          // FORMAT
	maxDictBytes   = 4 * dictSize // a dictionary
)

// openRegular opens a store file for reading when it is a regular file:
// a link, a device, a FIFO or a socket is refused before it is opened,
// and the open neither follows a link nor waits on a FIFO where the
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
