package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// markerName is the file in an output folder that lists the files
// finrepro wrote there. A later run removes only files it lists, so that
// anything else in the folder (a user's csv/mydata.csv) survives.
const markerName = ".finrepro-outputs"

// markerHeader is the marker's first line.
const markerHeader = "# finrepro: the files below were written by finrepro; a later run into this folder removes only these"

// maxMarker bounds the marker finrepro reads (a hostile one costs bounded
// memory): a million paths of about 100 bytes.
const maxMarker = 100 << 20

// An outputFolder is a folder finrepro writes into: the files its
// marker listed when it was claimed.
type outputFolder struct {
	dir    string
	mu     sync.Mutex // held by note
	listed []string   // sorted, relative, slash-separated
}

// claimOutputFolder prepares out for writing: it creates out when
// absent; it reads the marker of a folder finrepro wrote before; it
// refuses (a usage error) a non-empty folder without a marker, since its
// files are someone else's, unless force. out must not be a link.
func claimOutputFolder(out string, force bool) (*outputFolder, error) {
	o := &outputFolder{dir: out}
	st, err := os.Lstat(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, os.MkdirAll(out, 0o755)
	case err != nil:
		return nil, err
	case st.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("output folder %s is a symbolic link; give the folder itself", out)
	case !st.IsDir():
		return nil, fmt.Errorf("output folder %s is not a folder", out)
	}
	f, err := os.Open(filepath.Join(out, markerName))
	if err == nil {
		defer f.Close()
		o.listed, err = parseMarker(io.LimitReader(f, maxMarker+1))
		if err != nil {
			return nil, fmt.Errorf("output folder %s: %s: %w", out, markerName, err)
		}
		return o, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	empty, err := isEmptyDir(out)
	if err != nil {
		return nil, err
	}
	if !empty && !force {
		return nil, usageErr("output folder %s is not empty and has no %s (the list of files finrepro wrote there): give a new or empty folder, or --force to write into it anyway (finrepro then replaces only the files it writes and removes nothing else)", out, markerName)
	}
	return o, nil
}

// finish removes the files the marker listed under the prefixes scope
// (every file when scope is empty) that are not in written, then folders
// this left empty, and writes the marker: the files listed outside scope
// and still there, and written. written are relative, slash-separated
// paths. Removal goes through an os.Root at the folder, so a marker
// cannot make finrepro remove anything outside it.
func (o *outputFolder) finish(written []string, scope ...string) error {
	in := func(p string) bool {
		return len(scope) == 0 || slices.ContainsFunc(scope, func(s string) bool { return strings.HasPrefix(p, s) })
	}
	keep := slices.Clone(written)
	slices.Sort(keep)
	keep = slices.Compact(keep)
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return err
	}
	defer root.Close()
	var removed, kept []string
	for _, p := range o.listed {
		if _, ok := slices.BinarySearch(keep, p); ok {
			continue
		}
		if !in(p) {
			if _, err := root.Lstat(filepath.FromSlash(p)); err == nil {
				kept = append(kept, p)
			}
			continue
		}
		if st, err := root.Lstat(filepath.FromSlash(p)); err != nil || st.IsDir() {
			continue // gone already, or a folder someone made there
		}
		if err := root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("output folder %s: %w", o.dir, err)
		}
		removed = append(removed, p)
	}
	// Deepest first: a folder goes only once empty, and out itself stays.
	var dirs []string
	for _, p := range removed {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs = append(dirs, d)
		}
	}
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range slices.Compact(dirs) {
		root.Remove(filepath.FromSlash(d)) // fails, as it should, when not empty
	}
	keep = append(keep, kept...)
	slices.Sort(keep)
	return writeMarker(o.dir, slices.Compact(keep))
}

// writeMarker writes the marker listing files, through a temporary file
// renamed into place.
func writeMarker(dir string, files []string) error {
	var b bytes.Buffer
	b.WriteString(markerHeader + "\n")
	for _, f := range files {
		b.WriteString(f + "\n")
	}
	tmp := filepath.Join(dir, markerName+".tmp")
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, markerName))
}

// parseMarker reads a marker: comment lines start with #; every other
// line is a path relative to the folder, slash-separated, that stays
// inside it. It returns the paths sorted and without duplicates; a path
// that leaves the folder, or a marker longer than maxMarker, is an error
// naming the line.
func parseMarker(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var out []string
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxMarker {
			return nil, fmt.Errorf("longer than %d bytes", maxMarker)
		}
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(line)) || path.Clean(line) != line || strings.Contains(line, "\\") {
			return nil, fmt.Errorf("line %d: %q is not a clean path inside the folder", n, line)
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
