package cli

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// synthMatrix is the committed synthetic score matrix; its expected
// values come from numpy and statsmodels (see its testdata folder).
const synthMatrix = "../../../analysis/scores/testdata/synthetic.csv"

func scoresArgs(out string, extra ...string) []string {
	args := []string{"scores", synthMatrix, "--task-col", "id", "--cluster-col", "base", "--group-col", "language",
		"--group-col", "theme", "--synthetic", "--reps", "2000", "--out", out}
	return append(args, extra...)
}

// TestScoresCommand runs finrepro scores on the synthetic matrix and reads
// its outputs back: the leaderboard CSV holds the statsmodels means and
// CR1 standard errors, the workbook its synthetic banner and a leaderboard
// sheet, and a second run writes the same bytes.
func TestScoresCommand(t *testing.T) {
	dir := t.TempDir()
	pub := filepath.Join(dir, "published.csv")
	if err := os.WriteFile(pub, []byte("system,score\nAlpha (synthetic),73.2\nBeta (synthetic),72.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out1, out2 := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	code, stdout, stderr := run(t, scoresArgs(out1, "--published", pub)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"SYNTHETIC DATA", "1 (1-", "Alpha (synthetic) - Beta (synthetic)", "EN - ZH", "not resolvable with 20 clusters", "reproduced", "differs"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if code, _, stderr := run(t, scoresArgs(out2, "--published", pub)...); code != 0 {
		t.Fatalf("second run: exit %d: %s", code, stderr)
	}
	s1, err := os.ReadFile(filepath.Join(out1, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := os.ReadFile(filepath.Join(out2, "SHA256SUMS"))
	if string(s1) != string(s2) || !strings.Contains(string(s1), "csv/scores/published.csv") {
		t.Errorf("two runs differ or miss the published table:\n%s\n%s", s1, s2)
	}
	// the site page of the leaderboard, in SHA256SUMS, labelled synthetic
	page, err := os.ReadFile(filepath.Join(out1, "site", "scores.html"))
	if err != nil || !strings.Contains(string(s1), "site/scores.html") || !strings.Contains(string(page), "SYNTHETIC") || !strings.Contains(string(page), "Alpha (synthetic)") {
		t.Errorf("site page: %v; in SHA256SUMS: %v", err, strings.Contains(string(s1), "site/scores.html"))
	}
	// a rerun without --published removes the stale published table
	if code, _, stderr := run(t, scoresArgs(out2)...); code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out2, "csv", "scores", "published.csv")); !os.IsNotExist(err) {
		t.Errorf("stale published.csv: %v", err)
	}

	var exp struct {
		Systems map[string]struct {
			Mean      float64 `json:"mean"`
			SECluster float64 `json:"se_cluster"`
		} `json:"systems"`
	}
	b, err := os.ReadFile("../../../analysis/scores/testdata/synthetic_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &exp); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out1, "csv", "scores", "leaderboard.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	if len(recs) != 5 {
		t.Fatalf("leaderboard has %d rows, want 4 and a header", len(recs)-1)
	}
	for _, r := range recs[1:] {
		want, ok := exp.Systems[r[col["system"]]]
		if !ok {
			t.Fatalf("unexpected system %q", r[col["system"]])
		}
		m, _ := strconv.ParseFloat(r[col["mean"]], 64)
		se, _ := strconv.ParseFloat(r[col["se_cluster"]], 64)
		// the CSV prints the column's decimals: 2 for means, 3 for SEs
		if math.Abs(m-want.Mean) > 0.005 || math.Abs(se-want.SECluster) > 0.0005 {
			t.Errorf("%s: mean %v SE %v, statsmodels %v %v", r[col["system"]], m, se, want.Mean, want.SECluster)
		}
	}

	x, err := excelize.OpenFile(filepath.Join(out1, "xlsx", "scores.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	banner, _ := x.GetCellValue("README", "A1")
	if !strings.HasPrefix(banner, "SYNTHETIC DATA") {
		t.Errorf("workbook README starts %q", banner)
	}
	found := false
	for _, s := range x.GetSheetList() {
		if strings.HasPrefix(s, "leaderboard") {
			found = true
			rows, _ := x.GetRows(s)
			if len(rows) < 5 || !strings.Contains(strings.Join(rows[1], " "), "Alpha (synthetic)") {
				t.Errorf("sheet %s rows %v", s, rows)
			}
		}
	}
	if !found {
		t.Errorf("no leaderboard sheet in %v", x.GetSheetList())
	}
}

func TestScoresErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("task,A\nt1,0.5\nt2,oops\n"), 0o644)
	code, _, stderr := run(t, "scores", bad)
	if code != ExitFailure || !strings.Contains(stderr, bad+`:3: field "A": score "oops" is not a finite number`) {
		t.Errorf("bad score: exit %d, %s", code, stderr)
	}
	if code, _, _ := run(t, "scores"); code != ExitUsage {
		t.Errorf("no FILE: exit %d", code)
	}
	// an output folder of finrepro reproduce is refused, and left alone
	repro := filepath.Join(dir, "repro")
	os.MkdirAll(filepath.Join(repro, "site"), 0o755)
	os.MkdirAll(filepath.Join(repro, "csv", "icbcbench"), 0o755)
	kept := filepath.Join(repro, "csv", "icbcbench", "overall.csv")
	os.WriteFile(kept, []byte("x\n"), 0o644)
	if code, _, stderr := run(t, scoresArgs(repro)...); code != ExitUsage || !strings.Contains(stderr, "folder of its own") {
		t.Errorf("reproduce folder: exit %d, %s", code, stderr)
	}
	os.RemoveAll(filepath.Join(repro, "site"))
	if code, _, stderr := run(t, scoresArgs(repro)...); code != ExitUsage || !strings.Contains(stderr, "csv/icbcbench/overall.csv") {
		t.Errorf("foreign file: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Errorf("foreign file removed: %v", err)
	}
}
