package report

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/finrepro/finrepro/analysis"
)

// allWorkbook is the name of the combined workbook, without extension.
const allWorkbook = "all"

// A FileSum is the SHA-256 of the bytes of an output file, by path
// relative to the output folder with forward slashes.
type FileSum struct {
	Path string
	Sum  [sha256.Size]byte
}

// Paths returns the paths of sums, in their order.
func Paths(sums []FileSum) []string {
	paths := make([]string, len(sums))
	for i, s := range sums {
		paths[i] = s.Path
	}
	return paths
}

// WriteAllHashed writes every table of every result under the folder out:
//
//	xlsx/<benchmark>.xlsx            one workbook per result
//	xlsx/all.xlsx                    every table of every result
//	csv/<benchmark>/<table>.csv
//	json/<benchmark>/<table>.json
//	latex/<benchmark>/<table>.tex
//	json/<benchmark>/items.jsonl     the result's item records, if any
//	csv/<benchmark>/items.csv
//	csv/<benchmark>/README           when synthetic
//	latex/<benchmark>/README         when synthetic
//
// A result is synthetic when prov.Synthetic or the result is; its
// workbook, JSON, LaTeX and item records then say so (see SyntheticNote),
// and a README beside its CSV and LaTeX files. The combined workbook is
// synthetic when prov.Synthetic or any result is. It
// returns every written path relative to out, with forward slashes,
// sorted, with the SHA-256 of its bytes as written (what WriteSumsOf
// needs, without reading the files back). Benchmark and table names must be file names (letters, digits,
// '.', '-', '_', not starting with '.'), unique, and no benchmark may be
// called "all".
func WriteAllHashed(out string, res []*analysis.Result, prov Provenance) ([]FileSum, error) {
	return writeJobs(out, res, prov, func(job) bool { return true })
}

// WriteItemsHashed is WriteAllHashed for the item records alone
// (json/BENCHMARK/items.jsonl and csv/BENCHMARK/items.csv): written
// first, they let the caller drop what the records are generated from
// before the other files are written.
func WriteItemsHashed(out string, res []*analysis.Result, prov Provenance) ([]FileSum, error) {
	return writeJobs(out, res, prov, func(j job) bool { return j.items })
}

// WriteTablesHashed is WriteAllHashed for every file but the item
// records (see WriteItemsHashed); Files still lists them.
func WriteTablesHashed(out string, res []*analysis.Result, prov Provenance) ([]FileSum, error) {
	return writeJobs(out, res, prov, func(j job) bool { return !j.items })
}

// writeJobs writes the files of the jobs of res that keep selects.
func writeJobs(out string, res []*analysis.Result, prov Provenance, keep func(job) bool) ([]FileSum, error) {
	if err := checkNames(res); err != nil {
		return nil, fmt.Errorf("report: write %s: %w", out, err)
	}
	// every file is rendered and written by its own job, at most
	// GOMAXPROCS at once; the paths and the first error (in job order) do
	// not depend on the schedule
	root, err := openOut(out)
	if err != nil {
		return nil, fmt.Errorf("report: write %s: %w", out, err)
	}
	defer root.Close()
	jobs := slices.DeleteFunc(plan(res, prov), func(j job) bool { return !keep(j) })
	// the combined workbook is the slowest job: start it first
	slices.Reverse(jobs)
	errs := make([]error, len(jobs))
	sums := make([]FileSum, len(jobs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, j := range jobs {
		g.Go(func() error {
			if j.stream {
				sum, err := writeStream(root, j.rel, j.write)
				if err != nil {
					errs[i] = fmt.Errorf("report: write %s: %w", j.rel, err)
				}
				sums[i] = FileSum{j.rel, sum}
				return nil
			}
			var b bytes.Buffer
			if err := j.write(&b); err != nil {
				errs[i] = err
				return nil
			}
			sums[i] = FileSum{j.rel, sha256.Sum256(b.Bytes())}
			if err := writeFile(root, j.rel, b.Bytes()); err != nil {
				errs[i] = fmt.Errorf("report: write %s: %w", j.rel, err)
			}
			return nil
		})
	}
	g.Wait()
	for i := range jobs {
		// the first error of the files in the order they were listed
		if err := errs[len(jobs)-1-i]; err != nil {
			return nil, err
		}
	}
	slices.SortFunc(sums, func(a, b FileSum) int { return strings.Compare(a.Path, b.Path) })
	return sums, nil
}

// Files returns the paths WriteAll writes for res and prov, relative to
// its output folder, with forward slashes, sorted: what a page linking
// the outputs can list before they are written.
func Files(res []*analysis.Result, prov Provenance) []string {
	var paths []string
	for _, j := range plan(res, prov) {
		paths = append(paths, j.rel)
	}
	slices.Sort(paths)
	return paths
}

// A job renders one output file.
type job struct {
	rel   string // path relative to the output folder, slash-separated
	write func(io.Writer) error
	// stream writes the file as it is rendered (see writeStream) instead
	// of in memory first: for the item records, tens of megabytes at full
	// scale.
	stream bool
	// items is true for the item records' files.
	items bool
}

// SyntheticNote is what every output of synthetic results says about
// them: the first row of a workbook's README and Provenance sheets, a
// field of each JSON file, a comment line of each LaTeX file and the
// README beside the CSV and LaTeX files.
const SyntheticNote = "SYNTHETIC DATA: some or all results come from simulated replies, not from real model outputs; they show how finrepro works, not how the systems perform."

// ReadmeName is the name of the note WriteAll puts beside the CSV and
// LaTeX files of synthetic results.
const ReadmeName = "README"

// plan lists the files WriteAll writes for res, in listing order.
func plan(res []*analysis.Result, prov Provenance) []job {
	var jobs []job
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
		synth := p.Synthetic
		jobs = append(jobs, job{rel: path.Join("xlsx", r.Benchmark+".xlsx"), write: func(w io.Writer) error {
			return WriteWorkbook(w, title, r.Tables, p)
		}})
		for _, t := range r.Tables {
			for _, f := range []struct {
				dir, ext string
				write    func(io.Writer, *analysis.Table, bool) error
			}{
				{"csv", ".csv", func(w io.Writer, t *analysis.Table, _ bool) error { return WriteCSV(w, t) }},
				{"json", ".json", writeJSON},
				{"latex", ".tex", writeLaTeX},
			} {
				jobs = append(jobs, job{rel: path.Join(f.dir, r.Benchmark, t.Name+f.ext), write: func(w io.Writer) error {
					return f.write(w, t, synth)
				}})
			}
		}
		if r.Items != nil {
			jobs = append(jobs,
				job{rel: path.Join("json", r.Benchmark, ItemsName+".jsonl"), stream: true, items: true, write: func(w io.Writer) error {
					return WriteItemsJSONL(w, r.Items, synth)
				}},
				job{rel: path.Join("csv", r.Benchmark, ItemsName+".csv"), stream: true, items: true, write: func(w io.Writer) error {
					return WriteItemsCSV(w, r.Items)
				}})
		}
		if synth && (len(r.Tables) > 0 || r.Items != nil) {
			for _, dir := range []string{"csv", "latex"} {
				text := readme(title, dir)
				jobs = append(jobs, job{rel: path.Join(dir, r.Benchmark, ReadmeName), write: func(w io.Writer) error {
					_, err := io.WriteString(w, text)
					return err
				}})
			}
		}
	}
	jobs = append(jobs, job{rel: path.Join("xlsx", allWorkbook+".xlsx"), write: func(w io.Writer) error {
		return WriteCombinedWorkbook(w, "All results", all, allProv)
	}})
	return jobs
}

// readme is the note beside the dir files of a synthetic result.
func readme(title, dir string) string {
	what := "CSV files"
	if dir == "latex" {
		what = "LaTeX tables"
	}
	return fmt.Sprintf("%s: %s\n\n%s\n", oneLine(title), what, SyntheticNote)
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
			if strings.EqualFold(t.Name, ItemsName) {
				return fmt.Errorf("benchmark %s: table %q: name taken by the item records", r.Benchmark, t.Name)
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

// writeFile writes data to name (a slash path) under root as writeStream
// does; a file that already holds data is left alone without writing a
// temporary file.
func writeFile(root *os.Root, name string, data []byte) error {
	if Unchanged(root, filepath.FromSlash(name), data) {
		return nil
	}
	_, err := writeStream(root, name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
	return err
}

// writeStream writes what write renders to name (a slash path) under
// root, hashing the bytes on the way, so that a large file is never held
// in memory. The bytes go to a temporary file in the same folder; a file
// already at name that holds the same bytes is left alone, otherwise the
// temporary file is renamed into place, so that an interrupted run never
// leaves a half-written file under the final name, and a link planted
// under the name is replaced, not followed. The root keeps every write
// inside the output folder. It returns the SHA-256 of the bytes.
func writeStream(root *os.Root, name string, write func(io.Writer) error) (sum [sha256.Size]byte, err error) {
	name = filepath.FromSlash(name)
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return sum, err
	}
	var rnd [8]byte
	rand.Read(rnd[:]) // never fails
	tmpName := filepath.Join(filepath.Dir(name), ".tmp-"+filepath.Base(name)+"-"+hex.EncodeToString(rnd[:]))
	tmp, err := root.OpenFile(tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return sum, err
	}
	defer root.Remove(tmpName) // best effort; gone after the rename
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(tmp, h), 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	if sameFile(root, name, sum) {
		return sum, nil
	}
	return sum, root.Rename(tmpName, name)
}

// sameFile reports whether the regular file name under root has the
// SHA-256 sum.
func sameFile(root *os.Root, name string, sum [sha256.Size]byte) bool {
	st, err := root.Lstat(name)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close() // read only: a close error loses nothing
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), sum[:])
}

// openOut creates the output folder out when missing and opens it as a
// root for writeFile.
func openOut(out string) (*os.Root, error) {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	return os.OpenRoot(out)
}

// SumsName is the name of the file WriteSumsOf writes.
const SumsName = "SHA256SUMS"

// WriteSumsOf writes out/SHA256SUMS in the format of sha256sum (and
// "sha256sum -c" reads) from hashes the caller computed from the bytes it
// wrote (see WriteAllHashed), without reading the files: for every path,
// relative to out with forward slashes, its SHA-256 in lower-case hex,
// two spaces and the path, one line each, sorted by path. A path given
// twice must have the same hash; paths with a newline or backslash,
// absolute paths and paths leaving out are refused.
func WriteSumsOf(out string, sums []FileSum) error {
	sorted := slices.Clone(sums)
	slices.SortStableFunc(sorted, func(a, b FileSum) int { return strings.Compare(a.Path, b.Path) })
	b := make([]byte, 0, len(sorted)*(64+2+64))
	for i, s := range sorted {
		if err := checkSumPath(out, s.Path); err != nil {
			return err
		}
		if i > 0 && sorted[i-1].Path == s.Path {
			if sorted[i-1].Sum != s.Sum {
				return fmt.Errorf("report: sums %s: %s given twice with different hashes", out, s.Path)
			}
			continue
		}
		b = hex.AppendEncode(b, s.Sum[:])
		b = append(b, "  "...)
		b = append(b, s.Path...)
		b = append(b, '\n')
	}
	root, err := openOut(out)
	if err != nil {
		return fmt.Errorf("report: sums %s: %w", out, err)
	}
	defer root.Close()
	if err := writeFile(root, SumsName, b); err != nil {
		return fmt.Errorf("report: sums %s: %w", out, err)
	}
	return nil
}

// checkSumPath refuses a path SHA256SUMS cannot list: empty, with a
// newline or backslash, absolute or leaving out.
func checkSumPath(out, p string) error {
	if p == "" || strings.ContainsAny(p, "\n\r\\") || path.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("report: sums %s: bad path %q", out, p)
	}
	return nil
}

// Unchanged reports whether the regular file name under root holds
// exactly data (a link is never unchanged). A rerun into the
// same folder leaves such files (and their modification times) alone
// instead of rewriting them, which costs the file system far more than
// reading them. The file is read in chunks and compared as it is read,
// stopping at the first difference.
func Unchanged(root *os.Root, name string, data []byte) bool {
	st, err := root.Lstat(name)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(data)) {
		return false
	}
	f, err := root.Open(name)
	if err != nil {
		return false
	}
	defer f.Close() // read only: a close error loses nothing
	buf := make([]byte, 128<<10)
	for len(data) > 0 {
		n, err := io.ReadFull(f, buf[:min(len(buf), len(data))])
		if err != nil || !bytes.Equal(buf[:n], data[:n]) {
			return false
		}
		data = data[n:]
	}
	// the file may have grown since the Stat
	n, _ := f.Read(buf[:1])
	return n == 0
}
