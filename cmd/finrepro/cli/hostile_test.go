package cli

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// recordEach records each user message with its own run, so that each
// exchange has its own pack, and returns the request file of all of them,
// the cache folder and the packs in recording order.
func recordEach(t *testing.T, users ...string) (reqs, dir string, packs []string) {
	t.Helper()
	srv := newChatServer(t)
	tmp := t.TempDir()
	dir = filepath.Join(tmp, "cache")
	var all []string
	for i, u := range users {
		f := writeFile(t, tmp, "r"+string(rune('a'+i))+".jsonl", reqLine(u)+"\n")
		all = append(all, reqLine(u))
		code, out, errOut := run(t, "record", "--requests", f, "--provider", "local", "--base-url", srv.URL+"/v1", "--key-env", "FAKE_KEY", "--dir", dir, "--quiet")
		if code != ExitOK {
			t.Fatalf("record %q: %d\n%s%s", u, code, out, errOut)
		}
		ps, _ := filepath.Glob(filepath.Join(dir, "packs", "*", "*.pack"))
		for _, p := range ps {
			if !slices.Contains(packs, p) {
				packs = append(packs, p)
			}
		}
		if len(packs) != i+1 {
			t.Fatalf("%d packs after %d recordings", len(packs), i+1)
		}
	}
	return writeFile(t, tmp, "all.jsonl", strings.Join(all, "\n")+"\n"), dir, packs
}

func rel(t *testing.T, dir, p string) string {
	r, err := filepath.Rel(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(r)
}

// TestCorruptPackEveryCommand damages a pack's trailer: every command that
// reads the store exits 4 naming the pack, where it used to report an
// empty store or cache misses; cache verify lists it and exits 4.
func TestCorruptPackEveryCommand(t *testing.T) {
	reqs, dir, packs := recordEach(t, "one", "two")
	b, err := os.ReadFile(packs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(packs[1], b[:len(b)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	name := rel(t, dir, packs[1])
	for _, args := range [][]string{
		{"cache", "dump", "--dir", dir},
		{"cache", "stats", "--dir", dir},
		{"cache", "stats", "--json", "--dir", dir},
		{"cache", "gc", "--dir", dir},
		{"cache", "verify", "--dir", dir},
		{"replay", "--requests", reqs, "--provider", "local", "--dir", dir},
	} {
		code, out, errOut := run(t, args...)
		if code != ExitIntegrity || !strings.Contains(errOut, name) {
			t.Errorf("%s: exit %d, want %d naming %s\nstdout %s\nstderr %s", strings.Join(args[:2], " "), code, ExitIntegrity, name, out, errOut)
		}
	}
}

// TestReproduceCorruptPack truncates a pack of the demo bundle and reseals
// the manifest: reproduce exits 4 naming the pack, not 3 with misses.
func TestReproduceCorruptPack(t *testing.T) {
	dir := unpackDemo(t)
	packs, _ := filepath.Glob(filepath.Join(dir, "cache", "packs", "*", "*.pack"))
	if len(packs) == 0 {
		t.Fatal("no pack in the demo")
	}
	b, _ := os.ReadFile(packs[0])
	if err := os.WriteFile(packs[0], b[:len(b)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Seal(dir, *m.Manifest, nil, nil); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "reproduce", dir, "--quiet", "--out", filepath.Join(t.TempDir(), "out"))
	if name := rel(t, filepath.Join(dir, "cache"), packs[0]); code != ExitIntegrity || !strings.Contains(stderr, name) || strings.Contains(stderr, "--mode record") {
		t.Fatalf("exit %d, want %d naming %s\n%s", code, ExitIntegrity, name, stderr)
	}
}

// TestReplayCorruptEntry damages the stored response of the second of
// three exchanges (replay reads the responses; a damaged request object
// is verify's to find): replay writes the first reply in full, then exits
// 4.
func TestReplayCorruptEntry(t *testing.T) {
	reqs, dir, packs := recordEach(t, "one", "two", "three")
	b, err := os.ReadFile(packs[1])
	if err != nil {
		t.Fatal(err)
	}
	// The pack ends with the offset of its index frame and a magic; the
	// response's object frame, written after the request's, comes just
	// before the index (docs/cache.md).
	index := binary.LittleEndian.Uint64(b[len(b)-16:])
	b[index-6] ^= 0x40 // inside the response's frame
	if err := os.WriteFile(packs[1], b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "replay", "--requests", reqs, "--provider", "local", "--dir", dir)
	if code != ExitIntegrity {
		t.Fatalf("exit %d, want %d\n%s", code, ExitIntegrity, errOut)
	}
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "echo one") {
		t.Errorf("stdout %q, want the first reply as one whole line", out)
	}
}

// TestMalformedManifestExitCode gives every command that opens a bundle a
// manifest that does not parse: all exit 4.
func TestMalformedManifestExitCode(t *testing.T) {
	dir := makeBundle(t)
	if err := os.WriteFile(filepath.Join(dir, results.ManifestName), []byte(`{"format":`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "verify", dir},
		{"reproduce", dir, "--quiet", "--out", filepath.Join(t.TempDir(), "out")},
		{"site", dir, "--out", filepath.Join(t.TempDir(), "site")},
		{"sweep", dir},
	} {
		code, _, errOut := run(t, args...)
		if code != ExitIntegrity || !strings.Contains(errOut, results.ManifestName) {
			t.Errorf("%s: exit %d, want %d\n%s", args[0], code, ExitIntegrity, errOut)
		}
	}
	// A bundle folder that does not exist is not an integrity failure.
	missing := filepath.Join(t.TempDir(), "nothing")
	for _, args := range [][]string{{"bundle", "verify", missing}, {"reproduce", missing, "--quiet"}} {
		if code, _, errOut := run(t, args...); code != ExitFailure {
			t.Errorf("%s of a missing folder: exit %d, want %d\n%s", args[0], code, ExitFailure, errOut)
		}
	}
}

// TestControlSequencesShown plants a terminal control sequence (one that
// sets the terminal's title) in a published table, a model name and a
// file name: reproduce --quiet, the miss list, cache stats and bundle
// verify show it as \x1b...\x07 and never write the ESC byte.
func TestControlSequencesShown(t *testing.T) {
	const evil = "\x1b]0;title\x07"
	const shown = `\x1b]0;title\x07`
	check := func(what, out string) {
		t.Helper()
		if strings.Contains(out, "\x1b") || !strings.Contains(out, shown) {
			t.Errorf("%s: raw ESC written or sequence not shown:\n%q", what, out)
		}
	}
	reseal := func(dir string) {
		m, err := results.OpenBundle(dir)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := results.Seal(dir, *m.Manifest, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	dir := unpackDemo(t)
	pub := filepath.Join(dir, "published", "findeepforecast", "headline.csv")
	b, err := os.ReadFile(pub)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, bytes.Replace(b, []byte("39.5"), []byte("39.5"+evil), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	reseal(dir)
	// Wide enough that the table of differing cells does not wrap the
	// published cell.
	var o bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: io.Discard, Getenv: func(k string) string {
		if k == "COLUMNS" {
			return "300"
		}
		return ""
	}}
	env.main(context.Background(), []string{"reproduce", dir, "--quiet", "--no-sweep", "--out", filepath.Join(t.TempDir(), "out")})
	check("published verdicts", o.String())

	dir = unpackDemo(t)
	panel := filepath.Join(dir, "inputs", "finresearchbench2", "panel.json")
	b, _ = os.ReadFile(panel)
	os.WriteFile(panel, bytes.Replace(b, []byte(`"model": "gpt-5.4"`), []byte(`"model": "gpt-5.4\u001b]0;title\u0007"`), 1), 0o644)
	reseal(dir)
	code, _, errOut := run(t, "reproduce", dir, "--quiet", "--out", filepath.Join(t.TempDir(), "out"))
	if code != ExitMiss {
		t.Fatalf("reproduce with a renamed model: exit %d\n%s", code, errOut)
	}
	check("miss list", errOut)

	cdir := filepath.Join(t.TempDir(), "c")
	line := strings.Replace(exchangeLines(1), `"meta":{"source":"sim"`, `"meta":{"source":"sim","model":"m\u001b]0;title\u0007"`, 1)
	if code, _, errOut := cacheCLI(t, line, nil, "cache", "load", "--dir", cdir); code != 0 {
		t.Fatalf("load: %d %s", code, errOut)
	}
	_, out, _ := run(t, "cache", "stats", "--dir", cdir)
	check("cache stats", out)

	bdir := makeBundle(t)
	os.WriteFile(filepath.Join(bdir, "inputs", "x"+evil), []byte("x"), 0o644)
	_, _, errOut = run(t, "bundle", "verify", bdir)
	check("bundle verify", errOut)
}

// TestInvalidUTF8Response has a provider answer one request with a body
// that is not UTF-8: the recording refuses it as a malformed response and
// stores nothing of it, so the dump of the store loads back to the same
// exchanges; a JSONL line with such a response makes cache load exit 1.
func TestInvalidUTF8Response(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		user := body.Messages[0].Content
		content := "echo " + user
		if strings.HasPrefix(user, "latin1") {
			content = "caf\xe9" // ISO 8859-1, not UTF-8
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"`+content+`"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("one")+"\n"+reqLine("latin1 please")+"\n")
	code, out, errOut := run(t, "record", "--requests", reqs, "--provider", "local", "--base-url", srv.URL+"/v1", "--dir", dir, "--quiet", "--attempts", "1")
	if code != ExitFailure || !strings.Contains(out, "1 recorded, 1 failed") || !strings.Contains(out, "malformed_json") || !strings.Contains(out, "not valid UTF-8") {
		t.Fatalf("record: %d\n%s%s", code, out, errOut)
	}
	code, dump1, errOut := run(t, "cache", "dump", "--dir", dir)
	if code != 0 || strings.Count(dump1, "\n") != 1 {
		t.Fatalf("dump: %d %q %s", code, dump1, errOut)
	}
	dir2 := filepath.Join(tmp, "cache2")
	if code, _, errOut := cacheCLI(t, dump1, nil, "cache", "load", "--dir", dir2); code != 0 {
		t.Fatalf("load of the dump: %d %s", code, errOut)
	}
	if _, dump2, _ := run(t, "cache", "dump", "--dir", dir2); dump2 != dump1 {
		t.Errorf("round trip changed the dump:\n%s\n%s", dump1, dump2)
	}
	bad := strings.Replace(exchangeLines(1), "Net interest", "Net \xe9 interest", 1)
	code, out, errOut = cacheCLI(t, bad, nil, "cache", "load", "--dir", filepath.Join(tmp, "cache3"))
	if code != ExitFailure || !strings.Contains(errOut, "<stdin>:1: response: ") || !strings.Contains(errOut, "invalid UTF-8") || !strings.Contains(out, "1 bad lines skipped") {
		t.Errorf("load of a non-UTF-8 response: %d\n%s%s", code, out, errOut)
	}
}
