package results

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ArchiveSuffix ends the name of a bundle archive.
const ArchiveSuffix = ".tar.zst"

// zstdMagic opens every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// A NotBundleError says that a path given as a bundle is none: it does not
// exist (Missing), is a file that is not a .tar.zst archive, a folder
// without manifest.json, or a .tar.zst that is not zstd data. Every
// command gives each kind the same exit code.
type NotBundleError struct {
	Path    string
	Reason  string
	Missing bool // nothing is at Path
}

func (e *NotBundleError) Error() string {
	return fmt.Sprintf("%s is not a bundle: %s", e.Path, e.Reason)
}

// Unwrap returns fs.ErrNotExist for a path where nothing is.
func (e *NotBundleError) Unwrap() error {
	if e.Missing {
		return fs.ErrNotExist
	}
	return nil
}

// CheckBundlePath returns a *NotBundleError when path is plainly not a
// bundle folder or archive, and nil otherwise (the bundle may still be
// damaged; opening and verifying it finds that).
func CheckBundlePath(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &NotBundleError{Path: path, Reason: "it does not exist", Missing: true}
	case err != nil:
		return nil // reported by whoever opens it
	case fi.IsDir():
		if _, err := os.Lstat(filepath.Join(path, ManifestName)); errors.Is(err, fs.ErrNotExist) {
			return &NotBundleError{Path: path, Reason: "a folder without " + ManifestName}
		}
	case !fi.Mode().IsRegular():
		return nil // refused as a special file by whoever opens it
	case !strings.HasSuffix(path, ArchiveSuffix):
		return &NotBundleError{Path: path, Reason: "a file that is not a " + ArchiveSuffix + " archive"}
	default:
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		head := make([]byte, len(zstdMagic))
		if _, err := io.ReadFull(f, head); err != nil || !bytes.Equal(head, zstdMagic) {
			return &NotBundleError{Path: path, Reason: "a " + ArchiveSuffix + " file that is not zstd data"}
		}
	}
	return nil
}
