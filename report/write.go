package report

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	root, err := openOut(out)
	if err != nil {
		return nil, fmt.Errorf("report: write %s: %w", out, err)
	}
	defer root.Close()
	return runJobs(root, slices.DeleteFunc(plan(res, prov), func(j job) bool { return !keep(j) }))
}

// runJobs writes the files of jobs under root and returns their sums,
// sorted by path, or the error of the first job (in the order given)
// that failed.
func runJobs(root *os.Root, jobs []job) ([]FileSum, error) {
	// every file is rendered and written by its own job, at most
	// GOMAXPROCS at once; the paths and the first error (in job order) do
	// not depend on the schedule. The combined workbook, last, is the
	// slowest job: start it first.
	jobs = slices.Clone(jobs)
	slices.Reverse(jobs)
	errs := make([]error, len(jobs))
	sumsOf := make([][]FileSum, len(jobs))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, j := range jobs {
		g.Go(func() error {
			// every file is written as it is rendered (see writeStreams)
			// instead of into a buffer first, which at 8x the full-scale
			// demo held up to 2.1 MB (the largest JSON table) for each job
			// running
			names, write := []string{j.rel}, func(ws []io.Writer) error { return j.write(ws[0]) }
			what := j.rel
			if j.pair != nil {
				names, write = []string{j.rel, j.pairRel}, func(ws []io.Writer) error { return j.pair(ws[0], ws[1]) }
				what = j.rel + " and " + j.pairRel
			}
			ss, err := writeStreams(root, names, write)
			if err != nil {
				errs[i] = fmt.Errorf("report: write %s: %w", what, err)
				return nil
			}
			for k, name := range names {
				sumsOf[i] = append(sumsOf[i], FileSum{name, ss[k]})
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
	var sums []FileSum
	for _, ss := range sumsOf {
		sums = append(sums, ss...)
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
		if j.pair != nil {
			paths = append(paths, j.pairRel)
		}
	}
	slices.Sort(paths)
	return paths
}

// A job renders one output file (two for a pair) to a writer that
// writes it as it comes (see writeStreams).
type job struct {
	rel   string // path relative to the output folder, slash-separated
	write func(io.Writer) error
	// items is true for the item records' files.
	items bool
	// pair, when set, renders two files at once, rel and pairRel: the
	// item records as JSON Lines and as CSV, whose rows are generated
	// once for both (generating them again for each file was 5 % of a
	// full-scale reproduce rerun in perf).
	pair    func(w, w2 io.Writer) error
	pairRel string
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
			jobs = append(jobs, job{
				rel: path.Join("json", r.Benchmark, ItemsName+".jsonl"), pairRel: path.Join("csv", r.Benchmark, ItemsName+".csv"),
				items: true, pair: func(jsonl, csv io.Writer) error {
					return WriteItems(jsonl, csv, r.Items, synth)
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

// writeStream writes what write renders to name (a slash path) under
// root, hashing the bytes on the way, so that a large file is never held
// in memory. A file already at name is compared with the bytes as they
// come: while they match, nothing is written, so a rerun that renders the
// same bytes leaves the file (and its modification time) alone without
// writing or re-reading it (rewriting the item records into a temporary
// file and hashing the old file was about 5 % of a full-scale reproduce
// rerun in perf). From the first difference, the bytes go to
// a temporary file in the same folder (starting with the matched prefix,
// copied from the old file and checked against what was rendered), which
// is renamed into place, so that an interrupted run never leaves a
// half-written file under the final name, and a link planted under the
// name is replaced, not followed. The root keeps every write inside the
// output folder. It returns the SHA-256 of the bytes.
func writeStream(root *os.Root, name string, write func(io.Writer) error) (sum [sha256.Size]byte, err error) {
	sums, err := writeStreams(root, []string{name}, func(ws []io.Writer) error { return write(ws[0]) })
	if err != nil {
		return sum, err
	}
	return sums[0], nil
}

// writeStreams is writeStream for several files rendered together (the
// item records as JSON Lines and as CSV, from one pass over the rows).
func writeStreams(root *os.Root, names []string, write func([]io.Writer) error) ([][sha256.Size]byte, error) {
	fs := make([]*streamFile, len(names))
	ws := make([]io.Writer, len(names))
	bws := make([]*bufio.Writer, len(names))
	defer func() {
		for _, f := range fs {
			if f != nil {
				f.abort()
			}
		}
		for _, bw := range bws {
			if bw != nil {
				bw.Reset(nil)
				streamBuffers.Put(bw)
			}
		}
	}()
	for i, name := range names {
		f, err := openStream(root, filepath.FromSlash(name))
		if err != nil {
			return nil, err
		}
		fs[i] = f
		bws[i] = streamBuffers.Get().(*bufio.Writer)
		bws[i].Reset(f)
		ws[i] = bws[i]
	}
	err := write(ws)
	for _, bw := range bws {
		if err == nil {
			err = bw.Flush()
		}
	}
	if err != nil {
		return nil, err
	}
	sums := make([][sha256.Size]byte, len(fs))
	for i, f := range fs {
		if sums[i], err = f.finish(); err != nil {
			return nil, err
		}
	}
	return sums, nil
}

// streamBuffers keeps writeStreams' buffers between files: every output
// file goes through one, and a new 256 KB buffer for each would be 47 MB
// of allocation for the 188 files of a reproduce.
var streamBuffers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 256<<10) }}

// A streamFile is a file writeStream is writing: the bytes are compared
// with the old file while they match it, then written to a temporary file.
type streamFile struct {
	root          *os.Root
	name, tmpName string
	old           *os.File // the file in place while the bytes match it; nil when none
	oldSize       int64
	n             int64    // bytes written so far
	tmp           *os.File // nil while the bytes match old
	h             hash.Hash
	err           error // the first error; later writes fail with it
}

// openStream starts writing name under root (an OS path).
func openStream(root *os.Root, name string) (*streamFile, error) {
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	f := &streamFile{root: root, name: name, h: sha256.New()}
	if st, err := root.Lstat(name); err == nil && st.Mode().IsRegular() {
		if old, err := root.Open(name); err == nil {
			f.old, f.oldSize = old, st.Size()
		}
	}
	if f.old == nil {
		if err := f.openTemp(); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// openTemp creates the temporary file beside the final one.
func (f *streamFile) openTemp() error {
	var rnd [8]byte
	rand.Read(rnd[:]) // never fails
	f.tmpName = filepath.Join(filepath.Dir(f.name), ".tmp-"+filepath.Base(f.name)+"-"+hex.EncodeToString(rnd[:]))
	tmp, err := f.root.OpenFile(f.tmpName, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		f.tmpName = ""
		return err
	}
	f.tmp = tmp
	return nil
}

// diverge starts the temporary file once the bytes differ from the old
// file's after the first f.n: it copies those f.n bytes from the old
// file, checking that they still hash to what was rendered (prefix, the
// hash of the first f.n bytes), and closes the old file.
func (f *streamFile) diverge(prefix []byte) error {
	old := f.old
	f.old = nil
	defer old.Close() // read only: a close error loses nothing
	if err := f.openTemp(); err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f.tmp, h), io.NewSectionReader(old, 0, f.n)); err != nil {
		return err
	}
	if !bytes.Equal(h.Sum(nil), prefix) {
		return fmt.Errorf("%s changed while it was being rewritten", filepath.ToSlash(f.name))
	}
	return nil
}

func (f *streamFile) Write(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.old != nil {
		if f.n+int64(len(p)) <= f.oldSize && f.matches(p) {
			f.h.Write(p)
			f.n += int64(len(p))
			return len(p), nil
		}
		if f.err = f.diverge(f.h.Sum(nil)); f.err != nil {
			return 0, f.err
		}
	}
	f.h.Write(p)
	n, err := f.tmp.Write(p)
	f.n += int64(n)
	f.err = err
	return n, err
}

// matches reports whether the old file's next len(p) bytes are p; it
// reads them in chunks of a pooled buffer (a buffer of len(p) bytes
// would be allocated for every file of a rerun, and p may be a whole
// large write passed through the bufio.Writer).
func (f *streamFile) matches(p []byte) bool {
	bp := compareBuffers.Get().(*[]byte)
	defer compareBuffers.Put(bp)
	buf := *bp
	for len(p) > 0 {
		n, err := io.ReadFull(f.old, buf[:min(len(buf), len(p))])
		if err != nil || !bytes.Equal(buf[:n], p[:n]) {
			return false
		}
		p = p[n:]
	}
	return true
}

// finish completes the file and returns the hash of its bytes: an old
// file that held them all, and no more, is left in place; otherwise the
// temporary file replaces it.
func (f *streamFile) finish() (sum [sha256.Size]byte, err error) {
	if f.err != nil {
		return sum, f.err
	}
	if f.old != nil {
		// the file may have grown since the Lstat
		var one [1]byte
		if n, _ := f.old.Read(one[:]); n == 0 && f.n == f.oldSize {
			f.h.Sum(sum[:0])
			return sum, nil
		}
		if f.err = f.diverge(f.h.Sum(nil)); f.err != nil {
			return sum, f.err
		}
	}
	tmp := f.tmp
	f.tmp = nil
	if err := tmp.Close(); err != nil {
		return sum, err
	}
	if err := f.root.Rename(f.tmpName, f.name); err != nil {
		return sum, err
	}
	f.tmpName = ""
	f.h.Sum(sum[:0])
	return sum, nil
}

// abort closes what f holds and removes its temporary file, if any
// (best effort; nothing is left after finish).
func (f *streamFile) abort() {
	if f.old != nil {
		f.old.Close()
		f.old = nil
	}
	if f.tmp != nil {
		f.tmp.Close()
		f.tmp = nil
	}
	if f.tmpName != "" {
		f.root.Remove(f.tmpName)
		f.tmpName = ""
	}
}

// openOut creates the output folder out when missing and opens it as a
// root for writeStream.
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
	if _, err := writeStream(root, SumsName, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
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

// compareBuffers keeps the read buffers of Unchanged and of a
// streamFile comparing with the old file between calls: a full-scale
// site has 1,772 pages, and a new 128 KB buffer for each was 230 MB of
// allocation per reproduce rerun (bench/reproduce.sh).
var compareBuffers = sync.Pool{New: func() any { b := make([]byte, 128<<10); return &b }}

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
	bp := compareBuffers.Get().(*[]byte)
	defer compareBuffers.Put(bp)
	buf := *bp
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
