package cache

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// mislabelledStore writes a store of one exchange whose response object
// is listed under a digest that is not its content's (its zstd frame is
// intact): only a re-hash can tell. It returns the key and the pack name.
func mislabelledStore(t *testing.T, dir string) (Key, string) {
	t.Helper()
	s := openTest(t, dir, Options{NoCompact: true})
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
	name, _, _, err := s.writePack(nil, []item{{d: Digest(k), raw: c}, {d: label, raw: resp}}, []recEntry{{key: k, resp: label, meta: meta}})
	if err != nil {
		t.Fatal(err)
	}
	return k, name
}

// TestCheckedPacks: objects of packs the caller has checked against their
// names are not re-hashed, unless in verify mode; all others are.
func TestCheckedPacks(t *testing.T) {
	dir := t.TempDir()
	k, name := mislabelledStore(t, dir)
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
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("got %s, %v; want ErrCorrupt", resp, err)
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

// TestVerifiedPacksTrusted: after Verify passes, the store trusts the
// packs it checked; after it fails, none.
func TestVerifiedPacksTrusted(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoCompact: true})
	for i := range 3 {
		if _, err := s.Put(testExchange(i, `{"a":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	trusted := func(s *Store) (n int) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, p := range s.packs {
			if p.trusted.Load() {
				n++
			}
		}
		return n
	}
	if n := trusted(s); n != 0 {
		t.Fatalf("%d packs trusted before verify", n)
	}
	if n, err := s.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 || err != nil {
		t.Fatal(n, err)
	}
	if n := trusted(s); n != 3 {
		t.Fatalf("%d packs trusted after verify, want 3", n)
	}
	bad := t.TempDir()
	mislabelledStore(t, bad)
	b := openTest(t, bad, Options{})
	if n, _ := b.Verify(context.Background(), func(Problem) {}); n == 0 {
		t.Fatal("verify passed a mislabelled object")
	}
	if n := trusted(b); n != 0 {
		t.Fatalf("%d packs trusted after a failed verify", n)
	}
}

// TestGetMeta: the metadata of an exchange comes without reading its
// objects, so it is there even when a response fails its hash (which Get
// reports); an unknown key is ErrNotFound.
func TestGetMeta(t *testing.T) {
	dir := t.TempDir()
	k, _ := mislabelledStore(t, dir)
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
