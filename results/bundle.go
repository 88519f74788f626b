package results

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/finrepro/finrepro/internal/regular"
)

// BundleFormat is the format line of a bundle manifest this version reads
// and writes.
const BundleFormat = "finrepro-bundle/1"

// ManifestName is the file name of a bundle's manifest.
const ManifestName = "manifest.json"

// AliasesName is the optional alias table at a bundle's root: CSV with
// the columns system, benchmark and name, mapping the name a benchmark
// gives a system to the one name shown across benchmarks.
const AliasesName = "aliases.csv"

// Standard folders of a bundle.
const (
	CacheDir     = "cache"     // the exchange store
	InputsDir    = "inputs"    // inputs/<benchmark>/...: tasks, rubrics, prompts, configuration
	PublishedDir = "published" // published/<benchmark>/<table>.csv: a paper's published tables
)

// A Manifest describes a bundle: what it holds and the SHA-256 of every
// file. See docs/bundle.md.
type Manifest struct {
	Format     string   `json:"format"`
	Name       string   `json:"name"`
	Benchmarks []string `json:"benchmarks"`
	// Producer says what made the bundle, e.g. "finrepro demo --scale small --seed 1".
	Producer string `json:"producer"`
	// Synthetic is true when any exchange in the bundle was simulated.
	Synthetic bool `json:"synthetic"`
	// Files lists every file of the bundle but the manifest, sorted by path.
	Files []File `json:"files"`
}

// A File is one bundle file in a manifest.
type File struct {
	Path   string `json:"path"` // slash-separated, relative to the bundle root
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ParseManifest decodes and checks a manifest: known format, relative
// clean paths, sorted and unique, well-formed hashes.
func ParseManifest(b []byte, file string) (*Manifest, error) {
	var m Manifest
	if len(b) > MaxLine {
		return nil, Errorf(file, 0, "", "manifest larger than %d bytes", MaxLine)
	}
	if err := DecodeStrict(b, &m); err != nil {
		return nil, jsonError(file, 0, err)
	}
	if m.Format != BundleFormat {
		return nil, Errorf(file, 0, "format", "got %q, want %q", m.Format, BundleFormat)
	}
	if m.Name == "" {
		return nil, Errorf(file, 0, "name", "empty")
	}
	for i, f := range m.Files {
		field := fmt.Sprintf("files[%d]", i)
		if !ValidPath(f.Path) || f.Path == ManifestName {
			return nil, Errorf(file, 0, field+".path", "invalid path %q", f.Path)
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return nil, Errorf(file, 0, field+".path", "%q not sorted after %q or repeated", f.Path, m.Files[i-1].Path)
		}
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != sha256.Size {
			return nil, Errorf(file, 0, field+".sha256", "not a SHA-256 hex digest")
		}
		if f.Size < 0 {
			return nil, Errorf(file, 0, field+".size", "negative")
		}
	}
	return &m, nil
}

// ValidPath reports whether p is a clean, relative, slash-separated path
// that stays inside its root.
func ValidPath(p string) bool {
	return p != "" && fs.ValidPath(p) && p != "." && !strings.Contains(p, `\`)
}

// A Bundle is an opened bundle folder.
type Bundle struct {
	Dir      string
	Manifest *Manifest
}

// OpenBundle reads the manifest of the bundle folder dir. It does not hash
// the files; call Verify for that.
// A path that is no bundle folder (see CheckBundlePath) is a
// *NotBundleError; a manifest that cannot be read or parsed is an
// *IntegrityError.
func OpenBundle(dir string) (*Bundle, error) {
	if err := CheckBundlePath(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	file := filepath.Join(dir, ManifestName)
	b, err := regular.Read(file, MaxManifestBytes)
	if err != nil {
		return nil, &IntegrityError{fmt.Errorf("bundle: %w", err)}
	}
	m, err := ParseManifest(b, file)
	if err != nil {
		return nil, &IntegrityError{err}
	}
	return &Bundle{Dir: dir, Manifest: m}, nil
}

// Has reports whether the bundle holds benchmark name.
func (b *Bundle) Has(name string) bool { return slices.Contains(b.Manifest.Benchmarks, name) }

// CachePath is the folder of the bundle's exchange store.
func (b *Bundle) CachePath() string { return filepath.Join(b.Dir, CacheDir) }

// Inputs is the file system of one benchmark's inputs (inputs/<benchmark>).
func (b *Bundle) Inputs(benchmark string) fs.FS {
	return os.DirFS(filepath.Join(b.Dir, InputsDir, benchmark))
}

// Published reads the published tables of benchmark, sorted by name; none
// when the bundle carries none.
func (b *Bundle) Published(benchmark string) ([]*CSVTable, error) {
	dir := filepath.Join(b.Dir, PublishedDir, benchmark)
	ents, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bundle: %w", err)
	}
	var out []*CSVTable
	for _, e := range ents {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		f, _, err := regular.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("bundle: %w", err)
		}
		t, err := ReadCSV(f, path.Join(PublishedDir, benchmark, e.Name()))
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// A Problem is one thing wrong with a bundle.
type Problem struct {
	Path string
	Msg  string
}

func (p Problem) String() string { return p.Path + ": " + p.Msg }

// Verify hashes every file and reports every problem: a listed file that
// is missing, is not a regular file (links, devices, FIFOs and sockets are
// refused without being opened), has another size or hash, and a file
// that is not listed. It reads no more of a file than the manifest
// declares and returns ctx's error soon after ctx is done.
func (b *Bundle) Verify(ctx context.Context) ([]Problem, error) {
	var probs []Problem
	listed := make(map[string]bool, len(b.Manifest.Files))
	type hashed struct {
		size int64
		sum  string
		err  error
	}
	// Files are hashed GOMAXPROCS at a time and checked in manifest order.
	got := make([]hashed, len(b.Manifest.Files))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, f := range b.Manifest.Files {
		slots <- struct{}{}
		if ctx.Err() != nil {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			h := &got[i]
			h.size, h.sum, h.err = hashRegular(ctx, filepath.Join(b.Dir, filepath.FromSlash(f.Path)), f.Size)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, f := range b.Manifest.Files {
		listed[f.Path] = true
		size, sum, err := got[i].size, got[i].sum, got[i].err
		switch {
		case os.IsNotExist(err):
			probs = append(probs, Problem{f.Path, "missing"})
		case err != nil:
			probs = append(probs, Problem{f.Path, err.Error()})
		case size != f.Size:
			probs = append(probs, Problem{f.Path, fmt.Sprintf("size %d, manifest says %d", size, f.Size)})
		case sum != f.SHA256:
			probs = append(probs, Problem{f.Path, fmt.Sprintf("sha256 %s, manifest says %s", sum, f.SHA256)})
		}
	}
	files, err := listFiles(b.Dir)
	if err != nil {
		return probs, err
	}
	for _, p := range files {
		if !listed[p] {
			probs = append(probs, Problem{p, "not listed in the manifest"})
		}
	}
	return probs, nil
}

// Seal writes dir/manifest.json from m with its Files: every file under
// dir but the manifest, with its size and SHA-256. verified is a file
// list this process has checked against the files of dir (a manifest it
// verified, or sealed), and written the slash paths relative to dir that
// it has written, created or removed since; a path ending in "/" stands
// for every file below it. A file of verified that is not written and
// still has its size keeps its hash from verified; every other file is
// hashed. With no verified list every file is hashed.
func Seal(dir string, m Manifest, verified []File, written []string) (*Manifest, error) {
	trusted := make(map[string]File, len(verified))
	for _, f := range verified {
		trusted[f.Path] = f
	}
	wrote := func(p string) bool {
		for _, w := range written {
			if p == w || strings.HasSuffix(w, "/") && strings.HasPrefix(p, w) {
				return true
			}
		}
		return false
	}
	m.Format = BundleFormat
	m.Files = nil
	files, err := listFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, p := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if f, ok := trusted[p]; ok && !wrote(p) {
			if st, err := os.Lstat(full); err == nil && st.Mode().IsRegular() && st.Size() == f.Size {
				m.Files = append(m.Files, f)
				continue
			}
		}
		size, sum, err := hashRegular(context.Background(), full, -1)
		if err != nil {
			return nil, fmt.Errorf("bundle: seal: %w", err)
		}
		m.Files = append(m.Files, File{Path: p, Size: size, SHA256: sum})
	}
	b, err := json.MarshalIndent(&m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("bundle: seal: %w", err)
	}
	return &m, nil
}

// listFiles lists the regular files under dir as sorted slash paths,
// leaving out the manifest. Any other kind of entry (symlink, device) is
// an error: a bundle holds plain files only.
func listFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !d.Type().IsRegular() {
			return fmt.Errorf("bundle: %s: not a regular file", rel)
		}
		if rel != ManifestName {
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}
