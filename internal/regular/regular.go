// Package regular opens and reads files that must be regular files: the
// files of a bundle and of a store, which may come from a stranger. A
// link, a device, a FIFO or a socket is refused before it is opened, the
// open neither follows a link nor waits on a FIFO where the platform
// allows, and every read is bounded.
package regular

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Open opens path for reading when it is a regular file, checking the
// type with Lstat first and again on the opened file, in case the file is
// swapped meanwhile. It returns the file and its information.
func Open(path string) (*os.File, fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: %s, not a regular file", path, Kind(st.Mode()))
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
		f.Close() // read only: nothing to lose
		return nil, nil, err
	}
	return f, fst, nil
}

// Read reads the regular file at path, refusing one larger than limit
// bytes (also when it grows while being read).
func Read(path string, limit int64) ([]byte, error) {
	f, st, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read only: nothing to lose
	if st.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d", path, st.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s: more than the limit of %d bytes", path, limit)
	}
	return b, err
}

// A Reader stops reading once its context is done, so that a long copy
// honours Ctrl-C within one read.
type Reader struct {
	Ctx context.Context
	R   io.Reader
}

func (c Reader) Read(b []byte) (int, error) {
	if err := c.Ctx.Err(); err != nil {
		return 0, err
	}
	return c.R.Read(b)
}

// Kind names the type of a file mode, for messages.
func Kind(m fs.FileMode) string {
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
