package cache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache/reqkey"
)

// keyOfLine is the key of a dump line: the key of its request.
func keyOfLine(t *testing.T, line []byte) Key {
	t.Helper()
	var l struct{ Request json.RawMessage }
	if err := json.Unmarshal(line, &l); err != nil {
		t.Fatal(err)
	}
	k, err := reqkey.Of(l.Request)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestDumpSkipsCorrupt damages one byte of a pack's blocks at several
// places: the dump writes every other exchange's line, in order, as the
// intact store dumps it, records each unreadable exchange in Problems and
// fails with ErrCorrupt after the rest, counting them. 600 exchanges make
// ten windows (dumpWindowKeys), each split between the workers, so that a
// damaged block falls inside a run of keys.
func TestDumpSkipsCorrupt(t *testing.T) {
	data := synthLines(t, 600, 3)
	src := t.TempDir()
	s := openTest(t, src, Options{})
	if _, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	want := dumpOf(t, s)
	s.Close()
	pack := packFiles(t, src)[0]
	orig, err := os.ReadFile(pack)
	if err != nil {
		t.Fatal(err)
	}
	blocksEnd := int(binary.LittleEndian.Uint64(orig[len(orig)-trailerLen:])) // where the index starts
	rel, _ := filepath.Rel(src, pack)
	for _, off := range []int{blocksEnd / 4, blocksEnd / 2, blocksEnd * 3 / 4, blocksEnd - 1} {
		t.Run(fmt.Sprint(off), func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, src, dir)
			b := bytes.Clone(orig)
			b[off] ^= 0x10
			if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
			s := openTest(t, dir, Options{ReadOnly: true})
			var got bytes.Buffer
			err := s.Dump(&got)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("dump: %v, want ErrCorrupt", err)
			}
			var bad []Key
			for _, p := range s.Problems() {
				if p.Key != (Key{}) { // not the problem of the pack's copy
					bad = append(bad, p.Key)
				}
			}
			if len(bad) == 0 || !strings.Contains(err.Error(), fmt.Sprintf("%d exchanges unreadable", len(bad))) {
				t.Fatalf("dump: %v with %d problems", err, len(bad))
			}
			var kept [][]byte
			for _, l := range bytes.SplitAfter(want, []byte("\n")) {
				if len(l) > 0 && !slices.Contains(bad, keyOfLine(t, l)) {
					kept = append(kept, l)
				}
			}
			if len(kept)+len(bad) != 600 {
				t.Fatalf("%d problems are not %d exchanges of the dump", len(bad), 600-len(kept))
			}
			if !bytes.Equal(got.Bytes(), bytes.Join(kept, nil)) {
				t.Fatal("the dump's other lines differ from the intact store's")
			}
		})
	}
}

// TestEachStops: an error from Each's function stops the walk at once and
// is returned as it is, even past a window's end.
func TestEachStops(t *testing.T) {
	data := synthLines(t, 300, 5)
	s := openTest(t, t.TempDir(), Options{})
	if _, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	keys, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	stop := errors.New("stop")
	for _, at := range []int{0, 100, eachWindow, 299} {
		var seen []Key
		err := s.Each(func(k Key, x *Exchange) error {
			seen = append(seen, k)
			if len(seen) == at+1 {
				return stop
			}
			return nil
		})
		if err != stop {
			t.Fatalf("stop at %d: each returned %v", at, err)
		}
		if !slices.Equal(seen, keys[:at+1]) {
			t.Fatalf("stop at %d: visited %d keys, want the first %d in order", at, len(seen), at+1)
		}
	}
}

// TestValidJSON: validJSON answers as RFC 8259 has it (and as json.Valid,
// which does not check UTF-8 and nests up to 10,000 deep), both where the
// line scanner answers and where it leaves the answer to json.Valid.
func TestValidJSON(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"meta", `{"source":"api","cost_usd":0.5,"model":"m"}`, true},
		{"spaces around", " \t\r\n{\"a\":[1,-2.5e3,true,null]}\n", true},
		{"scalar", `-0.5E+2`, true},
		{"lone surrogate escape", `"\ud800"`, true},
		{"invalid UTF-8", "\"\xff\"", true},
		{"600 deep, past the scanner's 512", strings.Repeat("[", 600) + strings.Repeat("]", 600), true},
		{"10,001 deep, past json.Valid's 10,000", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
		{"empty", "", false},
		{"spaces only", "  ", false},
		{"two values", `{} {}`, false},
		{"trailing byte", `{"a":1}x`, false},
		{"trailing comma", `{"a":1,}`, false},
		{"missing value", `{"a":}`, false},
		{"leading zero", `01`, false},
		{"bare point", `1.`, false},
		{"cut literal", `tru`, false},
		{"control byte in string", "\"a\x01\"", false},
		{"bad escape", `"\x"`, false},
		{"unclosed", `{"a":[1,2}`, false},
	}
	for _, tc := range tests {
		if got := validJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: validJSON(%.40q) = %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

// FuzzValidJSON: validJSON agrees with json.Valid on any bytes.
func FuzzValidJSON(f *testing.F) {
	f.Add([]byte(`{"source":"api","cost_usd":0.5}`))
	f.Add([]byte(`[1,"\u00e9",{"a":null}]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid: %v", b, got, want)
		}
	})
}
