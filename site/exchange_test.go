package site

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// An exchangeBlock is a task page's exchange block as site.js reads it.
type exchangeBlock struct {
	S []string  `json:"s"`
	X [][][]int `json:"x"`
}

var (
	blockRE    = regexp.MustCompile(`<script type="application/json" id="exchanges">([^<]*)</script>`)
	foldRE     = regexp.MustCompile(`<details class="exchange" id="([^"]+)"(?: data-x="(\d+)")?><summary>.*?</summary>\n<dl class="meta"><dt>Cache key</dt><dd>([^<]*)</dd>`)
	xrefRE     = regexp.MustCompile(`<a class="xref" href="#([^"]+)">([^<]*)</a>`)
	verdictXRE = regexp.MustCompile(`"(s-[a-z0-9-]+-x\d+)","([0-9a-f]{8})"\]`)
)

// TestExchanges writes the fixture's site, plain and hostile, and checks
// on every task page that each exchange the details name is listed once
// with its full key; that joining its pieces gives back the request and
// the response the lookup gave, byte for byte (the property that makes
// the shared pieces safe); that each long string shared by several
// requests is in the block once; that every verdict's link (in rows and in
// folded JSON rows) names an exchange fold on the page with its key; and
// that a key the lookup cannot give shows the lookup's error.
func TestExchanges(t *testing.T) {
	for _, evil := range []bool{false, true} {
		in := fixture(evil)
		dir := t.TempDir()
		if _, err := Write(dir, in); err != nil {
			t.Fatal(err)
		}
		pages, _ := filepath.Glob(filepath.Join(dir, "tasks", "*", "*.html"))
		folds, failed := 0, 0
		for _, p := range pages {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			var blk exchangeBlock
			if m := blockRE.FindStringSubmatch(page); m != nil {
				if err := json.Unmarshal([]byte(m[1]), &blk); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			}
			ids := map[string]string{} // fold id -> key
			for _, m := range foldRE.FindAllStringSubmatch(page, -1) {
				folds++
				id, key := m[1], m[3]
				if _, dup := ids[id]; dup {
					t.Errorf("%s: fold %s twice", p, id)
				}
				ids[id] = key
				x, _, err := in.Exchanges(key, true, nil)
				if err != nil {
					failed++
					if m[2] != "" || !strings.Contains(page, "The cache could not give this exchange: "+string(appendEscaped(nil, err.Error()))) {
						t.Errorf("%s: %s: lookup error not shown", p, key)
					}
					continue
				}
				if m[2] == "" {
					t.Errorf("%s: %s not embedded", p, key)
					continue
				}
				k := 0
				for _, c := range m[2] {
					k = 10*k + int(c-'0')
				}
				join := func(ix []int) []byte {
					var out []byte
					for _, i := range ix {
						out = append(out, blk.S[i]...)
					}
					return out
				}
				if k >= len(blk.X) || len(blk.X[k]) != 2 {
					t.Fatalf("%s: exchange %d not in the block", p, k)
				}
				if got := join(blk.X[k][0]); !bytes.Equal(got, x.Request) {
					t.Errorf("%s: %s request:\n got %q\nwant %q", p, key, got, x.Request)
				}
				if got := join(blk.X[k][1]); !bytes.Equal(got, x.Response) {
					t.Errorf("%s: %s response:\n got %q\nwant %q", p, key, got, x.Response)
				}
			}
			n := 0
			for _, s := range blk.S {
				if strings.Contains(s, fixtureReport) {
					n++
				}
			}
			if len(ids) > 1 && n != 1 {
				t.Errorf("%s: the quoted report is in %d strings of the block, want 1", p, n)
			}
			for _, m := range xrefRE.FindAllStringSubmatch(page, -1) {
				if key, ok := ids[m[1]]; !ok || !strings.HasPrefix(key, m[2]) {
					t.Errorf("%s: link #%s (%s) names no exchange on the page", p, m[1], m[2])
				}
			}
			for _, m := range verdictXRE.FindAllStringSubmatch(page, -1) {
				if key, ok := ids[m[1]]; !ok || !strings.HasPrefix(key, m[2]) {
					t.Errorf("%s: folded verdict link #%s names no exchange on the page", p, m[1])
				}
			}
		}
		// the fixture's icbcbench details: 3 tasks x 3 systems, each an
		// output and two judges' exchanges; one per task the lookup lacks
		if folds != 27 || failed != 3 {
			t.Errorf("evil %v: %d exchange folds, %d failed lookups; want 27 and 3", evil, folds, failed)
		}
	}
}

// TestExchangeBudget gives a page more exchange text than exchangeBudget:
// the first exchanges are embedded, the rest listed with their metadata
// and a note, and the page stays under MaxPage.
func TestExchangeBudget(t *testing.T) {
	in := fixture(false)
	big := func(key string, _ bool, buf []byte) (*Exchange, []byte, error) {
		// distinct 100 KB requests: three fit in 256 KB with their
		// escapes, the fourth does not
		return &Exchange{Request: []byte(`{"user":"` + strings.Repeat(key[:1], 100<<10) + `"}`), Response: []byte(`{}`), Source: "sim"}, buf, nil
	}
	in.Exchanges = big
	dir := t.TempDir()
	if _, err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tasks", "icbcbench", "en-001.html"))
	if err != nil {
		t.Fatal(err)
	}
	folds := foldRE.FindAllStringSubmatch(string(b), -1)
	embedded := 0
	for _, m := range folds {
		if m[2] != "" {
			embedded++
		}
	}
	// 9 exchanges; requests repeat when keys share a first digit, so at
	// least 2 and fewer than all are embedded
	if len(folds) != 9 || embedded < 2 || embedded == 9 {
		t.Errorf("%d folds, %d embedded", len(folds), embedded)
	}
	if !strings.Contains(string(b), "are not on this page, which holds as much as it can") {
		t.Error("no note for the exchanges left out")
	}
	if len(b) > MaxPage {
		t.Errorf("page of %d bytes", len(b))
	}
}

// TestSplitJSON checks the pieces of known inputs.
func TestSplitJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want []string
	}{
		{``, 4, nil},
		{`{"a":"bcdef"}`, 4, []string{`{"a":`, `"bcdef"`, `}`}},
		{`{"a":"bc"}`, 5, []string{`{"a":"bc"}`}},
		{`["x\"yz\\","q"]`, 6, []string{`[`, `"x\"yz\\"`, `,"q"]`}},
		{`"unterminated \"`, 3, []string{`"unterminated \"`}},
		{`"ab""cd"`, 4, []string{`"ab"`, `"cd"`}},
	} {
		var got []string
		for _, p := range splitJSON(nil, []byte(c.in), c.n) {
			got = append(got, string(p))
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
			t.Errorf("splitJSON(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// FuzzSplitJSON checks that the pieces of any bytes join to them, that
// none is empty, and that a piece starting a string token of at least n
// bytes is exactly that token.
func FuzzSplitJSON(f *testing.F) {
	for _, s := range []string{`{"a":"bcdef"}`, `["x\"yz\\","q"]`, `"\\\\\"`, `"`, "\x00\"\xff\""} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		n = n%64 + 1
		if n < 1 {
			n += 64
		}
		ps := splitJSON(nil, b, n)
		var all []byte
		for _, p := range ps {
			if len(p) == 0 {
				t.Fatalf("empty piece in %q", ps)
			}
			all = append(all, p...)
		}
		if !bytes.Equal(all, b) {
			t.Fatalf("pieces %q join to %q, not %q", ps, all, b)
		}
	})
}

// TestExchangeTextsOnlyWhileRoom: a page asks for an exchange's texts
// only while it has room for them; once one does not fit, the rest are
// asked for without texts and keep their metadata.
func TestExchangeTextsOnlyWhileRoom(t *testing.T) {
	var asked []bool
	xs := &exchangeSet{lookup: func(key string, texts bool, buf []byte) (*Exchange, []byte, error) {
		asked = append(asked, texts)
		x := &Exchange{Model: "m-" + key, Source: "sim"}
		if texts { // distinct 100 KB requests: two fit in 256 KB, the third does not
			x.Request, x.Response = []byte(`{"user":"`+strings.Repeat(key, 100<<10)+`"}`), []byte(`{}`)
		}
		return x, buf, nil
	}}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		xs.fetch(xs.add(&analysis.Call{Key: k}, "judge", "j"))
	}
	if want := []bool{true, true, true, false, false}; !slices.Equal(asked, want) {
		t.Errorf("texts asked %v, want %v", asked, want)
	}
	for i, px := range xs.xs {
		if px.embedded != (i < 2) || px.x == nil || px.x.Model != "m-"+px.call.Key || px.x.Request != nil {
			t.Errorf("exchange %d: embedded %v, metadata %+v", i, px.embedded, px.x)
		}
	}
}

// blockOf fetches the exchanges of keys from lookup into a new set, with
// hash as its piece hash when not nil, and returns the set and its block.
func blockOf(t *testing.T, lookup ExchangeLookup, keys []string, hash func([]byte) uint64) (*exchangeSet, exchangeBlock) {
	t.Helper()
	xs := &exchangeSet{lookup: lookup, hashFn: hash}
	for _, k := range keys {
		xs.fetch(xs.add(&analysis.Call{Key: k}, "judge", "j"))
	}
	b := xs.appendBlock(nil, "x")
	m := blockRE.FindSubmatch(bytes.ReplaceAll(b, []byte(`id="x"`), []byte(`id="exchanges"`)))
	if m == nil {
		t.Fatalf("no block in %q", b)
	}
	var blk exchangeBlock
	if err := json.Unmarshal(m[1], &blk); err != nil {
		t.Fatalf("block %s: %v", m[1], err)
	}
	return xs, blk
}

// joined is the text of pieces ix of blk.
func joined(blk exchangeBlock, ix []int) string {
	var sb strings.Builder
	for _, i := range ix {
		sb.WriteString(blk.S[i])
	}
	return sb.String()
}

// TestExchangePiecesAnyHash checks that a page's block does not depend
// on how pieces are hashed: with every piece given the same hash (each
// found by its bytes alone) the block is the one the real hash gives, its
// pieces join to the exchanges' texts, and a piece quoted by several
// exchanges is stored once.
func TestExchangePiecesAnyHash(t *testing.T) {
	quote := `"` + strings.Repeat("The shared report <b>quoted</b> by every judge. ", 20) + `"`
	lookup := func(key string, texts bool, buf []byte) (*Exchange, []byte, error) {
		req := `{"judge":"` + key + `","report":` + quote + `,"note":"` + strings.Repeat(key, 300) + `"}`
		return &Exchange{Request: []byte(req), Response: []byte(`{"verdict":"yes ` + key + `"}`), Source: "sim"}, buf, nil
	}
	keys := []string{"a", "b", "c", "d"}
	_, want := blockOf(t, lookup, keys, nil)
	xs, got := blockOf(t, lookup, keys, func([]byte) uint64 { return 7 })
	if !slices.Equal(got.S, want.S) || len(got.X) != len(want.X) {
		t.Fatalf("one hash for all gives strings %q, want %q", got.S, want.S)
	}
	for i, k := range keys {
		x, _, _ := lookup(k, true, nil)
		if !xs.xs[i].embedded || joined(got, got.X[i][0]) != string(x.Request) || joined(got, got.X[i][1]) != string(x.Response) {
			t.Errorf("exchange %s: pieces join to %q", k, joined(got, got.X[i][0]))
		}
	}
	n := 0
	for _, s := range got.S {
		if strings.Contains(s, "The shared report") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the shared report is in %d strings, want 1", n)
	}
}

// TestExchangeRollback gives a page an exchange whose raw text fits what
// is left of exchangeBudget but whose encoding does not (every '<' takes
// six bytes): it is not embedded, the block is what it was before it, and
// the exchanges after it are asked for without texts.
func TestExchangeRollback(t *testing.T) {
	texts := map[string]string{
		"a": `{"user":"` + strings.Repeat("plain text ", 10<<10) + `"}`, // 110 KB
		"b": `{"user":"` + strings.Repeat("<", 100<<10) + `"}`,          // 100 KB raw, 600 KB encoded
		"c": `{"user":"small"}`,
	}
	var asked []bool
	lookup := func(key string, full bool, buf []byte) (*Exchange, []byte, error) {
		asked = append(asked, full)
		x := &Exchange{Source: "sim"}
		if full {
			x.Request, x.Response = []byte(texts[key]), []byte(`{"ok":true}`)
		}
		return x, buf, nil
	}
	_, alone := blockOf(t, lookup, []string{"a"}, nil)
	asked = nil
	xs, blk := blockOf(t, lookup, []string{"a", "b", "c"}, nil)
	if !slices.Equal(asked, []bool{true, true, false}) {
		t.Errorf("texts asked %v", asked)
	}
	if !xs.xs[0].embedded || xs.xs[1].embedded || xs.xs[2].embedded {
		t.Errorf("embedded: %v %v %v", xs.xs[0].embedded, xs.xs[1].embedded, xs.xs[2].embedded)
	}
	if !slices.Equal(blk.S, alone.S) || joined(blk, blk.X[0][0]) != texts["a"] || blk.X[1] != nil || blk.X[2] != nil {
		t.Errorf("block after the rollback: %d strings, x %v", len(blk.S), blk.X[1:])
	}
	if len(xs.raw) != len(texts["a"])+len(`{"ok":true}`) || xs.pieces() != len(alone.S) {
		t.Errorf("%d raw bytes and %d pieces kept", len(xs.raw), xs.pieces())
	}
}

// inBuffer wraps lookup so that it reads every text into the buffer it
// is given, from its start, as a store reusing one buffer does; reused
// counts the lookups that were handed a buffer an earlier one returned.
func inBuffer(lookup ExchangeLookup, reused *int) ExchangeLookup {
	return func(key string, texts bool, buf []byte) (*Exchange, []byte, error) {
		if cap(buf) > 0 {
			*reused++
		}
		x, _, err := lookup(key, texts, nil)
		if x == nil {
			return x, buf, err
		}
		c := *x
		buf = append(append(buf[:0], x.Request...), x.Response...)
		c.Request, c.Response = buf[:len(x.Request)], buf[len(x.Request):]
		return &c, buf, err
	}
}

// TestExchangeBufferReused: a lookup that reads each exchange's texts
// into the buffer the one before returned (overwriting them) gives the
// page the block a lookup allocating anew gives.
func TestExchangeBufferReused(t *testing.T) {
	quote := `"` + strings.Repeat("A report quoted by every judge. ", 20) + `"`
	lookup := func(key string, texts bool, buf []byte) (*Exchange, []byte, error) {
		x := &Exchange{Model: "m-" + key, Source: "sim"}
		if texts {
			x.Request = []byte(`{"judge":"` + key + `","report":` + quote + `,"note":"` + strings.Repeat(key, 400) + `"}`)
			x.Response = []byte(`{"verdict":"` + strings.Repeat("yes "+key, 80) + `"}`)
		}
		return x, buf, nil
	}
	tests := []struct {
		name string
		keys []string
	}{
		{"one", []string{"a"}},
		{"shared pieces", []string{"a", "b", "c", "a", "d"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, want := blockOf(t, lookup, tc.keys, nil)
			reused := 0
			_, got := blockOf(t, inBuffer(lookup, &reused), tc.keys, nil)
			if !slices.Equal(got.S, want.S) || !reflect.DeepEqual(got.X, want.X) {
				t.Errorf("block with a reused buffer:\n%q %v\nwant\n%q %v", got.S, got.X, want.S, want.X)
			}
			// a key repeated is looked up once
			if distinct := len(slices.Compact(slices.Sorted(slices.Values(tc.keys)))); reused != distinct-1 {
				t.Errorf("%d lookups were handed the buffer back, want %d", reused, distinct-1)
			}
		})
	}
}

// TestExchangeSetReset: a set emptied by reset after one page gives the
// next page the block and listing a new set gives it, whatever the first
// page held (more exchanges, a full budget, keys past maxExchanges).
func TestExchangeSetReset(t *testing.T) {
	quote := `"` + strings.Repeat("A report every judge quotes. ", 20) + `"`
	lookup := func(key string, texts bool, buf []byte) (*Exchange, []byte, error) {
		x := &Exchange{Model: "m-" + key, Source: "sim"}
		if texts {
			x.Request = []byte(`{"judge":"` + key + `","report":` + quote + `,"note":"` + strings.Repeat(key, 30<<10) + `"}`)
			x.Response = []byte(`{"verdict":"yes ` + key + `"}`)
		}
		return x, buf, nil
	}
	keys := func(prefix string, n int) []string {
		var ks []string
		for i := range n {
			ks = append(ks, prefix+itoa(i))
		}
		return ks
	}
	tests := []struct {
		name          string
		first, second []string
	}{
		{"small after small", []string{"a", "b"}, []string{"c", "a"}},
		{"small after a full budget", keys("f", 12), []string{"a", "b"}},
		{"after keys past the limit", keys("k", maxExchanges+5), keys("m", 3)},
	}
	fill := func(xs *exchangeSet, ks []string) []byte {
		for _, k := range ks {
			if i := xs.add(&analysis.Call{Key: k}, "judge", "j"); i >= 0 {
				xs.fetch(i)
			}
		}
		b := xs.appendBlock(nil, "x")
		for i := range xs.xs {
			b = xs.appendExchange(b, i, "e"+itoa(i))
		}
		return append(b, itoa(len(xs.left))...)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := fill(&exchangeSet{lookup: lookup}, tc.second)
			xs := &exchangeSet{lookup: lookup}
			fill(xs, tc.first)
			xs.reset()
			xs.lookup = lookup
			if got := fill(xs, tc.second); !bytes.Equal(got, want) {
				t.Errorf("after reset:\n%.400s\nwant\n%.400s", got, want)
			}
		})
	}
}
