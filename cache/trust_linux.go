package cache

import (
	"os"
	"syscall"
)

// idOf returns the identity of a regular file.
func idOf(fi os.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileID{}, false
	}
	return fileID{
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		dev:   uint64(st.Dev),
		ino:   st.Ino,
	}, true
}
