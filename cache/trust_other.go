//go:build !linux

package cache

import "os"

// idOf returns no identity outside Linux: packs are then trusted only
// within the process that checked them (Options.CheckedPacks, Verify).
func idOf(os.FileInfo) (fileID, bool) { return fileID{}, false }
