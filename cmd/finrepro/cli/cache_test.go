package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/results"
)

// cacheCLI runs finrepro in-process with stdin and the environment given.
func cacheCLI(t *testing.T, stdin string, envv map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &o, Stderr: &e, Getenv: func(k string) string { return envv[k] }}
	code := env.main(context.Background(), args)
	return code, o.String(), e.String()
}

// exchangeLines returns n JSONL exchanges with English and Chinese text.
func exchangeLines(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"request":{"provider":"openai","endpoint":"chat/completions","body":{"model":"gpt-x","temperature":0,"messages":[{"role":"user","content":"Summarise the %d-th annual report. 请总结第%d份年报。"}]}},"response":{"choices":[{"message":{"content":"Net interest margin rose to %d.%d%%. 净息差上升。"}}]},"meta":{"source":"sim","cost_usd":0.25}}`+"\n", i, i, i%5, i%10)
	}
	return b.String()
}

func TestCacheCLI(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "c")
	in := exchangeLines(5)
	lines := strings.SplitAfter(in, "\n")
	bad := lines[0] + `{"request":{"provider":"p","endpoint":"e","body":{}},"response":1,"meta":{"source":"web"}}` + "\n" + strings.Join(lines[1:], "")
	src := filepath.Join(t.TempDir(), "ex.jsonl")
	os.WriteFile(src, []byte(bad), 0o644)

	// A skipped line makes the exit code 1, unless --allow-bad; the good
	// lines are stored either way.
	code, out, errOut := cacheCLI(t, "", nil, "cache", "load", "--dir", dir, src)
	if code != 1 || !strings.Contains(out, "6 lines: 5 new exchanges, 0 already stored, 1 bad lines skipped") || !strings.Contains(errOut, src+":2: meta.source: ") {
		t.Fatalf("load: %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = cacheCLI(t, "", nil, "cache", "load", "--allow-bad", "--dir", dir, src)
	if code != 0 || !strings.Contains(out, "6 lines: 0 new exchanges, 5 already stored, 1 bad lines skipped") {
		t.Fatalf("load --allow-bad: %d\n%s\n%s", code, out, errOut)
	}
	code, _, errOut = cacheCLI(t, bad, nil, "cache", "load", "--strict", "--dir", filepath.Join(t.TempDir(), "s"))
	if code != 1 || !strings.Contains(errOut, "<stdin>:2: meta.source") {
		t.Fatalf("strict load: %d %s", code, errOut)
	}

	code, out, _ = cacheCLI(t, "", nil, "cache", "stats", "--json", "--dir", dir)
	var st cache.Stats
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Exchanges != 5 || st.CostUSD != 1.25 || st.BySource[0].Name != "sim" {
		t.Fatalf("stats: %d %s", code, out)
	}
	if code, out, _ = cacheCLI(t, "", nil, "cache", "stats", "--dir", dir); code != 0 || !strings.Contains(out, "exchanges     5") {
		t.Fatalf("stats: %d %s", code, out)
	}

	// dump, load elsewhere, dump again: same bytes.
	code, dump1, _ := cacheCLI(t, "", nil, "cache", "dump", "--dir", dir)
	dir2 := filepath.Join(t.TempDir(), "c2")
	cacheCLI(t, dump1, nil, "cache", "load", "--dir", dir2)
	_, dump2, _ := cacheCLI(t, "", nil, "cache", "dump", "--dir", dir2)
	if code != 0 || dump1 != dump2 || strings.Count(dump1, "\n") != 5 {
		t.Fatalf("dump round trip: %d\n%s\n%s", code, dump1, dump2)
	}

	if code, out, _ = cacheCLI(t, "", nil, "cache", "verify", "--dir", dir); code != 0 || !strings.HasPrefix(out, "ok: 5 exchanges") {
		t.Fatalf("verify: %d %s", code, out)
	}

	// explain: stored, and not stored with a diff.
	req := filepath.Join(t.TempDir(), "req.json")
	os.WriteFile(req, []byte(`{"provider":"openai","endpoint":"chat/completions","body":{"model":"gpt-x","temperature":0.7,"messages":[{"role":"user","content":"Summarise the 1-th annual report. 请总结第1份年报。"}]}}`), 0o644)
	code, out, _ = cacheCLI(t, "", nil, "cache", "explain", "--dir", dir, req)
	if code != 0 || !strings.Contains(out, "not stored") || !strings.Contains(out, "~ body.temperature: stored 0, asked 0.7") {
		t.Fatalf("explain: %d %s", code, out)
	}

	// export, import into an empty cache.
	arch := filepath.Join(t.TempDir(), "c.tar.zst")
	if code, _, errOut = cacheCLI(t, "", nil, "cache", "export", "--dir", dir, "--out", arch); code != 0 {
		t.Fatalf("export: %d %s", code, errOut)
	}
	dir3 := filepath.Join(t.TempDir(), "c3")
	if code, out, errOut = cacheCLI(t, "", nil, "cache", "import", "--dir", dir3, arch); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, errOut)
	}
	if _, dump3, _ := cacheCLI(t, "", nil, "cache", "dump", "--dir", dir3); dump3 != dump1 {
		t.Fatal("import changed the exchanges")
	}
	// A secret in the environment that appears in the cache blocks export.
	code, _, errOut = cacheCLI(t, "", map[string]string{"OPENAI_API_KEY": "请总结第3份"}, "cache", "export", "--dir", dir, "--out", arch+"2")
	if code != 1 || !strings.Contains(errOut, "value of a secret") {
		t.Fatalf("export with secret: %d %s", code, errOut)
	}
	if _, err := os.Stat(arch + "2"); err == nil {
		t.Fatal("archive written despite the secret")
	}

	if code, out, _ = cacheCLI(t, "", nil, "cache", "gc", "--dir", dir); code != 0 || !strings.HasPrefix(out, "removed ") {
		t.Fatalf("gc: %d %s", code, out)
	}

	// A flipped byte: verify exits 4 naming the key, dump exits 4.
	packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*", "*.pack"))
	b, _ := os.ReadFile(packs[0])
	b[20] ^= 1
	os.WriteFile(packs[0], b, 0o644)
	code, _, errOut = cacheCLI(t, "", nil, "cache", "verify", "--dir", dir)
	if code != ExitIntegrity || !strings.Contains(errOut, "key ") || !strings.Contains(errOut, "problems") {
		t.Fatalf("verify after damage: %d %s", code, errOut)
	}
	if code, _, _ = cacheCLI(t, "", nil, "cache", "dump", "--dir", dir); code != ExitIntegrity {
		t.Fatalf("dump after damage: %d", code)
	}
}

func TestCacheCLIUsage(t *testing.T) {
	for _, sub := range []string{"stats", "verify", "gc", "load", "dump", "export", "import", "explain"} {
		code, out, _ := cacheCLI(t, "", nil, "cache", sub, "--help")
		if code != 0 || !strings.Contains(out, "--dir") || !strings.Contains(out, "Exit codes") {
			t.Errorf("%s --help: %d %s", sub, code, out)
		}
		if code, _, _ := cacheCLI(t, "", nil, "cache", sub); code != ExitUsage {
			t.Errorf("%s without --dir: exit %d", sub, code)
		}
	}
	if code, _, _ := cacheCLI(t, "", nil, "cache", "frobnicate", "--dir", "x"); code != ExitUsage {
		t.Errorf("unknown subcommand: exit %d", code)
	}
	if code, out, _ := cacheCLI(t, "", nil, "cache", "--help"); code != 0 || !strings.Contains(out, "explain REQUEST.json") {
		t.Errorf("cache --help: %d %s", code, out)
	}
}

// makeBundle writes a small sealed bundle and returns its folder.
func makeBundle(t *testing.T) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "inputs", "icbcbench"), 0o755)
	os.WriteFile(filepath.Join(dir, "inputs", "icbcbench", "tasks.jsonl"), []byte("{}\n"), 0o644)
	s, err := cache.Open(filepath.Join(dir, results.CacheDir), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load(strings.NewReader(exchangeLines(3)), cache.LoadOptions{Strict: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := results.Seal(dir, results.Manifest{Name: "test", Benchmarks: []string{"icbcbench"}, Producer: "test"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBundleVerifyCLI(t *testing.T) {
	dir := makeBundle(t)
	if code, out, errOut := cacheCLI(t, "", nil, "bundle", "verify", dir); code != 0 || !strings.HasPrefix(out, "ok: ") {
		t.Fatalf("verify: %d %s %s", code, out, errOut)
	}
	arch := filepath.Join(t.TempDir(), "b.tar.zst")
	f, _ := os.Create(arch)
	if err := archive.Write(f, dir); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if code, _, errOut := cacheCLI(t, "", nil, "bundle", "verify", arch); code != 0 {
		t.Fatalf("verify archive: %d %s", code, errOut)
	}
	// Two problems: an edited input and an extra file. Both reported.
	os.WriteFile(filepath.Join(dir, "inputs", "icbcbench", "tasks.jsonl"), []byte("{}\n{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "inputs", "extra.txt"), []byte("x"), 0o644)
	code, _, errOut := cacheCLI(t, "", nil, "bundle", "verify", dir)
	if code != ExitIntegrity || !strings.Contains(errOut, "tasks.jsonl: size") || !strings.Contains(errOut, "extra.txt: not listed") {
		t.Fatalf("damaged bundle: %d %s", code, errOut)
	}
	// A damaged cache object is found even though the manifest is resealed.
	dir = makeBundle(t)
	packs, _ := filepath.Glob(filepath.Join(dir, "cache", "packs", "*", "*.pack"))
	b, _ := os.ReadFile(packs[0])
	b[20] ^= 1
	os.WriteFile(packs[0], b, 0o644)
	results.Seal(dir, results.Manifest{Name: "test", Benchmarks: []string{"icbcbench"}, Producer: "test"}, nil, nil)
	code, _, errOut = cacheCLI(t, "", nil, "bundle", "verify", dir)
	if code != ExitIntegrity || !strings.Contains(errOut, "cache/packs/") {
		t.Fatalf("damaged cache: %d %s", code, errOut)
	}
	if code, _, _ := cacheCLI(t, "", nil, "bundle", "verify"); code != ExitUsage {
		t.Fatalf("no path: %d", code)
	}
}
