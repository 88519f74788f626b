package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/results"
)

// demoCopy makes a bundle folder from the built-in demo.
func demoCopy(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if code, out, errOut := run(t, "bundle", "create", "--out", dir, "--from", "@demo"); code != ExitOK {
		t.Fatalf("bundle create: %d %s%s", code, out, errOut)
	}
	return dir
}

// forecastTaskIDs reads the ids of the demo's FinDeepForecast tasks.
func forecastTaskIDs(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "inputs", "findeepforecast", "tasks.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v struct {
			ID string `json:"id"`
		}
		json.Unmarshal(sc.Bytes(), &v)
		ids = append(ids, v.ID)
	}
	return ids
}

// TestSystemOutputsImport imports hand-collected forecasts for every
// task: reproduce then runs offline with no miss, the system is scored,
// and its provenance is on the workbook's Provenance sheet. Removing the
// system gives back the configuration byte for byte.
func TestSystemOutputsImport(t *testing.T) {
	dir := demoCopy(t)
	cfg := filepath.Join(dir, "inputs", "findeepforecast", "config.json")
	before, _ := os.ReadFile(cfg)
	aliasesBefore, _ := os.ReadFile(filepath.Join(dir, results.AliasesName))

	outs := filepath.Join(t.TempDir(), "outs")
	os.MkdirAll(outs, 0o755)
	ids := forecastTaskIDs(t, dir)
	for _, id := range ids {
		writeFile(t, outs, id+".md", "Collected by hand.\nFinal answer: Yes\nEvidence:\n")
	}
	// A date alone cannot be checked against a deadline.
	writeFile(t, outs, "provenance.json", `{"where": "agent.example.com web interface", "when": "2025-10-01", "product_version": "Agent 2.1"}`)
	if code, _, errOut := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent", "--outputs", outs); code != ExitUsage || !strings.Contains(errOut, "must be an RFC 3339 time") {
		t.Errorf("date-only collection time: %d %s", code, errOut)
	}
	writeFile(t, outs, "provenance.json", `{"where": "agent.example.com web interface", "when": "yesterday", "product_version": "Agent 2.1"}`)
	if code, _, errOut := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent", "--outputs", outs); code == ExitOK || !strings.Contains(errOut, "provenance.json: when:") {
		t.Errorf("unreadable collection time: %d %s", code, errOut)
	}
	writeFile(t, outs, "provenance.json", `{"where": "agent.example.com web interface", "when": "2025-10-01T09:00:00Z", "product_version": "Agent 2.1"}`)

	// A file for a task that does not exist is refused before anything changes.
	writeFile(t, outs, "no-such-task.md", "x")
	code, _, errOut := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent", "--outputs", outs)
	if code == ExitOK || !strings.Contains(errOut, `no task "no-such-task"`) {
		t.Errorf("unknown task: %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(cfg); !bytes.Equal(after, before) {
		t.Error("a refused system add changed the configuration")
	}
	if code, _, errOut := run(t, "bundle", "verify", dir); code != ExitOK {
		t.Fatalf("bundle after a refused add: %d %s", code, errOut)
	}
	os.Remove(filepath.Join(outs, "no-such-task.md"))

	code, out, errOut := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent", "--outputs", outs, "--display", "Hand Agent (web)")
	if code != ExitOK || !strings.Contains(out, fmt.Sprintf("%d outputs imported from agent.example.com web interface", len(ids))) {
		t.Fatalf("system add --outputs: %d %s%s", code, out, errOut)
	}
	if code, out, _ := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent", "--outputs", outs); code != ExitUsage {
		t.Errorf("second add of one name: %d %s", code, out)
	}
	code, out, _ = run(t, "system", "list", dir, "--benchmark", "findeepforecast")
	if code != ExitOK || !strings.Contains(out, "Hand Agent (import Agent 2.1, deep-research): 24 outputs imported") {
		t.Errorf("system list: %d %s", code, out)
	}
	res := filepath.Join(t.TempDir(), "out")
	code, out, errOut = run(t, "reproduce", dir, "--out", res, "--no-sweep")
	if code != ExitOK {
		t.Fatalf("reproduce: %d %s%s", code, out, errOut)
	}
	// Collected on 2025-10-01, before every deadline: none is late, and
	// every time is known.
	if strings.Contains(out, `prediction of "Hand Agent"`) {
		t.Errorf("timely predictions reported late:\n%s", out)
	}
	audit, _ := os.ReadFile(filepath.Join(res, "csv", "findeepforecast", "isolation_audit.csv"))
	if !strings.Contains(string(audit), fmt.Sprintf("Hand Agent,%d,0,0,0,0,", len(ids))) {
		t.Errorf("audit row of the imported system:\n%s", audit)
	}
	x, err := excelize.OpenFile(filepath.Join(res, "xlsx", "findeepforecast.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := x.GetRows("Provenance")
	x.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rows, func(r []string) bool {
		return slices.Contains(r, "system.findeepforecast.Hand Agent") && strings.Contains(strings.Join(r, " "), "collected 2025-10-01T09:00:00Z, product version Agent 2.1")
	}) {
		t.Errorf("Provenance sheet has no row for the imported system: %q", rows)
	}

	// ... and on the system's page of the site.
	pages, _ := filepath.Glob(filepath.Join(res, "site", "systems", "*.html"))
	found := false
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte("<h1>Hand Agent (web)</h1>")) {
			found = bytes.Contains(b, []byte("Provenance: 24 outputs imported from agent.example.com web interface, collected 2025-10-01T09:00:00Z, product version Agent 2.1"))
		}
	}
	if !found {
		t.Errorf("no system page of Hand Agent (web) shows its provenance (%d pages)", len(pages))
	}

	code, out, errOut = run(t, "system", "remove", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent")
	if code != ExitOK {
		t.Fatalf("system remove: %d %s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(cfg); !bytes.Equal(after, before) {
		t.Errorf("add then remove changed the configuration:\n%s", after)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, results.AliasesName)); !bytes.Equal(after, aliasesBefore) {
		t.Errorf("add then remove changed aliases.csv:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(dir, SystemsName)); err == nil {
		t.Error("systems.jsonl outlives its only system")
	}
	if code, _, errOut := run(t, "bundle", "verify", dir); code != ExitOK {
		t.Errorf("verify after remove: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "system", "remove", dir, "--benchmark", "findeepforecast", "--name", "Hand Agent"); code != ExitUsage || !strings.Contains(errOut, "has no system") {
		t.Errorf("remove of an absent system: %d %s", code, errOut)
	}
}

// TestSystemAddUsage checks the refusals of system add.
func TestSystemAddUsage(t *testing.T) {
	dir := demoCopy(t)
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--benchmark", "findeepforecast", "--name", "X"}, ExitUsage, "either --provider"},
		{[]string{"--benchmark", "findeepforecast", "--name", "X", "--provider", "vllm"}, ExitUsage, "needs --model"},
		{[]string{"--benchmark", "nosuch", "--name", "X", "--provider", "vllm", "--model", "m"}, ExitUsage, "known: icbcbench"},
		{[]string{"--benchmark", "findeepforecast", "--name", "X", "--provider", "nosuch", "--model", "m"}, ExitUsage, "vllm, ollama or llamacpp"},
		{[]string{"--benchmark", "findeepforecast", "--name", "X", "--provider", "sim", "--model", "m"}, ExitUsage, "want a built-in provider"},
		{[]string{"--benchmark", "findeepforecast", "--name", "X", "--provider", "vllm", "--model", "m", "--base-url", "ftp://x"}, ExitUsage, "http:// or https://"},
		{[]string{"--benchmark", "finresearchbench2", "--name", "X", "--provider", "vllm", "--model", "m"}, ExitUsage, "--outputs"},
		{[]string{"--benchmark", "findeepforecast", "--name", "OpenAI GPT-5 (T)", "--provider", "vllm", "--model", "m"}, ExitUsage, "already has"},
	} {
		code, _, errOut := run(t, append([]string{"system", "add", dir}, tt.args...)...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, want %d with %q\n%s", tt.args, code, tt.code, tt.want, errOut)
		}
	}
	// A bundle that does not verify is not changed.
	os.WriteFile(filepath.Join(dir, "stray.txt"), []byte("x"), 0o644)
	if code, _, _ := run(t, "system", "add", dir, "--benchmark", "findeepforecast", "--name", "X", "--provider", "vllm", "--model", "m"); code != ExitIntegrity {
		t.Errorf("add to a bundle that does not verify: exit %d, want %d", code, ExitIntegrity)
	}
}

// TestSystemOutputsFinResearchBench2 adds a product with one report per
// query; its judges' calls are then listed by requests --judges.
func TestSystemOutputsFinResearchBench2(t *testing.T) {
	dir := demoCopy(t)
	outs := filepath.Join(t.TempDir(), "outs")
	os.MkdirAll(outs, 0o755)
	for i := 1; i <= 8; i++ {
		writeFile(t, outs, fmt.Sprintf("q%03d.md", i), "# Report\n\n## Summary\nRevenue grew.\n")
	}
	writeFile(t, outs, "provenance.json", `{"where": "research.example.com", "when": "2026-01-10", "product_version": "R 1"}`)
	if code, out, errOut := run(t, "system", "add", dir, "--benchmark", "finresearchbench2", "--name", "My Product", "--outputs", outs); code != ExitOK {
		t.Fatalf("add: %d %s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "requests", dir, "--benchmark", "finresearchbench2", "--system", "My Product", "--judges")
	n := strings.Count(out, "\n")
	if code != ExitOK || n == 0 || !strings.Contains(out, "Revenue grew.") || !strings.Contains(errOut, "(0 already in the cache)") {
		t.Fatalf("requests --judges: %d, %d lines\n%s", code, n, errOut)
	}
	// Every line grades the new product: its report is in each prompt.
	for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, "Revenue grew.") {
			t.Errorf("line %d grades another product: %.200s", i+1, line)
		}
	}
	// The demo's judges are simulated: recording says so up front.
	code, _, errOut = run(t, "reproduce", dir, "--mode", "record", "--yes", "--no-sweep", "--out", filepath.Join(t.TempDir(), "o"))
	if code == ExitOK || !strings.Contains(errOut, "judges are simulated (provider sim)") || !strings.Contains(errOut, "bundle create --out mine --from @demo") {
		t.Errorf("record with simulated judges: %d\n%s", code, errOut)
	}
	if code, _, errOut := run(t, "bundle", "verify", dir); code != ExitOK {
		t.Errorf("bundle after the refused recording: %d %s", code, errOut)
	}
}

// TestRequestsJudges checks, on the demo, that the judge calls grading
// one system are among all judge calls, are all stored, and differ from
// another system's.
func TestRequestsJudges(t *testing.T) {
	lines := func(args ...string) []string {
		t.Helper()
		code, out, errOut := run(t, append([]string{"requests", "", "--benchmark", "findeepresearch"}, args...)...)
		if code != ExitOK {
			t.Fatalf("requests %q: %d %s", args, code, errOut)
		}
		return strings.Split(strings.TrimSpace(out), "\n")
	}
	all := lines("--judges")
	a := lines("--system", "Grok 4 DeepSearch", "--judges")
	b := lines("--system", "Mistral Deep Research", "--judges")
	sysOnly := lines("--system", "Grok 4 DeepSearch")
	if len(a) <= len(sysOnly) || len(a) >= len(all) {
		t.Fatalf("%d calls for one system with judges, %d without, %d in all", len(a), len(sysOnly), len(all))
	}
	for _, l := range a {
		if !slices.Contains(all, l) {
			t.Fatalf("a call of the system's is not among all calls: %.200s", l)
		}
	}
	shared := 0
	for _, l := range a[len(sysOnly):] {
		if slices.Contains(b, l) {
			shared++
		}
	}
	if shared > 0 {
		t.Errorf("%d judge calls attributed to two systems", shared)
	}
	code, out, errOut := run(t, "requests", "", "--benchmark", "findeepresearch", "--system", "Grok 4 DeepSearch", "--judges", "--missing")
	if code != ExitOK || out != "" || !strings.Contains(errOut, fmt.Sprintf("wrote 0 missing requests (%d already in the cache)", len(a))) {
		t.Errorf("--missing on the demo: %d %q %s", code, out, errOut)
	}
	code, out, _ = run(t, "requests", "", "--benchmark", "findeepresearch", "--system", "Grok 4 DeepSearch", "--format", "batch")
	if code != ExitOK || strings.Count(out, "\n") != 0 {
		// sim is not an OpenAI API: nothing to batch, and it says so.
		t.Errorf("batch of sim requests: %d %q", code, out)
	}
	if code, _, errOut := run(t, "requests", "", "--benchmark", "findeepresearch", "--system", "Nobody"); code != ExitUsage || !strings.Contains(errOut, "no such system") {
		t.Errorf("unknown system: %d %s", code, errOut)
	}
}

// TestSnapshot checks what a failed change puts back: a file that
// existed gets its bytes as read, a file that did not exist is removed,
// and a path that could not be read for another reason (here a folder)
// is neither kept nor removed.
func TestSnapshot(t *testing.T) {
	dir := t.TempDir()
	existing, absent, folder := filepath.Join(dir, "a.csv"), filepath.Join(dir, "new.csv"), filepath.Join(dir, "aliases.csv")
	os.WriteFile(existing, []byte("old\n"), 0o644)
	os.Mkdir(folder, 0o755)
	snap := snapshot{}
	if b, err := snap.read(existing); err != nil || string(b) != "old\n" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := snap.read(absent); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of an absent file: %v", err)
	}
	if _, err := snap.read(folder); err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read of a folder: %v", err)
	}
	os.WriteFile(existing, []byte("changed\n"), 0o644)
	os.WriteFile(absent, []byte("created\n"), 0o644)
	if got := snap.written(dir); !slices.Equal(got, []string{"a.csv", "new.csv"}) {
		t.Errorf("written %v", got)
	}
	snap.restore()
	if b, _ := os.ReadFile(existing); string(b) != "old\n" {
		t.Errorf("existing file restored as %q", b)
	}
	if _, err := os.Stat(absent); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("created file not removed: %v", err)
	}
	if st, err := os.Stat(folder); err != nil || !st.IsDir() {
		t.Errorf("unreadable path removed: %v", err)
	}
}
