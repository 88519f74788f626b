package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/internal/trusttest"
)

// mislabelledStore writes a store of one exchange whose content does not
// match the SHA-256 its pack's index gives for it, while its zstd frames
// are intact: only a re-hash can tell. In format 1 the response object is
// listed under a digest that is not its content's; in format 2, whose
// index names a record's response by its place, the block's SHA-256 is
// another block's. It returns the key and the pack name.
func mislabelledStore(t *testing.T, dir string, format int) (Key, string) {
	t.Helper()
	s := openTest(t, dir, Options{NoCompact: true, PackFormat: format})
	x := testExchange(1, `{"answer":"stored"}`)
	c, err := reqkey.Canonical(x.Request)
	if err != nil {
		t.Fatal(err)
	}
	k := Key(sha256.Sum256(c))
	resp := []byte(`{"answer":"swapped"}`)
	label := Digest(sha256.Sum256([]byte(`{"answer":"stored"}`)))
	meta, err := metaJSON(x, c)
	if err != nil {
		t.Fatal(err)
	}
	name, ix, _, err := s.writePack(nil, []item{{d: Digest(k), raw: c}, {d: label, raw: resp}}, []recEntry{{key: k, resp: label, meta: meta}})
	if err != nil {
		t.Fatal(err)
	}
	if format == 1 {
		// A pack from elsewhere (a new file), not the one this
		// finrepro wrote and recorded as known good.
		b, err := os.ReadFile(s.packPath(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(s.packPath(name)); err != nil {
			t.Fatal(err)
		}
		plantPack(t, dir, b)
		return k, name
	}
	// Format 2: the same pack with the SHA-256 of the response's block
	// (a block of its own) as it would be with the stored response.
	b, err := os.ReadFile(s.packPath(name))
	if err != nil {
		t.Fatal(err)
	}
	if len(ix.v2.blocks) != 2 {
		t.Fatalf("%d blocks, want one of requests and one of responses", len(ix.v2.blocks))
	}
	*ix.objs[ix.v2.respAt[0]-1].blockSum = sha256.Sum256([]byte(`{"answer":"stored"}`))
	off := binary.LittleEndian.Uint64(b[len(b)-trailerLen:])
	nb := append(bytes.Clone(b[:off]), s.indexEnc.EncodeAll(ix.marshal(), nil)...)
	nb = binary.LittleEndian.AppendUint64(nb, off)
	nb = append(nb, packEndMagic...)
	if err := os.Remove(s.packPath(name)); err != nil {
		t.Fatal(err)
	}
	p := plantPack(t, dir, nb)
	return k, strings.TrimSuffix(filepath.Base(p), ".pack")
}

// TestCheckedPacks: objects of packs the caller has checked against their
// names are not re-hashed, unless in verify mode; all others are.
func TestCheckedPacks(t *testing.T) {
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format %d", format), func(t *testing.T) { testCheckedPacks(t, format) })
	}
}

func testCheckedPacks(t *testing.T, format int) {
	dir := t.TempDir()
	k, name := mislabelledStore(t, dir, format)
	tests := []struct {
		name    string
		opt     Options
		env     string
		corrupt bool
	}{
		{"unchecked", Options{ReadOnly: true}, "", true},
		{"checked", Options{ReadOnly: true, CheckedPacks: map[string]bool{name: true}}, "", false},
		{"checked, other pack", Options{ReadOnly: true, CheckedPacks: map[string]bool{"00" + name[2:]: true}}, "", true},
		{"checked, verify mode", Options{ReadOnly: true, CheckedPacks: map[string]bool{name: true}}, "1", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(VerifyEnv, tc.env)
			s := openTest(t, dir, tc.opt)
			resp, _, err := s.GetResponse(k)
			if tc.corrupt {
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "does not match") {
					t.Fatalf("got %s, %v; want ErrCorrupt for content that does not match its hash", resp, err)
				}
				return
			}
			// Trusted: what the pack holds is served as it is.
			if err != nil || string(resp) != `{"answer":"swapped"}` {
				t.Fatalf("got %s, %v", resp, err)
			}
		})
	}
}

// TestAppendTrustedResponse: a response is reported trusted when it is
// read, unhashed, from a pack of the trust record as the local object of
// its record (format 2); not without a trust record, nor in verify mode,
// nor from a format-1 pack (whose responses are found by digest, in any
// pack).
func TestAppendTrustedResponse(t *testing.T) {
	for _, tc := range []struct {
		name        string
		format      int
		trustDir    string // "": a record of the test's own
		verify      string
		wantTrusted bool // by the writer and by a store opened again
	}{
		{"trust record", 2, "", "", true},
		{"no trust record", 2, "off", "", false},
		{"verify mode", 2, "", "1", false},
		{"format 1", 1, "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			trustDir := tc.trustDir
			if trustDir == "" {
				trustDir = t.TempDir()
			}
			t.Setenv(TrustDirEnv, trustDir)
			t.Setenv(VerifyEnv, tc.verify)
			dir := t.TempDir()
			s := openTest(t, dir, Options{NoCompact: true, PackFormat: tc.format})
			x := testExchange(1, `{"answer":"stored"}`)
			k, err := s.Put(x)
			if err != nil {
				t.Fatal(err)
			}
			for i, st := range []*Store{s, openTest(t, dir, Options{ReadOnly: true})} {
				resp, m, trusted, err := st.AppendTrustedResponse([]byte("x"), k)
				if err != nil || string(resp) != `x{"answer":"stored"}` || m.Source != SourceSim {
					t.Fatalf("store %d: got %s, %+v, %v", i, resp, m, err)
				}
				if trusted != tc.wantTrusted {
					t.Errorf("store %d: trusted %v, want %v", i, trusted, tc.wantTrusted)
				}
			}
		})
	}
}

// TestVerifiedPacksTrusted: after Verify passes, the store trusts the
// packs it checked; after it fails, none.
func TestVerifiedPacksTrusted(t *testing.T) {
	t.Setenv(TrustDirEnv, "off") // no trust record: only what Verify passes
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoCompact: true})
	for i := range 3 {
		if _, err := s.Put(testExchange(i, `{"a":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := trustedPacks(s); n != 0 {
		t.Fatalf("%d packs trusted before verify", n)
	}
	if n, err := s.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 || err != nil {
		t.Fatal(n, err)
	}
	if n := trustedPacks(s); n != 3 {
		t.Fatalf("%d packs trusted after verify, want 3", n)
	}
	for _, format := range []int{1, 2} {
		bad := t.TempDir()
		mislabelledStore(t, bad, format)
		b := openTest(t, bad, Options{})
		if n, _ := b.Verify(context.Background(), func(Problem) {}); n == 0 {
			t.Fatalf("format %d: verify passed a mislabelled object", format)
		}
		if n := trustedPacks(b); n != 0 {
			t.Fatalf("format %d: %d packs trusted after a failed verify", format, n)
		}
	}
}

// TestGetMeta: the metadata of an exchange comes without reading its
// objects, so it is there even when a response fails its hash (which Get
// reports); an unknown key is ErrNotFound.
func TestGetMeta(t *testing.T) {
	dir := t.TempDir()
	k, _ := mislabelledStore(t, dir, 2)
	s := openTest(t, dir, Options{ReadOnly: true})
	if _, err := s.Get(k); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Get: %v, want ErrCorrupt", err)
	}
	m, err := s.GetMeta(k)
	// what testExchange(1) records: its source and cost, and the
	// provider and model its request names
	want := Meta{Provider: "openai", Model: "m", Source: SourceSim, CostUSD: 0.5}
	if err != nil || *m != want {
		t.Fatalf("GetMeta: %+v, %v; want %+v", m, err, want)
	}
	if _, err := s.GetMeta(Key{1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetMeta of an unknown key: %v, want ErrNotFound", err)
	}
}

// trustedPacks counts the packs s trusts.
func trustedPacks(s *Store) (n int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, p := range s.packs {
		if p.trusted.Load() {
			n++
		}
	}
	return n
}

// TestTrustRecord: the packs this finrepro writes, and those a Verify
// passes, are trusted by later processes while their files stay as they
// were; a pack altered after being recorded is re-hashed and caught.
func TestTrustRecord(t *testing.T) {
	t.Setenv(TrustDirEnv, t.TempDir())
	t.Run("written here", func(t *testing.T) {
		dir := t.TempDir()
		s := openTest(t, dir, Options{NoCompact: true})
		for i := range 3 {
			if _, err := s.Put(testExchange(i, `{"a":1}`)); err != nil {
				t.Fatal(err)
			}
		}
		if n := trustedPacks(s); n != 3 {
			t.Errorf("the writer trusts %d packs, want 3", n)
		}
		if n := trustedPacks(openTest(t, dir, Options{ReadOnly: true})); n != 3 {
			t.Errorf("a later process trusts %d packs, want 3", n)
		}
		t.Setenv(VerifyEnv, "1")
		if n := trustedPacks(openTest(t, dir, Options{ReadOnly: true})); n != 0 {
			t.Errorf("verify mode trusts %d packs, want 0", n)
		}
	})
	t.Run("altered after recording", func(t *testing.T) {
		dir := t.TempDir()
		k, name := mislabelledStore(t, dir, 2) // a pack from elsewhere: not trusted
		s := openTest(t, dir, Options{ReadOnly: true})
		if _, _, err := s.GetResponse(k); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("an unrecorded pack: %v, want ErrCorrupt", err)
		}
		// Recorded as known good (as if written here), it is trusted:
		// what it holds is served as it is.
		s.noteGood([]string{name}, false)
		if resp, _, err := openTest(t, dir, Options{ReadOnly: true}).GetResponse(k); err != nil || string(resp) != `{"answer":"swapped"}` {
			t.Fatalf("a recorded pack: %s, %v", resp, err)
		}
		// The file rewritten in place (same bytes, same size, same inode),
		// then its modification time put back: its change time differs.
		path := s.packPath(name)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
		r := openTest(t, dir, Options{ReadOnly: true})
		if n := trustedPacks(r); n != 0 {
			t.Fatalf("%d packs trusted after the file changed", n)
		}
		if _, _, err := r.GetResponse(k); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("a pack altered after recording: %v, want ErrCorrupt", err)
		}
	})
	t.Run("verified", func(t *testing.T) {
		dir := t.TempDir()
		s := openTest(t, dir, Options{NoCompact: true})
		if _, err := s.Put(testExchange(1, `{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		// The same pack as a file from elsewhere: not trusted until
		// verified.
		p := packFiles(t, dir)[0]
		b, _ := os.ReadFile(p)
		os.Remove(p)
		plantPack(t, dir, b)
		v := openTest(t, dir, Options{ReadOnly: true})
		if n := trustedPacks(v); n != 0 {
			t.Fatalf("%d packs trusted before verify", n)
		}
		if n, err := v.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 || err != nil {
			t.Fatal(n, err)
		}
		if n := trustedPacks(openTest(t, dir, Options{ReadOnly: true})); n != 1 {
			t.Errorf("after verify a later process trusts %d packs, want 1", n)
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Setenv(TrustDirEnv, "off")
		dir := t.TempDir()
		s := openTest(t, dir, Options{NoCompact: true})
		if _, err := s.Put(testExchange(1, `{"a":1}`)); err != nil {
			t.Fatal(err)
		}
		if n := trustedPacks(openTest(t, dir, Options{ReadOnly: true})); n != 0 {
			t.Errorf("%d packs trusted with no trust record", n)
		}
	})
}

// FuzzParseTrust parses arbitrary trust records. Properties: every entry
// it returns is a line of the input in canonical form; a record of
// another store gives none.
func FuzzParseTrust(f *testing.F) {
	const abs = "/store"
	name := strings.Repeat("ab", 32)
	f.Add([]byte(trustHeader + abs + "\n" + formatTrustLine(name, fileID{1, 2, 3, 4, 5})))
	f.Add([]byte(trustHeader + abs + "\n" + name + " 1 2 3 4\n" + name + " 01 2 3 4 5\n"))
	f.Add([]byte(trustHeader + "/other\n" + formatTrustLine(name, fileID{1, 2, 3, 4, 5})))
	f.Fuzz(func(t *testing.T, b []byte) {
		good, _ := parseTrust(b, abs)
		for n, id := range good {
			if !bytes.Contains(b, []byte("\n"+formatTrustLine(n, id))) {
				t.Errorf("entry %s %+v is no line of the record", n, id)
			}
		}
		if len(good) > 0 && !bytes.HasPrefix(b, []byte(trustHeader+abs+"\n")) {
			t.Errorf("entries from a record of another store")
		}
	})
}

// TestTrustRecordsPruned: once the trust dir holds more than
// maxTrustRecords records, writing a new one removes the records of
// stores that are gone, and only those.
func TestTrustRecordsPruned(t *testing.T) {
	root := t.TempDir()
	t.Setenv(TrustDirEnv, root)
	kept := t.TempDir() // a store folder that exists
	write := func(name, store string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(trustHeader+store+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := range maxTrustRecords {
		write(fmt.Sprintf("gone%d.trust", i), filepath.Join(kept, "gone", fmt.Sprint(i)))
	}
	write("kept.trust", kept)
	write("other.txt", "/nowhere") // not a record: left alone
	s := openTest(t, t.TempDir(), Options{NoCompact: true})
	if _, err := s.Put(testExchange(1, `{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if len(names) != 3 || !slices.Contains(names, "kept.trust") || !slices.Contains(names, "other.txt") {
		t.Errorf("left %v, want kept.trust, other.txt and the new store's record", names)
	}
}

// TestTrustRecordBounded: a store written one exchange at a time (each
// Put a pack, merged as they accumulate) keeps a record of a few lines
// per live pack, not one per pack ever written.
func TestTrustRecordBounded(t *testing.T) {
	t.Setenv(TrustDirEnv, t.TempDir())
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	const n = 600
	for i := range n {
		if _, err := s.Put(testExchange(i, `{"a":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	path, _ := trustPath(dir)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(b, []byte("\n"))
	packs := len(packFiles(t, dir))
	if lines > 2*packs+256+1 || lines >= n {
		t.Errorf("the record has %d lines for %d packs after %d writes", lines, packs, n)
	}
}

// The tests of other packages keep their trust records apart by this name.
func TestTrustDirEnvName(t *testing.T) {
	if trusttest.Env != TrustDirEnv {
		t.Fatalf("trusttest.Env = %q, want %q", trusttest.Env, TrustDirEnv)
	}
}
