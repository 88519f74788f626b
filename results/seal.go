package results

import (
	"fmt"
	"os"
	"path/filepath"
)

// Kinds of a Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// A Change is one file that differs between two file lists: added,
// removed, or changed (another size or hash). OldSize is 0 for an added
// file and NewSize 0 for a removed one.
type Change struct {
	Path    string
	Kind    string
	OldSize int64
	NewSize int64
}

func (c Change) String() string {
	switch c.Kind {
	case Added:
		return fmt.Sprintf("added   %s (%d bytes)", c.Path, c.NewSize)
	case Removed:
		return fmt.Sprintf("removed %s (was %d bytes)", c.Path, c.OldSize)
	}
	return fmt.Sprintf("changed %s (%d -> %d bytes)", c.Path, c.OldSize, c.NewSize)
}

// DiffFiles compares two manifests' file lists (each sorted by path, as
// ParseManifest and Seal keep them) and returns the changes from a to b,
// sorted by path.
func DiffFiles(a, b []File) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Path < b[j].Path):
			out = append(out, Change{Path: a[i].Path, Kind: Removed, OldSize: a[i].Size})
			i++
		case i == len(a) || b[j].Path < a[i].Path:
			out = append(out, Change{Path: b[j].Path, Kind: Added, NewSize: b[j].Size})
			j++
		default:
			if a[i].Size != b[j].Size || a[i].SHA256 != b[j].SHA256 {
				out = append(out, Change{Path: a[i].Path, Kind: Changed, OldSize: a[i].Size, NewSize: b[j].Size})
			}
			i++
			j++
		}
	}
	return out
}

// Reseal recomputes the manifest of the bundle folder dir after a
// deliberate edit: its name, benchmarks, producer and synthetic flag are
// kept, and the files are listed as Seal lists them, from verified (the
// files of the manifest as this process verified them, or nil) and
// written (what it changed since). It returns the new manifest and what
// changed. A folder without a readable manifest is not a bundle and is
// refused, so that Reseal never turns an arbitrary folder into one.
func Reseal(dir string, verified []File, written []string) (*Manifest, []Change, error) {
	if _, err := os.Stat(filepath.Join(dir, ManifestName)); err != nil {
		return nil, nil, fmt.Errorf("seal: %s is not a bundle (no %s)", dir, ManifestName)
	}
	b, err := OpenBundle(dir)
	if err != nil {
		return nil, nil, err
	}
	m, err := Seal(dir, *b.Manifest, verified, written)
	if err != nil {
		return nil, nil, err
	}
	return m, DiffFiles(b.Manifest.Files, m.Files), nil
}
