package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/demo"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/results"
	"github.com/xuri/excelize/v2"
)

// unpackDemo unpacks the built-in demo bundle into a temporary folder.
func unpackDemo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := archive.Read(context.Background(), bytes.NewReader(demo.Embedded()), dir, archive.Limits{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReproduceDemo is the newcomer path: reproduce on the built-in demo
// writes every output, SHA256SUMS matches them, and a second independent
// run writes identical bytes.
func TestReproduceDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("reproduces the whole demo twice")
	}
	out1, out2 := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	code, stdout, stderr := run(t, "reproduce", "--out", out1)
	if code != 0 {
		t.Fatalf("reproduce exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"SYNTHETIC DATA", "Published tables:", "FinResearchBench II", "Replayed "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	sums := checkSums(t, out1)
	for _, f := range []string{
		"site/index.html", "site/sensitivity.html", "site/assets/echarts.min.js",
		"xlsx/all.xlsx", "xlsx/icbcbench.xlsx", "xlsx/findeepresearch.xlsx", "xlsx/findeepforecast.xlsx", "xlsx/finresearchbench2.xlsx",
		"json/finresearchbench2/pass_rates.json", "json/icbcbench/main_results.json", "json/findeepresearch/markets.json",
		"json/findeepforecast/task_types.json", "json/comparison/verdicts.json",
		"csv/finresearchbench2/pass_rates.csv", "latex/icbcbench/main_results.tex",
	} {
		if _, ok := sums[f]; !ok {
			t.Errorf("no %s in SHA256SUMS", f)
		}
	}
	// The workbook says the data is synthetic on its README sheet.
	x, err := excelize.OpenFile(filepath.Join(out1, "xlsx", "all.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := x.GetCellValue("README", "A1")
	x.Close()
	if !strings.Contains(strings.ToUpper(v), "SYNTHETIC") {
		t.Errorf("README!A1 = %q, want a synthetic-data notice", v)
	}

	if code, _, stderr := run(t, "reproduce", "--quiet", "--out", out2); code != 0 {
		t.Fatalf("second reproduce exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out1, "SHA256SUMS"))
	b, _ := os.ReadFile(filepath.Join(out2, "SHA256SUMS"))
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of reproduce wrote different outputs")
	}
	checkSums(t, out2)

	// Running again into out1 rewrites its outputs (checkSums below
	// re-hashes every one), removes the files its marker lists that this
	// run does not write (and the folders left empty) and keeps every
	// other file, in the folders it writes or not: a user's csv/mydata.csv
	// survives.
	planted := map[string]bool{ // path: survives
		"site/tasks/icbcbench/stale.html": true, "csv/gone/old.csv": false, "csv/mydata.csv": true, "notes.txt": true,
	}
	for p := range planted {
		f := filepath.Join(out1, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// csv/gone/old.csv stands for a file an earlier run wrote.
	marker, err := os.OpenFile(filepath.Join(out1, markerName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	marker.WriteString("csv/gone/old.csv\n")
	marker.Close()
	// A page or workbook changed in place (same size, other bytes) is
	// rewritten.
	for _, p := range []string{"site/index.html", "xlsx/all.xlsx"} {
		f := filepath.Join(out1, filepath.FromSlash(p))
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 1
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := run(t, "reproduce", "--quiet", "--out", out1); code != 0 {
		t.Fatalf("third reproduce exit %d: %s", code, stderr)
	}
	for p, survives := range planted {
		if _, err := os.Stat(filepath.Join(out1, filepath.FromSlash(p))); (err == nil) != survives {
			t.Errorf("%s: exists %v after a rerun, want %v", p, err == nil, survives)
		}
	}
	if _, err := os.Stat(filepath.Join(out1, "csv", "gone")); err == nil {
		t.Error("csv/gone survived a rerun")
	}
	if c, _ := os.ReadFile(filepath.Join(out1, "SHA256SUMS")); !bytes.Equal(c, a) {
		t.Error("a rerun into the same folder wrote different outputs")
	}
	checkSums(t, out1)
}

// checkSums reads DIR/SHA256SUMS, checks every listed file's hash and
// that the folder's marker lists every output file, and returns the sums
// by path.
func checkSums(t *testing.T, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, path, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.Sum256(b)
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("%s: hash differs from SHA256SUMS", path)
		}
		sums[path] = sum
	}
	// The marker lists exactly the files in SHA256SUMS, and SHA256SUMS.
	mf, err := os.Open(filepath.Join(dir, markerName))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := parseMarker(mf)
	mf.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{report.SumsName}
	for p := range sums {
		want = append(want, p)
	}
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("the marker lists %d files, SHA256SUMS %d and itself", len(listed), len(sums))
	}
	return sums
}

// TestReproduceMiss changes a judge's model in a demo bundle (and reseals
// it): every call to that judge is then missing, and reproduce exits 3
// naming them instead of calling anything.
func TestReproduceMiss(t *testing.T) {
	dir := unpackDemo(t)
	panel := filepath.Join(dir, "inputs", "finresearchbench2", "panel.json")
	b, err := os.ReadFile(panel)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`"model": "gpt-5.4"`), []byte(`"model": "gpt-5.4-mini"`), 1)
	if err := os.WriteFile(panel, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := results.Seal(dir, *m.Manifest, nil, nil); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "reproduce", dir, "--out", filepath.Join(t.TempDir(), "out"))
	if code != ExitMiss {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitMiss, stderr)
	}
	for _, want := range []string{"not in the cache", "finresearchbench2", "gpt-5.4-mini", "--mode record"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestReproduceCorrupt flips one byte of the demo bundle's cache: reproduce
// refuses it with exit 4 before any analysis.
func TestReproduceCorrupt(t *testing.T) {
	dir := unpackDemo(t)
	var victim string
	filepath.WalkDir(filepath.Join(dir, "cache"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && victim == "" && strings.HasSuffix(p, ".pack") {
			victim = p
		}
		return err
	})
	if victim == "" {
		t.Fatal("no pack file in the demo cache")
	}
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := run(t, "reproduce", dir, "--out", filepath.Join(t.TempDir(), "out"))
	if code != ExitIntegrity {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitIntegrity, stderr)
	}
	rel, _ := filepath.Rel(dir, victim)
	if !strings.Contains(stderr, filepath.ToSlash(rel)) {
		t.Errorf("stderr does not name %s:\n%s", rel, stderr)
	}
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{nil, ExitUsage, "Commands:"},
		{[]string{"--help"}, ExitOK, "Exit codes:"},
		{[]string{"nope"}, ExitUsage, "unknown command"},
		{[]string{"reproduce", "--help"}, ExitOK, "--mode"},
		{[]string{"reproduce", "a", "b"}, ExitUsage, "at most one BUNDLE"},
		{[]string{"reproduce", "--mode", "online"}, ExitUsage, "want offline or record"},
		{[]string{"reproduce", "--set", "icbcbench.nope=1"}, ExitUsage, "unknown knob"},
		{[]string{"sweep", "--knob", "finresearchbench2"}, ExitUsage, "benchmark.knob=V1;V2"},
		{[]string{"demo"}, ExitUsage, "--out DIR"},
		{[]string{"demo", "--archive", "x.tar.zst", "--factor", "2"}, ExitUsage, "--factor"},
		{[]string{"demo", "--archive", "x.tar.zst", "--scale", "full", "--factor", "0"}, ExitUsage, "--factor"},
		{[]string{"version"}, ExitOK, "finrepro " + Version},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
				t.Fatalf("exit %d, want %d; output lacks %q?\n%s%s", code, tc.code, tc.want, stdout, stderr)
			}
		})
	}
}

// TestSweep varies FinResearchBench II's judge panel from the cache alone.
func TestSweep(t *testing.T) {
	code, stdout, stderr := run(t, "sweep", "--knob", "finresearchbench2.judges=gpt-5.4,claude-opus-4-7;gemini-3-pro-preview")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"judges", "gpt-5.4,claude-opus-4-7", "gemini-3-pro-preview", "Spearman"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestReproduceRecord grows the demo leaderboard: one FinResearchBench II
// judge is moved to an OpenAI-compatible server (a local imitation), so
// its calls are missing. Offline reproduce exits 3; record mode sends
// exactly the missing calls and then reproduces; a second record run
// sends nothing, and offline reproduce now succeeds.
func TestReproduceRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("reproduces the demo three times")
	}
	srv := newChatServer(t)
	dir := unpackDemo(t)
	rewriteBundleFile(t, dir, "inputs/finresearchbench2/panel.json", `"provider": "sim",
      "model": "gpt-5.4"`, `"provider": "vllm",
      "model": "gpt-5.4"`)
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--no-sweep"); code != ExitMiss {
		t.Fatalf("offline: exit %d, want %d\n%s", code, ExitMiss, stderr)
	}
	if srv.count() != 0 {
		t.Fatalf("offline reproduce made %d calls", srv.count())
	}
	// Without --yes and with no terminal, record mode refuses to spend.
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--mode", "record"); code != ExitUsage {
		t.Fatalf("record without --yes: exit %d, want %d\n%s", code, ExitUsage, stderr)
	}
	args := []string{"reproduce", dir, "--out", out, "--no-sweep", "--mode", "record", "--yes", "--base-url", "vllm=" + srv.URL + "/v1"}
	code, _, stderr := run(t, args...)
	if code != 0 || !strings.Contains(stderr, "through the batch APIs") {
		t.Fatalf("record: exit %d (or no batch price)\n%s", code, stderr)
	}
	calls := srv.count()
	if calls == 0 {
		t.Fatal("record mode sent no request")
	}
	if code, _, stderr := run(t, args...); code != 0 || srv.count() != calls {
		t.Fatalf("second record run: exit %d, %d new calls\n%s", code, srv.count()-calls, stderr)
	}
	if code, _, stderr := run(t, "reproduce", dir, "--out", out, "--no-sweep"); code != 0 {
		t.Fatalf("offline after recording: exit %d\n%s", code, stderr)
	}
}

// TestResamplesKeepRankings checks, on the demo bundle, that a knob
// marked Resamples never changes a benchmark's ranking: sweeps rely on it
// to skip the bootstrap.
func TestResamplesKeepRankings(t *testing.T) {
	var e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e, Getenv: func(string) string { return "" }}
	s, err := openSession(context.Background(), env, bundleArg{}, nil, nil)
	if err != nil {
		t.Fatal(err, e.String())
	}
	defer s.close()
	ctx := context.Background()
	colls, res, err := collectAll(ctx, s.bundle, s.benches, s.client, s.settings, true, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for i, bm := range s.benches {
		for _, k := range bm.Knobs() {
			if !k.Resamples {
				continue
			}
			for _, v := range []string{"0", "7"} {
				r, err := bm.Score(ctx, colls[i], analysis.Settings{k.Name: v})
				if err != nil {
					t.Fatalf("%s %s=%s: %v", bm.Name(), k.Name, v, err)
				}
				if !slices.Equal(r.Ranking, res[i].Ranking) {
					t.Errorf("%s %s=%s: ranking %v, want %v", bm.Name(), k.Name, v, r.Ranking, res[i].Ranking)
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no benchmark has a Resamples knob")
	}
}
