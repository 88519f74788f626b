package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// allWorkbook is the name of the combined workbook, without extension.
const allWorkbook = "all"

// WriteAll writes every table of every result under the folder out:
//
//	xlsx/<benchmark>.xlsx            one workbook per result
//	xlsx/all.xlsx                    every table of every result
//	csv/<benchmark>/<table>.csv
//	json/<benchmark>/<table>.json
//	latex/<benchmark>/<table>.tex
//
// A result's workbook is marked synthetic when prov.Synthetic or the
// result is; the combined one when prov.Synthetic or any result is. It
// returns the written paths relative to out, with forward slashes,
// sorted. Benchmark and table names must be file names (letters, digits,
// '.', '-', '_', not starting with '.'), unique, and no benchmark may be
// called "all".
func WriteAll(out string, res []*analysis.Result, prov Provenance) ([]string, error) {
	if err := checkNames(res); err != nil {
		return nil, fmt.Errorf("report: write %s: %w", out, err)
	}
	var paths []string
	put := func(rel string, write func(io.Writer) error) error {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return err
		}
		if err := writeFile(filepath.Join(out, filepath.FromSlash(rel)), b.Bytes()); err != nil {
			return fmt.Errorf("report: write %s: %w", rel, err)
		}
		paths = append(paths, rel)
		return nil
	}
	var all []*analysis.Table
	allProv := prov
	for _, r := range res {
		p := prov
		p.Synthetic = prov.Synthetic || r.Synthetic
		allProv.Synthetic = allProv.Synthetic || r.Synthetic
		all = append(all, r.Tables...)
		title := r.Title
		if title == "" {
			title = r.Benchmark
		}
		if err := put(path.Join("xlsx", r.Benchmark+".xlsx"), func(w io.Writer) error {
			return WriteWorkbook(w, title, r.Tables, p)
		}); err != nil {
			return nil, err
		}
		for _, t := range r.Tables {
			for _, f := range []struct {
				dir, ext string
				write    func(io.Writer, *analysis.Table) error
			}{
				{"csv", ".csv", WriteCSV},
				{"json", ".json", WriteJSON},
				{"latex", ".tex", WriteLaTeX},
			} {
				if err := put(path.Join(f.dir, r.Benchmark, t.Name+f.ext), func(w io.Writer) error {
					return f.write(w, t)
				}); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := put(path.Join("xlsx", allWorkbook+".xlsx"), func(w io.Writer) error {
		return WriteWorkbook(w, "All results", all, allProv)
	}); err != nil {
		return nil, err
	}
	slices.Sort(paths)
	return paths, nil
}

// checkNames reports benchmark and table names that cannot be file names
// or would overwrite each other.
func checkNames(res []*analysis.Result) error {
	benches := map[string]bool{}
	for _, r := range res {
		if err := fileName(r.Benchmark); err != nil {
			return fmt.Errorf("benchmark %q: %w", r.Benchmark, err)
		}
		if strings.EqualFold(r.Benchmark, allWorkbook) {
			return fmt.Errorf("benchmark %q: name taken by the combined workbook", r.Benchmark)
		}
		if benches[strings.ToLower(r.Benchmark)] {
			return fmt.Errorf("benchmark %q: duplicate", r.Benchmark)
		}
		benches[strings.ToLower(r.Benchmark)] = true
		tables := map[string]bool{}
		for _, t := range r.Tables {
			if t == nil {
				return fmt.Errorf("benchmark %s: nil table", r.Benchmark)
			}
			if err := fileName(t.Name); err != nil {
				return fmt.Errorf("benchmark %s: table %q: %w", r.Benchmark, t.Name, err)
			}
			if tables[strings.ToLower(t.Name)] {
				return fmt.Errorf("benchmark %s: table %q: duplicate", r.Benchmark, t.Name)
			}
			tables[strings.ToLower(t.Name)] = true
		}
	}
	return nil
}

// fileName reports a name that is not a safe, portable file name.
func fileName(s string) error {
	if s == "" || len(s) > 100 || s[0] == '.' {
		return fmt.Errorf("not a file name")
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return fmt.Errorf("not a file name: %q not allowed", r)
		}
	}
	return nil
}

// writeFile writes data to name through a temporary file in the same
// folder, renamed into place, so that an interrupted run never leaves a
// half-written output under the final name.
func writeFile(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(name)+"-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		os.Remove(tmp.Name()) // best effort: the error that matters is err
		return err
	}
	return nil
}

// WriteSums writes out/SHA256SUMS in the format of sha256sum (and
// "sha256sum -c" reads): for every path, relative to out with forward
// slashes, its SHA-256 in lower-case hex, two spaces and the path, one
// line each, sorted by path. Paths with a newline or backslash, absolute
// paths and paths leaving out are refused.
func WriteSums(out string, paths []string) error {
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var b bytes.Buffer
	for _, p := range sorted {
		if p == "" || strings.ContainsAny(p, "\n\r\\") || path.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) {
			return fmt.Errorf("report: sums %s: bad path %q", out, p)
		}
		sum, err := hashFile(filepath.Join(out, filepath.FromSlash(p)))
		if err != nil {
			return fmt.Errorf("report: sums: %w", err)
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum), p)
	}
	if err := writeFile(filepath.Join(out, "SHA256SUMS"), b.Bytes()); err != nil {
		return fmt.Errorf("report: sums %s: %w", out, err)
	}
	return nil
}

// hashFile returns the SHA-256 of the file's contents.
func hashFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // read only: a close error loses nothing
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}
