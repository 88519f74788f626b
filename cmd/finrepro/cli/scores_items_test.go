package cli

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScoresOnDemoItems runs reproduce on the built-in demo, feeds the
// items export of each benchmark whose headline is a mean over its
// cluster unit to finrepro scores --items, and checks that every
// system's mean and CR1 standard error are the headline table's.
// FinDeepResearch: one task per company (the report accuracy), each its
// own cluster, so the CR1 error over companies equals the benchmark's
// item-level error clustered by company (see TestReproducePair). Both
// commands resample with the same uncertainty board, so with reproduce's
// seed (20) and resample count scores also gives the headline's cluster
// bootstrap intervals, rank intervals and tie groups: a company's reports weigh alike
// in both, one task here and 247 equally weighted items there.
// FinDeepForecast: one task per task, clustered by task as the default
// cluster knob does, and by week under cluster=week and --cluster-col
// week. ICBCBench's overall score is a weighted sum of
// ratios and FinResearchBench II's pass rates need its gold filters:
// scores refuses them.
func TestScoresOnDemoItems(t *testing.T) {
	out, byWeek := t.TempDir(), t.TempDir()
	if code, stdout, stderr := run(t, "reproduce", "--no-sweep", "--quiet", "--out", out); code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "reproduce", "--no-sweep", "--quiet", "--out", byWeek, "--set", "findeepforecast.cluster=week"); code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, c := range []struct {
		out, bench, table, key, mean string
		extra                        []string
	}{
		{out, "findeepresearch", "accuracy", "system", "accuracy", nil},
		{out, "findeepforecast", "overall", "method", "overall_accuracy", nil},
		{byWeek, "findeepforecast", "overall", "method", "overall_accuracy", []string{"--cluster-col", "week"}},
	} {
		t.Run(c.bench+strings.Join(c.extra, ""), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			args := append([]string{"scores", filepath.Join(c.out, "json", c.bench, "items.jsonl"), "--items", c.bench, "--reps", "10000", "--seed", "20", "--synthetic", "--out", dir}, c.extra...)
			code, stdout, stderr := run(t, args...)
			if code != 0 {
				t.Fatalf("scores exit %d\n%s\n%s", code, stdout, stderr)
			}
			lb := readTable(t, filepath.Join(dir, "json", "scores", "leaderboard.json"))
			head := readTable(t, filepath.Join(c.out, "json", c.bench, c.table+".json"))
			compared := 0
			for _, r := range lb.Rows {
				sys := r["system"].(string)
				if _, ok := r["mean"].(float64); !ok {
					continue // no scored task
				}
				for _, col := range [][2]string{{"mean", c.mean}, {"se_cluster", "se_cluster"},
					{"ci_lo", "cluster_lo"}, {"ci_hi", "cluster_hi"}, {"rank_lo", "rank_lo"}, {"rank_hi", "rank_hi"}, {"tie_group", "tier"}} {
					i := slices.IndexFunc(head.Rows, func(h map[string]any) bool { return h[c.key] == sys })
					if i < 0 {
						t.Fatalf("%s: no row of %q", c.table, sys)
					}
					got, want := r[col[0]].(float64), head.Rows[i][col[1]].(float64)
					// both files round to their column's decimals + 2
					if tol := halfUnit(lb, col[0]) + halfUnit(head, col[1]); math.Abs(got-want) > tol {
						t.Errorf("%s %s: scores %v, %s %v", sys, col[1], got, c.table, want)
					}
				}
				compared++
			}
			if compared != len(head.Rows) || compared < 2 {
				t.Errorf("%d systems compared, the headline has %d", compared, len(head.Rows))
			}
		})
	}
	for _, bench := range []string{"icbcbench", "finresearchbench2"} {
		code, _, stderr := run(t, "scores", filepath.Join(out, "json", bench, "items.jsonl"), "--items", bench)
		if code != ExitUsage || !strings.Contains(stderr, "not means over tasks") {
			t.Errorf("%s: exit %d, %s", bench, code, stderr)
		}
	}
}

// halfUnit is half a unit of the last digit a JSON table keeps in column
// col (its decimals + 2), plus a little for the binary representation.
func halfUnit(tb *jsonTable, col string) float64 {
	for _, c := range tb.Columns {
		if c.Name == col {
			return 0.5*math.Pow(10, -float64(c.Decimals+2)) + 1e-12
		}
	}
	return 0
}
