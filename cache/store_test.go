package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache/internal/synth"
	"github.com/finrepro/finrepro/cache/reqkey"
)

func testExchange(i int, resp string) *Exchange {
	return &Exchange{
		Request:  json.RawMessage(fmt.Sprintf(`{"provider":"openai","endpoint":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"user","content":"question %d"}]}}`, i)),
		Response: json.RawMessage(resp),
		Meta:     Meta{Source: SourceSim, CostUSD: 0.5},
	}
}

func openTest(t *testing.T, dir string, opt Options) *Store {
	t.Helper()
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPutGet(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	x := testExchange(1, `{"answer": "中文 text"}`)
	k, err := s.Put(x)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := reqkey.Of(x.Request)
	if k != want {
		t.Fatalf("key %s, want %s", k, want)
	}
	// A second process (a fresh Open) sees it.
	s2 := openTest(t, dir, Options{})
	got, err := s2.Get(k)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Response) != string(x.Response) {
		t.Errorf("response %s, want %s", got.Response, x.Response)
	}
	if got.Meta.Provider != "openai" || got.Meta.Model != "m" || got.Meta.Source != SourceSim || got.Meta.CostUSD != 0.5 {
		t.Errorf("meta %+v", got.Meta)
	}
	c, _ := reqkey.Canonical(x.Request)
	if string(got.Request) != string(c[len(reqkey.Schema)+1:]) {
		t.Errorf("request %s", got.Request)
	}
	if _, err := s2.Get(Key{1}); !errors.Is(err, ErrNotFound) {
		t.Errorf("absent key: %v", err)
	}
	// Identical responses are stored once in a pack: a pack of format 2
	// names its records' responses by their place, so the second Put's
	// pack holds its own copy until gc merges the two packs.
	if _, err := s.Put(testExchange(2, `{"answer": "中文 text"}`)); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Exchanges != 2 || st.Objects != 4 || st.Packs != 2 {
		t.Errorf("stats %+v, want 2 exchanges and 4 objects in 2 packs", st)
	}
	if _, err := s.GC(); err != nil {
		t.Fatal(err)
	}
	if st, err = s.Stats(); err != nil {
		t.Fatal(err)
	}
	if st.Exchanges != 2 || st.Objects != 3 || st.Packs != 1 {
		t.Errorf("stats after gc %+v, want 2 exchanges and 3 objects in 1 pack", st)
	}
	if st.CostUSD != 1 || len(st.ByModel) != 1 || st.ByModel[0] != (Count{"m", 2, 1}) {
		t.Errorf("stats %+v", st)
	}
}

func TestVerifyMode(t *testing.T) {
	for _, viaEnv := range []bool{false, true} {
		t.Run(fmt.Sprint("env=", viaEnv), func(t *testing.T) {
			if viaEnv {
				t.Setenv(VerifyEnv, "1")
			}
			s := openTest(t, t.TempDir(), Options{Verify: !viaEnv})
			if _, err := s.Put(testExchange(1, `"a"`)); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(testExchange(1, `"a"`)); err != nil {
				t.Fatalf("same response again: %v", err)
			}
			_, err := s.Put(testExchange(1, `"b"`))
			var ce *ConflictError
			if !errors.As(err, &ce) {
				t.Fatalf("different response: got %v, want *ConflictError", err)
			}
			// The stored response is named by its content's digest, not
			// by the local id its pack gives it.
			if ce.Stored != Digest(sha256.Sum256([]byte(`"a"`))) || ce.Posted != Digest(sha256.Sum256([]byte(`"b"`))) {
				t.Errorf("conflict names %s and %s", ce.Stored, ce.Posted)
			}
		})
	}
	// Without verify mode the first response stays.
	s := openTest(t, t.TempDir(), Options{})
	k, _ := s.Put(testExchange(1, `"a"`))
	if _, err := s.Put(testExchange(1, `"b"`)); err != nil {
		t.Fatal(err)
	}
	x, err := s.Get(k)
	if err != nil || string(x.Response) != `"a"` {
		t.Fatalf("got %v %v", x, err)
	}
}

// TestTwoWritersSameExchange: two writers store the same exchange, each
// in its own pack of format 2, where its response is a local object: the
// store counts no conflict and verify passes, as the responses are
// compared by content.
func TestTwoWritersSameExchange(t *testing.T) {
	dir := t.TempDir()
	a := openTest(t, dir, Options{NoCompact: true})
	b := openTest(t, dir, Options{NoCompact: true})
	for i, s := range []*Store{a, b} {
		x := testExchange(1, `{"same":true}`)
		x.Meta.LatencyMS = int64(i) // two packs, not one file twice
		if _, err := s.Put(x); err != nil {
			t.Fatal(err)
		}
	}
	c := openTest(t, dir, Options{NoCompact: true})
	st, err := c.Stats()
	if err != nil || st.Packs != 2 || st.Exchanges != 1 || st.Conflicts != 0 {
		t.Fatalf("stats %+v, %v; want 1 exchange in 2 packs, no conflict", st, err)
	}
	if n, err := c.Verify(context.Background(), func(p Problem) { t.Error(p) }); n != 0 || err != nil {
		t.Fatalf("verify: %d problems, %v", n, err)
	}
}

func TestPutErrors(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{MaxObjectBytes: 100})
	tests := []struct {
		name string
		x    *Exchange
	}{
		{"bad response", &Exchange{Request: testExchange(1, "").Request, Response: json.RawMessage(`{`), Meta: Meta{Source: "sim"}}},
		{"bad source", &Exchange{Request: testExchange(1, "").Request, Response: json.RawMessage(`1`), Meta: Meta{Source: "web"}}},
		{"bad request", &Exchange{Request: json.RawMessage(`{}`), Response: json.RawMessage(`1`), Meta: Meta{Source: "sim"}}},
		{"too large", testExchange(1, `"`+strings.Repeat("x", 200)+`"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Put(tt.x); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// synthLines returns n synthetic JSONL exchanges.
func synthLines(t testing.TB, n int, seed uint64) []byte {
	var b bytes.Buffer
	if err := synth.Write(&b, n, seed); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkReadsBack checks that every exchange of the JSONL data reads back
// from s under its request's key, with the same response.
func checkReadsBack(t *testing.T, s *Store, data []byte) {
	t.Helper()
	for i, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		x, err := ParseLine(l)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := reqkey.Of(x.Request)
		got, err := s.Get(k)
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if !bytes.Equal(got.Response, x.Response) {
			t.Fatalf("line %d: response differs", i+1)
		}
	}
}

func TestLoadDump(t *testing.T) {
	data := synthLines(t, 300, 1) // enough to train a dictionary
	s := openTest(t, t.TempDir(), Options{})
	st, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added+st.Present != 300 || st.Bad != 0 {
		t.Fatalf("load stats %+v", st)
	}
	var d1 bytes.Buffer
	if err := s.Dump(&d1); err != nil {
		t.Fatal(err)
	}
	checkReadsBack(t, s, data)
	// Loading the dump elsewhere and dumping again gives the same bytes.
	s2 := openTest(t, t.TempDir(), Options{})
	if _, err := s2.Load(bytes.NewReader(d1.Bytes()), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	var d2 bytes.Buffer
	if err := s2.Dump(&d2); err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(d1.Bytes()) != sha256.Sum256(d2.Bytes()) {
		t.Fatal("dump of the reloaded dump differs")
	}
	st2, err := s2.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st2.Dicts != 1 || st2.Ratio < 2 {
		t.Errorf("stats %+v: want a dictionary and a ratio above 2", st2)
	}
}

func TestLoadBadLines(t *testing.T) {
	good := string(synthLines(t, 2, 3))
	lines := strings.Split(strings.TrimSpace(good), "\n")
	in := strings.Join([]string{
		lines[0],
		`{"request": {"provider": "p", "endpoint": "e", "body": {}, "headers": {}}, "response": 1}`,
		`not json`,
		``,
		`{"request": {"provider": "p", "endpoint": "e", "body": {}}, "response": 1, "meta": {"source": "web"}}`,
		`{"response": 1}`,
		`{"request": {"provider": "p", "endpoint": "e", "body": {}}, "response": 1, "extra": 2}`,
		lines[1],
	}, "\n")
	wantBad := []string{"line 2: request.headers: ", "line 3: ", "line 5: meta.source: ", "line 6: request: missing", "line 7: extra: unknown field"}
	s := openTest(t, t.TempDir(), Options{})
	var got []string
	st, err := s.Load(strings.NewReader(in), LoadOptions{Report: func(err error) { got = append(got, err.Error()) }})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 2 || st.Bad != 5 {
		t.Errorf("stats %+v", st)
	}
	if len(got) != len(wantBad) {
		t.Fatalf("reports %q", got)
	}
	for i := range got {
		if !strings.HasPrefix(got[i], wantBad[i]) {
			t.Errorf("report %q, want prefix %q", got[i], wantBad[i])
		}
	}
	// Strict mode stops at line 2 with a *LineError.
	s2 := openTest(t, t.TempDir(), Options{})
	_, err = s2.Load(strings.NewReader(in), LoadOptions{Strict: true})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("strict: %v", err)
	}
}

// packFiles returns the pack files of a store.
func packFiles(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, packsDir, "*", "*.pack"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no packs: %v", err)
	}
	return files
}

func TestCorruption(t *testing.T) {
	data := synthLines(t, 40, 4)
	src := t.TempDir()
	s := openTest(t, src, Options{})
	if _, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	pack := packFiles(t, src)[0]
	orig, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	// Flip one byte at many places (objects, index, trailer) and truncate
	// at many lengths: verify must always object, Get must never serve bad
	// data, nothing may panic.
	type damage struct {
		name string
		b    []byte
	}
	var cases []damage
	for _, off := range []int{0, 9, 100, len(orig) / 3, len(orig) / 2, len(orig) - 200, len(orig) - 20, len(orig) - 1} {
		b := bytes.Clone(orig)
		b[off] ^= 0x40
		cases = append(cases, damage{fmt.Sprintf("flip@%d", off), b})
	}
	for _, n := range []int{0, 10, len(orig) / 2, len(orig) - 1} {
		cases = append(cases, damage{fmt.Sprintf("truncate@%d", n), orig[:n]})
	}
	cases = append(cases, damage{"appended", append(bytes.Clone(orig), "more bytes"...)})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, src, dir)
			rel, _ := filepath.Rel(src, pack)
			if err := os.WriteFile(filepath.Join(dir, rel), c.b, 0o644); err != nil {
				t.Fatal(err)
			}
			// A reader either refuses the store, naming the pack, or
			// opens it and never serves bad data; a damaged index is never
			// taken for an empty store.
			s, err := Open(dir, Options{ReadOnly: true})
			var ce *CorruptError
			switch {
			case err == nil:
				defer s.Close()
				for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
					x, _ := ParseLine(l)
					k, _ := reqkey.Of(x.Request)
					got, err := s.Get(k)
					if err == nil && !bytes.Equal(got.Response, x.Response) {
						t.Fatalf("served a wrong response for %s", k.Str())
					}
					if err != nil && !errors.Is(err, ErrCorrupt) {
						t.Fatalf("get %s: %v, want the data or a corruption", k.Str(), err)
					}
				}
			case !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) || ce.Path != filepath.ToSlash(rel):
				t.Fatalf("open: %v, want a *CorruptError naming %s", err, rel)
			}
			v := openTest(t, dir, Options{AllowCorrupt: true})
			n, err := v.Verify(context.Background(), func(Problem) {})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Fatal("verify found nothing")
			}
		})
	}
}

// TestCorruptDictionary replaces a store's dictionary with other bytes:
// the store is refused as corrupt, naming the pack that needs it, not
// opened as empty.
func TestCorruptDictionary(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	if _, err := s.Load(bytes.NewReader(synthLines(t, 200, 4)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	dicts, _ := filepath.Glob(filepath.Join(dir, "dicts", "*.dict"))
	if len(dicts) != 1 {
		t.Fatalf("%d dictionaries, want 1", len(dicts))
	}
	if err := os.WriteFile(dicts[0], []byte("another dictionary"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(dir, Options{ReadOnly: true})
	var ce *CorruptError
	if !errors.As(err, &ce) || !strings.HasPrefix(ce.Path, "packs/") {
		t.Fatalf("open: %v, want a *CorruptError naming a pack", err)
	}
}

func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestGC(t *testing.T) {
	dir := t.TempDir()
	data := synthLines(t, 80, 5)
	// Two stores loading overlapping halves at once leave duplicates.
	a := openTest(t, dir, Options{})
	b := openTest(t, dir, Options{})
	lines := bytes.SplitAfter(data, []byte("\n"))
	if _, err := a.Load(bytes.NewReader(bytes.Join(lines[:60], nil)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Load(bytes.NewReader(bytes.Join(lines[20:], nil)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	// Several single Puts make small packs.
	for i := range 3 {
		if _, err := a.Put(testExchange(i, `"small"`)); err != nil {
			t.Fatal(err)
		}
	}
	var before bytes.Buffer
	c := openTest(t, dir, Options{})
	if err := c.Dump(&before); err != nil {
		t.Fatal(err)
	}
	st, err := c.GC()
	if err != nil {
		t.Fatal(err)
	}
	if st.PacksRemoved == 0 || st.BytesAfter >= st.BytesBefore {
		t.Errorf("gc stats %+v", st)
	}
	if n, _ := c.Verify(context.Background(), func(p Problem) { t.Error(p) }); n > 0 {
		t.Fatal("verify after gc")
	}
	var after bytes.Buffer
	if err := openTest(t, dir, Options{}).Dump(&after); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before.Bytes(), after.Bytes()) {
		t.Fatal("gc changed the exchanges")
	}
	stats, _ := c.Stats()
	if stats.Exchanges != 83 || stats.Packs != 1 {
		t.Errorf("after gc: %+v", stats)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, l := range bytes.Split(bytes.TrimSpace(synthLines(f, 2, 6)), []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte(`{"request":{"provider":"p","endpoint":"e","body":{}},"response":null}`))
	f.Add([]byte(`{"request":{"provider":"p","endpoint":"e","body":{}},"response":1,"meta":{"source":"api","cost_usd":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		// parseLine reads its input in place and must leave it as it was.
		in := bytes.Clone(b)
		parseLine(in)
		if !bytes.Equal(in, b) {
			t.Fatalf("parseLine changed its input %q to %q", b, in)
		}
		x, err := ParseLine(b)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			return
		}
		if _, err := reqkey.Of(x.Request); err != nil {
			t.Fatalf("accepted a request without a key: %v", err)
		}
		if !json.Valid(x.Response) {
			t.Fatal("accepted an invalid response")
		}
	})
}

func FuzzParsePackIndex(f *testing.F) {
	ix := &packIndex{objs: []objEntry{{Digest{1}, where{off: 8, clen: 1<<20 - 8, rawLen: 20}}}, recs: []recEntry{{Key{2}, Digest{1}, []byte(`{"source":"sim"}`)}}}
	f.Add(ix.marshal())
	f.Add([]byte(indexHeader))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := parsePackIndex(b, 1<<20, nil)
		if err != nil {
			return
		}
		if !bytes.Equal(ix.marshal(), b) {
			t.Fatal("index does not re-encode to the same bytes")
		}
		checkPackMem(t, ix)
	})
}

func TestMerge(t *testing.T) {
	a := loadedDir(t, 20, 10)
	b := loadedDir(t, 20, 11)
	moved, _, err := Merge(a, b)
	if err != nil || moved == 0 {
		t.Fatalf("merge: %d, %v", moved, err)
	}
	s := verifyClean(t, b)
	if st, _ := s.Stats(); st.Exchanges != 40 {
		t.Fatalf("%d exchanges after merge", st.Exchanges)
	}
}

func TestExplain(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{})
	s.Put(testExchange(1, `"a"`))
	s.Put(testExchange(2, `"b"`))
	req := `{"provider":"openai","endpoint":"/v1/chat/completions","body":{"model":"m","temperature":0.5,"messages":[{"role":"user","content":"question 1"}]}}`
	c, err := reqkey.Canonical([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Explain(s, c, 1)
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := reqkey.Of(testExchange(1, "").Request)
	want := fmt.Sprintf("2 stored requests for provider \"openai\" and model \"m\"; nearest:\n\n%s: 1 fields differ\n  + body.temperature: 0.5 (only in the asked request)\n", k1)
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func loadedDir(t *testing.T, n int, seed uint64) string {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	if _, err := s.Load(bytes.NewReader(synthLines(t, n, seed)), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir
}

// TestAppendExchange: reading every exchange of a store through one
// buffer, each read handed the buffer the one before returned, gives
// what Get gives, in packs of either format; a missing key is
// ErrNotFound and hands the buffer back.
func TestAppendExchange(t *testing.T) {
	for _, format := range []int{1, 2} {
		t.Run(fmt.Sprintf("format %d", format), func(t *testing.T) {
			s := openTest(t, t.TempDir(), Options{PackFormat: format})
			if _, err := s.Load(bytes.NewReader(append(synthLines(t, 40, 3), judgeLines(t, 60, 3)...)), LoadOptions{Strict: true}); err != nil {
				t.Fatal(err)
			}
			keys, err := s.Keys()
			if err != nil || len(keys) < 100 {
				t.Fatalf("%d keys: %v", len(keys), err)
			}
			var buf []byte
			for i, k := range append(keys, keys[0]) {
				want, err := s.Get(k)
				if err != nil {
					t.Fatal(err)
				}
				var got *Exchange
				got, buf, err = s.AppendExchange(buf, k)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Request, want.Request) || !bytes.Equal(got.Response, want.Response) || got.Meta != want.Meta {
					t.Fatalf("exchange %d (%s): %q %q %+v, want %q %q %+v", i, k.Str(), got.Request, got.Response, got.Meta, want.Request, want.Response, want.Meta)
				}
			}
			if _, b, err := s.AppendExchange(buf, Key{1}); !errors.Is(err, ErrNotFound) || cap(b) != cap(buf) {
				t.Errorf("absent key: %v, buffer of %d bytes, want ErrNotFound and the one of %d", err, cap(b), cap(buf))
			}
		})
	}
}
