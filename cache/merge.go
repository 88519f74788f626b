package cache

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/finrepro/finrepro/internal/regular"
)

// Merge moves the dictionaries and packs of the store src into the store
// dst (both folders on one file system, src typically extracted into
// dst's tmp folder and verified). A file dst already holds with the same
// content is left alone; with other content it is an error and nothing
// more is moved. It returns how many files it moved and how many were
// already present.
func Merge(src, dst string) (moved, same int, err error) {
	if !IsStore(src) {
		return 0, 0, fmt.Errorf("cache: merge: %s is not a cache", src)
	}
	for _, sub := range []string{dictsDir, packsDir} {
		root := filepath.Join(src, sub)
		var files []string
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) && p == root {
					return fs.SkipDir
				}
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return moved, same, fmt.Errorf("cache: merge: %w", err)
		}
		slices.Sort(files)
		for _, p := range files {
			rel, _ := filepath.Rel(src, p) // p is under src
			to := filepath.Join(dst, rel)
			if _, err := os.Lstat(to); err == nil {
				a, _, err1 := regular.Hash(context.Background(), p)
				b, _, err2 := regular.Hash(context.Background(), to)
				if err1 != nil || err2 != nil || a != b {
					return moved, same, fmt.Errorf("cache: merge: %s differs from the file already stored; not replaced", filepath.ToSlash(rel))
				}
				same++
				continue
			}
			if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
				return moved, same, fmt.Errorf("cache: merge: %w", err)
			}
			if err := os.Rename(p, to); err != nil {
				return moved, same, fmt.Errorf("cache: merge: %w", err)
			}
			if err := regular.SyncDir(filepath.Dir(to)); err != nil {
				return moved, same, fmt.Errorf("cache: merge: %w", err)
			}
			moved++
		}
	}
	return moved, same, nil
}

// IsStore reports whether dir is a cache: a folder whose FORMAT file names
// a store format this package reads.
func IsStore(dir string) bool {
	b, err := regular.Read(filepath.Join(dir, formatFile), maxFormatBytes)
	return err == nil && (string(b) == StoreFormat || string(b) == StoreFormat1)
}

// IsTmpDir reports whether dir is the folder of temporary files of a
// store, which archives leave out.
func IsTmpDir(dir string) bool {
	return filepath.Base(dir) == tmpDir && IsStore(filepath.Dir(dir))
}
