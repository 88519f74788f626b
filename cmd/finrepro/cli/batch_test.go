package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/replay/batch/batchtest"
	"github.com/finrepro/finrepro/results"
)

// childEnv makes TestBatchChildProcess run finrepro with the JSON
// argument list it holds, with the real environment, and exit with its
// code.
const childEnv = "FINREPRO_CLI_TEST_CHILD"

// TestBatchChildProcess is not a test: it is the child process that child
// starts (the helper-process pattern of os/exec's tests), and returns at
// once without childEnv.
func TestBatchChildProcess(t *testing.T) {
	a := os.Getenv(childEnv)
	if a == "" {
		return
	}
	var args []string
	if err := json.Unmarshal([]byte(a), &args); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
}

// batchKey is the synthetic API key of the batch tests.
const batchKey = "sk-batch-FAKEKEY-0123456789abcdefghij"

// runBatchCLI runs finrepro in-process with OPENAI_API_KEY set.
func runBatchCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
		if k == "OPENAI_API_KEY" || k == "ANTHROPIC_API_KEY" {
			return batchKey
		}
		return ""
	}}
	code := env.main(context.Background(), args)
	return code, o.String(), e.String()
}

// child starts finrepro in a child process, kills it with SIGKILL once
// held is closed and a line of its standard error has held killWhen (when
// not empty), and waits for it.
func child(t *testing.T, held chan struct{}, killWhen string, args ...string) {
	t.Helper()
	a, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^TestBatchChildProcess$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(a), "OPENAI_API_KEY="+batchKey, "ANTHROPIC_API_KEY="+batchKey)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		found := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if !found && killWhen != "" && strings.Contains(sc.Text(), killWhen) {
				found = true
				close(seen)
			}
		}
	}()
	if killWhen == "" {
		close(seen)
	}
	timeout := time.After(15 * time.Second)
	for _, ch := range []chan struct{}{held, seen} {
		select {
		case <-ch:
		case <-timeout:
			cmd.Process.Kill()
			t.Fatalf("the child never reached the kill point; its log:\n%s", log.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the child was not killed: %v\n%s", err, log.String())
	}
}

var collectLine = regexp.MustCompile(`(\d+) submitted requests: (\d+) stored \((\d+) by this run\), (\d+) failed, (\d+) in (\d+) batches still running`)

// TestBatchCLIKilled records 5,000 synthetic requests through the
// stand-in OpenAI Batch API and Anthropic Message Batches, in batches of
// at most 1,000 (for OpenAI, one model per file): one request in ten errors and one in ten answers an empty
// completion, server batch 2 expires half done, batch 3's first download
// is cut in the middle, and later batches end first. A submit is killed
// with SIGKILL while it creates its third batch, and a collect while it
// downloads, after it stored a chunk. The store must end with exactly
// the requests the server answered, each once, a rerun must submit
// nothing already covered, offline replay must answer every stored
// request, and no byte under the folder may hold the key.
func TestBatchCLIKilled(t *testing.T) {
	for _, c := range []struct {
		provider string
		// batches is the number of batches: OpenAI puts 2,500 requests
		// per model in batches of 1,000, 1,000 and 500; Anthropic mixes
		// models in five of 1,000.
		batches  int
		errCause string
	}{
		{"openai", 6, "http_error"},
		{"anthropic", 5, "api_error"},
	} {
		t.Run(c.provider, func(t *testing.T) { testBatchKilled(t, c.provider, c.batches, c.errCause) })
	}
}

func testBatchKilled(t *testing.T, provider string, batches int, errCause string) {
	const n = 5000
	hold, held := make(chan struct{}), make(chan struct{})
	createHold, createHeld := make(chan struct{}), make(chan struct{})
	srv := batchtest.New(batchtest.Options{
		Key: batchKey, ErrorEvery: 10, Expire: 2, Cut: 3,
		HoldAfter: 600, Hold: hold, Held: held,
		HoldCreate: 3, CreateHold: createHold, CreateHeld: createHeld,
	})
	defer srv.Close()
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "cache")
	var lines strings.Builder
	for i := range n {
		model := []string{"gpt-4o-mini", "gpt-4o"}[i%2]
		if provider == "anthropic" {
			model = []string{"claude-haiku-4-5", "claude-sonnet-4-5"}[i%2]
		}
		fmt.Fprintf(&lines, `{"body":{"model":%q,"max_tokens":64,"messages":[{"role":"user","content":"question %d"}]}}`+"\n", model, i)
	}
	reqFile := writeFile(t, tmp, "reqs.jsonl", lines.String())
	common := []string{"--dir", dir, "--provider", provider, "--base-url", srv.BaseURL()}
	submit := append([]string{"batch", "submit", "--requests", reqFile, "--max-requests-per-batch", "1000"}, common...)

	// A submit killed while it creates its third batch.
	child(t, createHeld, "", submit...)
	close(createHold)
	if srv.Batches() != 2 {
		t.Fatalf("%d batches created before the kill, want 2", srv.Batches())
	}
	code, out, errOut := runBatchCLI(t, submit...)
	if code != ExitFailure || !strings.Contains(errOut, "0003") || !strings.Contains(errOut, "--resubmit") {
		t.Fatalf("submit after the kill: exit %d, %s%s", code, out, errOut)
	}
	code, out, errOut = runBatchCLI(t, append(submit, "--resubmit")...)
	// Two batches were created before the kill.
	if code != ExitOK || srv.Requests != n || srv.Batches() != batches || !strings.Contains(out, fmt.Sprintf("2000 in open batches, 3000 submitted in %d batches", batches-2)) {
		t.Fatalf("resubmit: exit %d, server %d requests in %d batches\n%s%s", code, srv.Requests, srv.Batches(), out, errOut)
	}
	code, out, _ = runBatchCLI(t, submit...)
	if code != ExitOK || srv.Requests != n || !strings.Contains(out, "5000 in open batches, 0 submitted") {
		t.Fatalf("rerun: exit %d, server %d requests\n%s", code, srv.Requests, out)
	}

	// Poll until batches 3 and later have ended, then kill a collect in the
	// middle of a download (held after 600 lines), once it has stored
	// results (the first, cut download of batch 3 stores some).
	for range batches - 2 {
		code, out, errOut := runBatchCLI(t, append([]string{"batch", "status"}, common...)...)
		if code != ExitOK || !strings.Contains(out, fmt.Sprintf("%d batches: ", batches)) {
			t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
		}
	}
	child(t, held, " results", append([]string{"batch", "collect"}, common...)...)
	close(hold)
	if st, err := cache.Open(dir, cache.Options{}); err != nil {
		t.Fatal(err)
	} else {
		stats, err := st.Stats()
		st.Close()
		// The killed collect stored part of the results, not all.
		if err != nil || stats.Exchanges == 0 || stats.Exchanges >= len(srv.Answered()) {
			t.Fatalf("after the killed collect: %d exchanges stored (%v)", stats.Exchanges, err)
		}
	}

	var m []string
	for round := 0; ; round++ {
		if round > 10 {
			t.Fatalf("batches never ended:\n%s%s", out, errOut)
		}
		code, out, errOut = runBatchCLI(t, append([]string{"batch", "collect", "--quiet"}, common...)...)
		if m = collectLine.FindStringSubmatch(out); m == nil {
			t.Fatalf("collect: exit %d\n%s%s", code, out, errOut)
		}
		if m[5] == "0" && !strings.Contains("\n"+out, "\nerror: ") {
			break
		}
	}
	answered := srv.Answered()
	stored, _ := strconv.Atoi(m[2])
	failed, _ := strconv.Atoi(m[4])
	if m[1] != "5000" || stored != len(answered) || failed != n-len(answered) || code != ExitFailure {
		t.Fatalf("collect: exit %d, %v; the server answered %d\n%s", code, m, len(answered), out)
	}
	for _, cause := range []string{errCause, "empty_completion", "batch_expired"} {
		if !strings.Contains(out, cause) {
			t.Errorf("collect lists no %s failure:\n%.2000s", cause, out)
		}
	}
	if d := srv.Downloads(3); d < 2 {
		t.Errorf("batch 3 was downloaded %d times, want at least 2", d)
	}

	// Exactly the answered requests are stored, once, and replay offline
	// with the server's text.
	st, err := cache.Open(dir, cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := readRequests(reqFile, provider)
	if err != nil {
		t.Fatal(err)
	}
	c := replay.New(st, replay.Config{})
	replies := c.AnswerRequests(context.Background(), reqs)
	got := 0
	for i, r := range replies {
		q := fmt.Sprintf("question %d", i)
		_, want := slices.BinarySearch(answered, q)
		if (r.Err == nil) != want {
			t.Fatalf("request %d: replay error %v, answered by the server %v", i, r.Err, want)
		}
		if r.Err == nil {
			got++
			if r.Text != "reply to: "+q || r.Source != results.SourceBatch {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
	}
	stats, err := st.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if got != len(answered) || stats.Exchanges != len(answered) || stats.Conflicts != 0 {
		t.Errorf("%d replayed, %d stored (%d conflicts), want %d", got, stats.Exchanges, stats.Conflicts, len(answered))
	}
	if err := st.Each(func(k cache.Key, x *cache.Exchange) error {
		if bytes.Contains(x.Request, []byte(batchKey)) || bytes.Contains(x.Response, []byte(batchKey)) || x.Meta.BatchID == "" {
			t.Errorf("exchange %s: key in it, or no batch id (%+v)", k.Str(), x.Meta)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(batchKey)) {
				t.Errorf("%s holds the API key", p)
			}
		}
		return nil
	})

	// A rerun submits the failures and nothing else.
	before := srv.Requests
	code, out, _ = runBatchCLI(t, submit...)
	if code != ExitOK || srv.Requests-before != failed || !strings.Contains(out, fmt.Sprintf("%d already stored, 0 in open batches, %d submitted", stored, failed)) {
		t.Fatalf("resubmit of the failures: exit %d, %d sent, want %d\n%s", code, srv.Requests-before, failed, out)
	}
	if code, out, errOut := runBatchCLI(t, append([]string{"batch", "status"}, common...)...); code != ExitOK {
		t.Fatalf("status after the resubmit: exit %d\n%s%s", code, out, errOut)
	}
	// The cache beside the state folder verifies and collects garbage.
	for _, sub := range []string{"verify", "gc", "verify"} {
		if code, out, errOut := run(t, "cache", sub, "--dir", dir); code != ExitOK {
			t.Fatalf("cache %s: exit %d\n%s%s", sub, code, out, errOut)
		}
	}
}

// TestDryRunBatchPrice checks the batch price beside the synchronous one.
// With an input price of 0 and an output price of $1,000 per million
// tokens, a request with a limit of 1,000 output tokens is estimated at
// exactly $1.00: three OpenAI requests cost $3.00 synchronously and $1.50
// through the Batch API; a Gemini request, which has no batch API here,
// adds $1.00 to both.
func TestDryRunBatchPrice(t *testing.T) {
	tmp := t.TempDir()
	prices := writeFile(t, tmp, "prices.json", `{"date":"2026-01-01","models":{"m":{"input":0,"output":1000}}}`)
	var lines strings.Builder
	for i := range 3 {
		fmt.Fprintf(&lines, `{"provider":"openai","body":{"model":"m","max_tokens":1000,"messages":[{"role":"user","content":"q%d"}]}}`+"\n", i)
	}
	reqs := writeFile(t, tmp, "reqs.jsonl", lines.String())
	gem := writeFile(t, tmp, "gem.jsonl", lines.String()+
		`{"provider":"gemini","endpoint":"models/m:generateContent","body":{"contents":[{"parts":[{"text":"q"}]}],"generationConfig":{"maxOutputTokens":1000}}}`+"\n")
	for _, c := range []struct {
		file, sync, batch string
	}{
		{reqs, "$3.00 at the prices", "$1.50 through the batch APIs"},
		{gem, "$4.00 at the prices", "$2.50 through the batch APIs"},
	} {
		code, out, errOut := run(t, "record", "--requests", c.file, "--dir", filepath.Join(tmp, "cache"), "--prices", prices, "--dry-run")
		if code != ExitOK || !strings.Contains(out, c.sync) || !strings.Contains(out, c.batch) {
			t.Errorf("dry run of %s: exit %d, want %q and %q\n%s%s", filepath.Base(c.file), code, c.sync, c.batch, out, errOut)
		}
	}
}

func TestBatchUsageCLI(t *testing.T) {
	tmp := t.TempDir()
	reqs := writeFile(t, tmp, "reqs.jsonl", reqLine("one")+"\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"batch"}, ExitUsage, "subcommand"},
		{[]string{"batch", "frobnicate"}, ExitUsage, "unknown subcommand"},
		{[]string{"batch", "submit", "--dir", tmp}, ExitUsage, "one of --requests or --bundle"},
		{[]string{"batch", "status"}, ExitUsage, "--dir is required"},
		{[]string{"batch", "submit", "--requests", reqs, "--provider", "gemini", "--dir", tmp}, ExitFailure, "no batch API"},
		{[]string{"batch", "submit", "--requests", reqs, "--provider", "openai", "--dir", tmp}, ExitFailure, "OPENAI_API_KEY is not set"},
		{[]string{"batch", "cancel", "--dir", tmp, "--batch", "batch_x"}, ExitFailure, "no open batch"},
	} {
		code, out, errOut := run(t, c.args...)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("%q: exit %d, want %d and %q\n%s%s", c.args, code, c.code, c.want, out, errOut)
		}
	}
	if code, out, _ := run(t, "batch", "--help"); code != ExitOK || !strings.Contains(out, "docs/batch.md") {
		t.Errorf("batch --help: exit %d\n%s", code, out)
	}
}

// TestBatchBundleCLI records the judge calls of one FinResearchBench II
// judge of the demo bundle, switched from the simulator to openai, through
// the stand-in Batch API: submit --bundle, collect until done, and the
// bundle then reproduces offline and verifies.
func TestBatchBundleCLI(t *testing.T) {
	srv := batchtest.New(batchtest.Options{Key: batchKey})
	defer srv.Close()
	dir := unpackDemo(t)
	rewriteBundleFile(t, dir, "inputs/finresearchbench2/panel.json", `"provider": "sim",
      "model": "gpt-5.4"`, `"provider": "openai",
      "model": "gpt-5.4"`)
	state := filepath.Join(t.TempDir(), "batches")
	common := []string{"--dir", state, "--provider", "openai", "--base-url", srv.BaseURL()}
	code, out, errOut := runBatchCLI(t, append([]string{"batch", "submit", "--bundle", dir, "--benchmark", "finresearchbench2", "--system", "gpt-5.4"}, common...)...)
	if code != ExitOK || srv.Requests == 0 || !strings.Contains(out, fmt.Sprintf("%d submitted", srv.Requests)) {
		t.Fatalf("submit --bundle: exit %d, server %d requests\n%s%s", code, srv.Requests, out, errOut)
	}
	for round := 0; ; round++ {
		if round > 5 {
			t.Fatalf("collect never completed:\n%s%s", out, errOut)
		}
		code, out, errOut = runBatchCLI(t, append([]string{"batch", "collect", "--quiet"}, common...)...)
		if code == ExitOK {
			break
		}
	}
	if !strings.Contains(out, fmt.Sprintf("copied %d exchanges into bundle", srv.Requests)) {
		t.Fatalf("collect did not copy every result into the bundle:\n%s", out)
	}
	// Nothing is left to submit, and the bundle reproduces offline.
	code, out, _ = runBatchCLI(t, append([]string{"batch", "submit", "--bundle", dir}, common...)...)
	if code != ExitOK || !strings.Contains(out, "0 requests of openai") {
		t.Fatalf("second submit: exit %d\n%s", code, out)
	}
	if code, _, stderr := run(t, "reproduce", dir, "--out", filepath.Join(t.TempDir(), "out"), "--no-sweep", "--quiet"); code != ExitOK {
		t.Fatalf("offline reproduce after the batch: exit %d\n%s", code, stderr)
	}
}
