// Package archive packs a folder (a bundle, a cache store) into one
// deterministic .tar.zst whose first member lists the SHA-256 of every
// other (Write), extracts such an archive only after each file's hash
// checks, within limits (Read, ReadMember), and scans folders and stores
// for secrets before anything is published (ScanSecrets, ScanStore).
package archive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/internal/regular"
	"github.com/klauspost/compress/zstd"
)

// SumsName is the first member of every archive: "<sha256 hex>  <path>\n"
// for each other member, sorted by path.
const SumsName = "SHA256SUMS"

// Limits bound what Read accepts; zero fields take the
// defaults.
type Limits struct {
	MaxFiles      int   // members, default 1,000,000
	MaxFileBytes  int64 // one member, default 4 GiB
	MaxTotalBytes int64 // all members, default 64 GiB
	// Declared, when not nil, is the size of every member but SHA256SUMS
	// (a bundle's manifest declares them): a member not in it or of
	// another size is refused before any byte of it is written, so that
	// the disk used is at most the sum of the declared sizes.
	Declared map[string]int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 1_000_000
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 4 << 30
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = 64 << 30
	}
	return l
}

// archiveTime is the modification time of every member, so that the same
// folder always gives the same archive.
var archiveTime = time.Unix(0, 0).UTC()

// Write writes the regular files under dir to w as a zstd-compressed
// tar: SHA256SUMS first, then the files sorted by path, with fixed times,
// modes and owners, so the same folder gives the same bytes. Temporary
// files of a store (its tmp folder) are left out; any other kind of entry
// than a regular file or folder is an error.
func Write(w io.Writer, dir string) error {
	files, err := archiveFiles(dir)
	if err != nil {
		return fmt.Errorf("cache: archive: %w", err)
	}
	var sums bytes.Buffer
	for _, f := range files {
		sum, _, err := regular.Hash(context.Background(), filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return fmt.Errorf("cache: archive: %w", err)
		}
		fmt.Fprintf(&sums, "%s  %s\n", sum, f)
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("cache: archive: %w", err)
	}
	tw := tar.NewWriter(zw)
	add := func(name string, size int64, r io.Reader) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: archiveTime, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		n, err := io.Copy(tw, r)
		if err == nil && n != size {
			err = fmt.Errorf("%s changed while archiving", name)
		}
		return err
	}
	if err := add(SumsName, int64(sums.Len()), &sums); err != nil {
		return fmt.Errorf("cache: archive: %w", err)
	}
	for _, name := range files {
		// opened as regular again: the file may have been swapped for a
		// link or a FIFO since it was hashed
		f, st, err := regular.Open(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			return fmt.Errorf("cache: archive: %w", err)
		}
		err = add(name, st.Size(), f)
		f.Close()
		if err != nil {
			return fmt.Errorf("cache: archive: %w", err)
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("cache: archive: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("cache: archive: %w", err)
	}
	return nil
}

// archiveFiles lists the regular files under dir as sorted slash paths,
// without the tmp folder of any store inside.
func archiveFiles(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if cache.IsTmpDir(p) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s: not a regular file", rel)
		}
		if rel == SumsName {
			return fmt.Errorf("%s: reserved name", rel)
		}
		out = append(out, rel)
		return nil
	})
	slices.Sort(out)
	return out, err
}

// Read extracts an archive written by Write into dir
// (created when missing). It refuses absolute or escaping paths, links and
// any other non-regular member, members beyond the limits, members not in
// SHA256SUMS or whose content does not match it, and a file that already
// exists in dir with other content; a file that exists with the same
// content is left as it is. Each file is written to a temporary name and
// renamed only once its hash checked, so dir never holds a partial or
// unverified file from the archive; the temporary file is removed on
// every error. With lim.Declared, a member's size is checked before any
// byte of it is written. Read stops soon after ctx is done.
func Read(ctx context.Context, r io.Reader, dir string, lim Limits) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cache: read archive: %w", err)
	}
	var declared int64 = -1
	if lim.Declared != nil {
		declared = 0
		for _, n := range lim.Declared {
			declared += n
		}
	}
	done := map[string]bool{}
	var written int64
	sums, err := walkArchive(ctx, r, lim, func(name string, size int64, body io.Reader, want string) (bool, error) {
		if lim.Declared != nil {
			n, ok := lim.Declared[name]
			switch {
			case !ok:
				return false, errors.New("not listed in the manifest")
			case size != n:
				return false, fmt.Errorf("%d bytes, the manifest declares %d", size, n)
			case written+size > declared:
				return false, fmt.Errorf("more bytes than the manifest declares in all (%d)", declared)
			}
		}
		if done[name] {
			return false, errors.New("repeated")
		}
		done[name] = true
		written += size
		return false, extract(ctx, body, size, dir, name, want)
	})
	if err != nil {
		return err
	}
	var missing []string
	for name := range sums {
		if !done[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return corruptf("cache: read archive: %d files listed in %s are missing, first %s", len(missing), SumsName, missing[0])
	}
	return nil
}

// ReadMember returns the member name of an archive written by
// Write, checked against the archive's SHA256SUMS, reading the
// archive only up to it and writing nothing; nil when there is none. A
// member larger than max is refused. It stops soon after ctx is done.
func ReadMember(ctx context.Context, r io.Reader, name string, max int64) ([]byte, error) {
	var out []byte
	_, err := walkArchive(ctx, r, Limits{}, func(n string, size int64, body io.Reader, want string) (bool, error) {
		if n != name {
			return false, nil
		}
		if size > max {
			return false, fmt.Errorf("%d bytes, more than the limit of %d", size, max)
		}
		b, err := io.ReadAll(io.LimitReader(body, size))
		if err != nil {
			return false, err
		}
		if int64(len(b)) != size {
			return false, io.ErrUnexpectedEOF
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
			return false, errors.New("content does not match " + SumsName)
		}
		out = b
		return true, nil
	})
	return out, err
}

// walkArchive reads the archive r: SHA256SUMS first, then each member
// passed to fn with its size, content and listed hash, after the checks
// every reader needs (type, path, limits, listed in SHA256SUMS). fn
// returns true to stop. It returns the sums.
func walkArchive(ctx context.Context, r io.Reader, lim Limits, fn func(name string, size int64, body io.Reader, want string) (bool, error)) (map[string]string, error) {
	lim = lim.withDefaults()
	zr, err := zstd.NewReader(bufio.NewReader(regular.Reader{Ctx: ctx, R: r}), zstd.WithDecoderMaxMemory(64<<20), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("cache: read archive: %w", err)
	}
	defer zr.Close()
	// The context is checked on both sides of the decoder: a few bytes of
	// input may decode to gigabytes.
	tr := tar.NewReader(regular.Reader{Ctx: ctx, R: io.LimitReader(zr, lim.MaxTotalBytes+int64(lim.MaxFiles+1)*2048)})
	var sums map[string]string
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, corruptf("cache: read archive: %v", err)
		}
		name := hdr.Name
		bad := func(msg string) error { return corruptf("cache: read archive: member %q: %s", name, msg) }
		if n >= lim.MaxFiles+1 {
			return nil, bad(fmt.Sprintf("more than %d files", lim.MaxFiles))
		}
		if hdr.Typeflag != tar.TypeReg {
			return nil, bad("not a regular file (links and devices are refused)")
		}
		if !fs.ValidPath(name) || name == "." || strings.Contains(name, `\`) {
			return nil, bad("path escapes the destination or is not clean")
		}
		if hdr.Size < 0 || hdr.Size > lim.MaxFileBytes {
			return nil, bad(fmt.Sprintf("size %d exceeds the limit of %d bytes", hdr.Size, lim.MaxFileBytes))
		}
		if total += hdr.Size; total > lim.MaxTotalBytes {
			return nil, bad(fmt.Sprintf("archive exceeds the limit of %d bytes", lim.MaxTotalBytes))
		}
		if n == 0 {
			if name != SumsName {
				return nil, bad("first member must be " + SumsName)
			}
			if sums, err = parseSums(io.LimitReader(tr, hdr.Size)); err != nil {
				return nil, bad(err.Error())
			}
			continue
		}
		want, ok := sums[name]
		if !ok {
			return nil, bad("not listed in " + SumsName)
		}
		stop, err := fn(name, hdr.Size, tr, want)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			var ce *corruptError
			var pe *fs.PathError
			var le *os.LinkError
			if (errors.As(err, &pe) || errors.As(err, &le)) && !errors.As(err, &ce) {
				return nil, fmt.Errorf("cache: read archive: member %q: %w", name, err) // the destination's trouble
			}
			return nil, bad(err.Error())
		}
		if stop {
			return sums, nil
		}
	}
	if sums == nil {
		return nil, corruptf("cache: read archive: empty archive")
	}
	return sums, nil
}

// maxSums caps the size of SHA256SUMS.
const maxSums = 256 << 20

func parseSums(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxSums+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSums {
		return nil, errors.New("too large")
	}
	sums := map[string]string{}
	prev := ""
	for i, l := range strings.SplitAfter(string(b), "\n") {
		if l == "" {
			continue
		}
		sum, name, ok := strings.Cut(strings.TrimSuffix(l, "\n"), "  ")
		if _, err := hex.DecodeString(sum); !ok || err != nil || len(sum) != 64 || !strings.HasSuffix(l, "\n") {
			return nil, fmt.Errorf("line %d: want \"<sha256>  <path>\"", i+1)
		}
		if !fs.ValidPath(name) || name <= prev {
			return nil, fmt.Errorf("line %d: path %q invalid, unsorted or repeated", i+1, name)
		}
		prev = name
		sums[name] = sum
	}
	return sums, nil
}

func extract(ctx context.Context, r io.Reader, size int64, dir, name, want string) error {
	dst := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if st, err := os.Lstat(dst); err == nil {
		if !st.Mode().IsRegular() {
			return errors.New("exists in the destination and is not a regular file")
		}
		sum, _, err := regular.Hash(ctx, dst)
		if err != nil {
			return err
		}
		if sum != want {
			return errors.New("exists in the destination with other content; not replaced")
		}
		_, err = io.Copy(io.Discard, io.LimitReader(r, size))
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".import-*")
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(regular.Reader{Ctx: ctx, R: r}, size))
	if err == nil && n != size {
		err = corruptf("%d bytes, the header says %d", n, size)
	}
	if err == nil && hex.EncodeToString(h.Sum(nil)) != want {
		err = corruptf("content does not match %s", SumsName)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return regular.SyncDir(filepath.Dir(dst))
}

// A corruptError is an archive (or other data) that fails its own checks;
// it wraps cache.ErrCorrupt without repeating its text.
type corruptError struct{ msg string }

func (e *corruptError) Error() string        { return e.msg }
func (e *corruptError) Is(target error) bool { return target == cache.ErrCorrupt }

func corruptf(format string, args ...any) error {
	return &corruptError{fmt.Sprintf(format, args...)}
}
