package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReproducePrintsRankIntervals checks that every headline leaderboard
// on the terminal carries the rank with its 95 % interval ("2 (1-3)") and
// the clustered standard error, and that the full tables keep the columns
// the terminal leaves out.
func TestReproducePrintsRankIntervals(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	// wide enough that no column is wrapped or left out
	var o, e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
		if k == "COLUMNS" {
			return "400"
		}
		return ""
	}}
	code := env.main(context.Background(), []string{"reproduce", "--no-sweep", "--out", out})
	stdout, stderr := o.String(), e.String()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	headers := strings.Count(stdout, "rank (95%)")
	if headers != 4 {
		t.Errorf("%d headline tables with a rank interval column, want 4", headers)
	}
	if !regexp.MustCompile(`\| [0-9]+ \([0-9]+-[0-9]+\) +\|`).MatchString(stdout) {
		t.Error("no rank with its interval on the terminal")
	}
	if !strings.Contains(stdout, "SE cluster") || !strings.Contains(stdout, "Power: differences below") {
		t.Error("no clustered standard error or power note on the terminal")
	}
	for _, f := range []string{"findeepresearch/accuracy.csv", "findeepforecast/pairs.csv", "icbcbench/pairs.csv", "finresearchbench2/pairs.csv"} {
		b, err := os.ReadFile(filepath.Join(out, "csv", f))
		if err != nil {
			t.Error(err)
			continue
		}
		if head, _, _ := strings.Cut(string(b), "\n"); strings.HasSuffix(f, "accuracy.csv") && !strings.Contains(head, "rank_lo") {
			t.Errorf("%s header %q has no rank_lo", f, head)
		}
	}
}
