package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// customSystemBundle unpacks the demo and moves the FinDeepForecast
// system "OpenAI GPT-5 (T)" to the provider name "myagent", which is not
// built in, so that none of its calls is stored.
func customSystemBundle(t *testing.T) string {
	t.Helper()
	dir := unpackDemo(t)
	rewriteBundleFile(t, dir, "inputs/findeepforecast/config.json", `"provider": "sim",
      "model": "sim-openai-gpt-5-t"`, `"provider": "myagent",
      "model": "sim-openai-gpt-5-t"`)
	return dir
}

// overallRow returns the FinDeepForecast overall row of system sys from
// an output folder.
func overallRow(t *testing.T, out, sys string) map[string]any {
	t.Helper()
	tb := readTable(t, filepath.Join(out, "json", "findeepforecast", "overall.json"))
	for _, r := range tb.Rows {
		if r["method"] == sys {
			return r
		}
	}
	t.Fatalf("no overall row for %s", sys)
	return nil
}

// TestCustomProvider runs a system on a provider name that is not built
// in. Offline, its calls are misses (exit 3) named with the provider;
// recording without a --base-url for it fails before sending anything and
// leaves the bundle as it was; recording with one sends exactly its calls
// to the OpenAI-compatible server (the estimate's dry run knows the
// --base-url providers), after which offline reproduce scores the system.
func TestCustomProvider(t *testing.T) {
	srv := newChatServer(t)
	dir := customSystemBundle(t)
	out := filepath.Join(t.TempDir(), "out")
	const tasks = 24 // tasks of the demo's FinDeepForecast, one call each

	code, _, stderr := run(t, "reproduce", dir, "--out", out, "--no-sweep")
	if code != ExitMiss {
		t.Fatalf("offline: exit %d, want %d\n%s", code, ExitMiss, stderr)
	}
	if n := strings.Count(stderr, "myagent sim-openai-gpt-5-t"); n != tasks {
		t.Errorf("offline: %d misses listed for myagent, want %d\n%s", n, tasks, stderr)
	}
	if !strings.Contains(stderr, "--base-url myagent=URL") {
		t.Errorf("offline: no hint to give a base URL\n%s", stderr)
	}

	before := treeState(t, dir)
	code, _, stderr = run(t, "reproduce", dir, "--out", out, "--no-sweep", "--mode", "record", "--yes")
	if code != ExitFailure || !strings.Contains(stderr, `provider "myagent" of OpenAI GPT-5 (T) is not built in`) {
		t.Fatalf("record without --base-url: exit %d, want %d naming the system\n%s", code, ExitFailure, stderr)
	}
	if srv.count() != 0 {
		t.Errorf("record without --base-url sent %d requests", srv.count())
	}
	diffStates(t, "record without --base-url", before, treeState(t, dir))

	args := []string{"reproduce", dir, "--out", out, "--no-sweep", "--mode", "record", "--yes", "--base-url", "myagent=" + srv.URL + "/v1"}
	if code, _, stderr := run(t, args...); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, stderr)
	}
	if srv.count() != tasks {
		t.Errorf("record sent %d requests, want %d", srv.count(), tasks)
	}
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--no-sweep"); code != 0 {
		t.Fatalf("offline after recording: exit %d\n%s", code, stderr)
	}
	row := overallRow(t, out, "OpenAI GPT-5 (T)")
	if row["missing"] != 0.0 || row["scored"] == 0.0 {
		t.Errorf("after recording: %v, want no missing call and scored tasks", row)
	}
	b, _ := json.Marshal(row)
	t.Logf("recorded system: %s", b)
}

// TestCustomProviderSweep checks that sweep, too, lists the calls of a
// system on a provider that is not built in as misses (exit 3) instead
// of sweeping with the system's row left empty.
func TestCustomProviderSweep(t *testing.T) {
	dir := customSystemBundle(t)
	code, _, stderr := run(t, "sweep", dir, "--knob", "findeepforecast.tolerance_scale=0.5")
	if code != ExitMiss || !strings.Contains(stderr, "myagent") {
		t.Fatalf("sweep: exit %d, want %d naming myagent\n%s", code, ExitMiss, stderr)
	}
}

// rewriteBundleFile replaces the first old in the bundle file rel (a path
// in the bundle folder dir) by new and reseals the bundle, as a user
// editing a bundle by hand and running "finrepro bundle seal" would. The
// test fails when the file does not hold old.
func rewriteBundleFile(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s changed: it does not hold %q", rel, old)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Seal(dir, *m.Manifest, nil, nil); err != nil {
		t.Fatal(err)
	}
}
