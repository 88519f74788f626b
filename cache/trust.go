package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/finrepro/finrepro/internal/regular"
)

// Trust records. Reading a pack whose file is known to be good skips the
// SHA-256 of its blocks and objects (as Go's build cache trusts its own
// files); zstd's frame checksums and every bound still apply. A pack is
// known good when this finrepro wrote it (it computed every digest of it
// itself) or when a Verify passed it, and its file has not changed since:
// a trust record, one small file per store outside the store (so that
// bundles, archives and sizes never include it), lists such packs with
// what would change if their file changed: size, modification and change
// times, device and inode. A pack not listed, or whose file differs from
// its line in any of these, is re-hashed on every read as before. In
// verify mode nothing is trusted.
//
// The record of the store in folder D is <trust dir>/<sha256 of D's
// absolute path>.trust:
//
//	finrepro-trust/1 <D's absolute path>\n
//	<pack name> <size> <mtime ns> <ctime ns> <device> <inode>\n   (one line per pack)
//
// Lines are appended as packs are written (a lost or torn line only costs
// a re-hash: a line is used only when it has exactly its six fields);
// Verify rewrites the record with the packs it passed, and an append
// rewrites it once it holds many more lines than the store has packs.
// The trust dir is $FINREPRO_TRUST_DIR, "off" for none, or else
// finrepro/trust in the user's cache folder (os.UserCacheDir).

// TrustDirEnv names the folder of trust records ("off": none).
const TrustDirEnv = "FINREPRO_TRUST_DIR"

const trustHeader = "finrepro-trust/1 "

// maxTrustBytes bounds a trust record read (a line is about 150 bytes).
const maxTrustBytes = 16 << 20

// A fileID is what changes when a file is changed: a pack whose fileID is
// the one recorded is the file that was checked.
type fileID struct {
	size, mtime, ctime int64
	dev, ino           uint64
}

type trustRecord struct {
	mu    sync.Mutex
	path  string // "": no record
	good  map[string]fileID
	lines int // lines in the file, about
	// limit is the line count past which an append rewrites the record:
	// twice its entries when it was read or last written, plus 256.
	limit int
}

// trustPath returns the record file of the store in dir, or "".
func trustPath(dir string) (string, string) {
	root := os.Getenv(TrustDirEnv)
	if root == "off" {
		return "", ""
	}
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", "" // no cache folder: nothing is trusted across processes
		}
		root = filepath.Join(c, "finrepro", "trust")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(root, hex.EncodeToString(sum[:])+".trust"), abs
}

// openTrust reads the store's trust record (none when missing or bad).
func (s *Store) openTrust() {
	t := &s.trust
	var abs string
	t.path, abs = trustPath(s.dir)
	t.good = map[string]fileID{}
	if t.path == "" {
		return
	}
	b, err := regular.Read(t.path, maxTrustBytes)
	if err != nil {
		return // no record yet, or unreadable: nothing trusted
	}
	t.good, t.lines = parseTrust(b, abs)
	t.limit = 2*len(t.good) + 256
}

// parseTrust returns the entries of a trust record for the store at abs:
// of each pack, its last line. A record of another store, or one whose
// header is missing, gives none; a line that is not canonical is skipped.
func parseTrust(b []byte, abs string) (map[string]fileID, int) {
	good := map[string]fileID{}
	head, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok || string(head) != trustHeader+abs {
		return good, 0
	}
	n := 0
	for len(rest) > 0 {
		var line []byte
		line, rest, ok = bytes.Cut(rest, []byte("\n"))
		if !ok {
			break // a torn last line
		}
		n++
		if name, id, ok := parseTrustLine(string(line)); ok {
			good[name] = id
		}
	}
	return good, n
}

func parseTrustLine(line string) (string, fileID, bool) {
	f := strings.Split(line, " ")
	if len(f) != 6 || !isHexName(f[0]) {
		return "", fileID{}, false
	}
	var v [5]uint64
	for i := range v {
		x, err := strconv.ParseUint(f[i+1], 10, 63)
		if err != nil || strconv.FormatUint(x, 10) != f[i+1] {
			return "", fileID{}, false
		}
		v[i] = x
	}
	return f[0], fileID{size: int64(v[0]), mtime: int64(v[1]), ctime: int64(v[2]), dev: v[3], ino: v[4]}, true
}

func formatTrustLine(name string, id fileID) string {
	return fmt.Sprintf("%s %d %d %d %d %d\n", name, id.size, id.mtime, id.ctime, id.dev, id.ino)
}

// knownGood reports whether pack name's file is the one its trust
// record lists.
func (s *Store) knownGood(name string) bool {
	if s.opt.Verify {
		return false
	}
	t := &s.trust
	t.mu.Lock()
	want, ok := t.good[name]
	t.mu.Unlock()
	if !ok {
		return false
	}
	fi, err := os.Lstat(s.packPath(name))
	if err != nil {
		return false
	}
	id, ok := idOf(fi)
	return ok && id == want
}

// noteGood records packs as known good: appended to the record, or, with
// rewrite (or once the record holds many more lines than the store has
// packs), the record rewritten with the known-good packs that still exist.
// Failures are ignored: a pack not recorded is re-hashed when read, no
// more.
func (s *Store) noteGood(names []string, rewrite bool) {
	t := &s.trust
	if t.path == "" {
		return
	}
	var add strings.Builder
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range names {
		fi, err := os.Lstat(s.packPath(name))
		if err != nil {
			continue
		}
		id, ok := idOf(fi)
		if !ok {
			continue
		}
		t.good[name] = id
		add.WriteString(formatTrustLine(name, id))
	}
	if add.Len() == 0 && !rewrite {
		return
	}
	if !rewrite && t.lines < t.limit {
		if err := appendTrust(t.path, add.String()); err == nil {
			t.lines += len(names)
			return
		}
	}
	var b strings.Builder
	_, abs := trustPath(s.dir)
	b.WriteString(trustHeader + abs + "\n")
	names = slices.Sorted(func(yield func(string) bool) {
		for name := range t.good {
			if !yield(name) {
				return
			}
		}
	})
	n := 0
	for _, name := range names {
		if _, err := os.Lstat(s.packPath(name)); err != nil {
			delete(t.good, name)
			continue
		}
		b.WriteString(formatTrustLine(name, t.good[name]))
		n++
	}
	dir := filepath.Dir(t.path)
	_, err := os.Lstat(t.path)
	if os.MkdirAll(dir, 0o755) == nil && regular.WriteFile(dir, t.path, []byte(b.String())) == nil {
		t.lines, t.limit = n, 2*n+256
		if os.IsNotExist(err) {
			pruneTrust(dir)
		}
	}
}

// maxTrustRecords is how many trust records the trust dir holds before
// the records of stores that no longer exist (the stores of tests, of
// temporary folders) are removed, when a new record is written.
const maxTrustRecords = 1024

// pruneTrust removes, once dir holds more than maxTrustRecords records,
// those whose store folder is gone.
func pruneTrust(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) <= maxTrustRecords {
		return
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".trust") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := regular.Read(p, maxTrustBytes)
		if err != nil {
			continue
		}
		head, _, _ := bytes.Cut(b, []byte("\n"))
		store, ok := strings.CutPrefix(string(head), trustHeader)
		if !ok {
			continue // not ours: left alone
		}
		if _, err := os.Stat(store); os.IsNotExist(err) {
			os.Remove(p) // best effort: a record left behind costs only room
		}
	}
}

// appendTrust appends lines to the record at path, writing its header
// first when the file is new.
func appendTrust(path, lines string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err // no record yet: the caller writes it whole
	}
	defer f.Close()
	_, err = f.WriteString(lines) // one write: concurrent appends do not interleave
	return err
}
