package cli

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// cr1 is the CR1 cluster-robust standard error of the mean of y, the
// items of cluster g being those with cl[i] == g, written out from its
// definition (docs/scores.md): the sandwich variance of an intercept-only
// regression, Σ_g (Σ_{i∈g} (y_i - ȳ))² / N², times the small-sample
// factor G/(G-1)·(N-1)/(N-K) with K = 1, i.e. G/(G-1).
func cr1(y []float64, cl []string) float64 {
	ybar := mean(y)
	resid := map[string]float64{}
	for i, v := range y {
		resid[cl[i]] += v - ybar
	}
	var s float64
	for _, r := range resid {
		s += r * r
	}
	G, N := float64(len(resid)), float64(len(y))
	return math.Sqrt(G / (G - 1) * s / (N * N))
}

// reportAccuracies returns, from a FinDeepResearch items.jsonl, each
// system's report accuracies 100·Σ weight·score / Σ weight by company.
func reportAccuracies(items []item) map[string]map[string]float64 {
	type rep struct{ sys, co string }
	num, den := map[rep]float64{}, map[rep]float64{}
	for _, it := range items {
		r := rep{it.str("system"), it.str("company")}
		w, _ := it.num("weight")
		s, _ := it.num("score")
		num[r] += w * s
		den[r] += w
	}
	out := map[string]map[string]float64{}
	for r := range num {
		if out[r.sys] == nil {
			out[r.sys] = map[string]float64{}
		}
		out[r.sys][r.co] = ratio(num[r], den[r])
	}
	return out
}

// TestReproducePair asks reproduce for two pairs of FinDeepResearch
// systems, one adjacent in the ranking and one not, and one of
// FinResearchBench II, and checks the requested_pairs tables in every
// format.
//
// Oracles, from the items alone: with one report per company and every
// item graded, the board's items (weighted so that they average to the
// report accuracy) have cluster residual sums n·(d_g - d̄) for the n items
// of company g, so the CR1 error of the item mean equals the CR1 error of
// the G per-company differences d_g treated as one item each:
// G/(G-1)·Σ n²(d_g - d̄)²/(nG)² = G/(G-1)·Σ (d_g - d̄)²/G². The difference
// is the mean of d_g. The adjacent pair must repeat its row of the pairs
// table (the same cluster draws and sign patterns); only the Holm
// adjustment, over the requested pairs, may differ.
func TestReproducePair(t *testing.T) {
	out := t.TempDir()
	const a, b, c = "Grok 4 DeepSearch", "OpenAI o3-deep-research", "OpenAI GPT-5 (T+S)"
	code, stdout, stderr := run(t, "reproduce", "--no-sweep", "--out", out,
		"--pair", "findeepresearch:"+a+","+c, "--pair", "findeepresearch:"+b+","+c, "--pair", "finresearchbench2:Qwen,Gemini")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stdout, "Paired comparisons on request"); n != 2 {
		t.Errorf("%d requested tables on the terminal, want 2", n)
	}
	if !strings.Contains(stdout, "| "+a+" - "+c+" ") || !strings.Contains(stdout, "p Holm") {
		t.Errorf("terminal lacks the requested pair:\n%s", stdout)
	}
	// the other benchmarks were asked for no pair
	for _, bench := range []string{"icbcbench", "findeepforecast"} {
		if _, err := os.Stat(filepath.Join(out, "csv", bench, "requested_pairs.csv")); !os.IsNotExist(err) {
			t.Errorf("%s: requested_pairs.csv written without a request (%v)", bench, err)
		}
	}
	acc := reportAccuracies(readItems(t, filepath.Join(out, "json", "findeepresearch", "items.jsonl")))
	req := readTable(t, filepath.Join(out, "json", "findeepresearch", "requested_pairs.json"))
	if len(req.Rows) != 2 {
		t.Fatalf("findeepresearch: %d requested rows, want 2", len(req.Rows))
	}
	for i, p := range [][2]string{{a, c}, {b, c}} {
		r := req.Rows[i]
		if r["system"] != p[0] || r["next"] != p[1] {
			t.Errorf("row %d: %v - %v, want %s - %s", i, r["system"], r["next"], p[0], p[1])
		}
		var d []float64
		var cl []string
		for co, x := range acc[p[0]] {
			if y, ok := acc[p[1]][co]; ok {
				d, cl = append(d, x-y), append(cl, co)
			}
		}
		sub := &jsonTable{Columns: req.Columns, Rows: []map[string]any{r}}
		sub.check(t, "system", p[0], "difference", mean(d))
		sub.check(t, "system", p[0], "se_cluster", cr1(d, cl))
		sub.check(t, "system", p[0], "clusters", float64(len(d)))
	}
	pairs := readTable(t, filepath.Join(out, "json", "findeepresearch", "pairs.json"))
	for _, r := range pairs.Rows {
		if r["system"] != b || r["next"] != c {
			continue
		}
		for _, col := range []string{"shared", "clusters", "difference", "ci_lo", "ci_hi", "se_cluster", "p", "p_method"} {
			if r[col] != req.Rows[1][col] {
				t.Errorf("adjacent pair %s: pairs %v, requested %v", col, r[col], req.Rows[1][col])
			}
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, "csv", "finresearchbench2", "requested_pairs.csv"))
	if err != nil || !strings.Contains(string(csv), "\r\nQwen,Gemini,") {
		t.Errorf("finresearchbench2 requested_pairs.csv: %v\n%s", err, csv)
	}
	x, err := excelize.OpenFile(filepath.Join(out, "xlsx", "findeepresearch.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows("requested_pairs")
	if err != nil || len(rows) < 3 || rows[1][0] != a || rows[2][0] != b {
		t.Errorf("workbook sheet requested_pairs: %v %q", err, rows)
	}
	sums := checkSums(t, out)
	if _, ok := sums["json/findeepresearch/requested_pairs.json"]; !ok {
		t.Error("requested_pairs.json not in SHA256SUMS")
	}
}

func TestReproducePairErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pair", "findeepresearch"}, "want benchmark:SYSTEM_A,SYSTEM_B"},
		{[]string{"--pair", "nobench:A,B"}, `unknown benchmark "nobench"`},
		{[]string{"--pair", "findeepforecast:A,A"}, "compares a system with itself"},
		{[]string{"--pair", "findeepforecast:Grok 4 (T+S),Nobody"}, `no system "Nobody"`},
		{[]string{"--set", "findeepforecast.pairs=Nobody,Grok 4 (T+S)"}, `no system "Nobody"`},
	} {
		code, stdout, stderr := run(t, append([]string{"reproduce", "--no-sweep", "--quiet", "--out", t.TempDir()}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q (stdout %q), want %q", c.args, code, stderr, stdout, c.want)
		}
	}
}

func TestPairSettings(t *testing.T) {
	got, err := pairSettings([]string{"icbcbench.seed=2", "findeepresearch.pairs=A,B"}, []string{"findeepforecast:C,D", "findeepresearch:E,F", "findeepforecast:G,H"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"icbcbench.seed=2", "findeepresearch.pairs=A,B;E,F", "findeepforecast.pairs=C,D;G,H"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestScoresPair asks finrepro scores for the pair Beta - Alpha of the
// synthetic matrix (reversed from the ranking) and checks its row of
// requested_pairs against numpy and statsmodels
// (analysis/scores/testdata/synthetic.py: difference Alpha - Beta
// 2.34103 over 39 shared tasks, CR1 error 1.17081), negated.
func TestScoresPair(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o")
	code, stdout, stderr := run(t, scoresArgs(out, "--pair", "Beta (synthetic),Alpha (synthetic)", "--pair", "Delta (synthetic),Alpha (synthetic)")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Beta (synthetic) - Alpha (synthetic)") || !strings.Contains(stdout, "Paired comparisons on request") {
		t.Errorf("terminal lacks the requested pair:\n%s", stdout)
	}
	tb := readTable(t, filepath.Join(out, "json", "scores", "requested_pairs.json"))
	if len(tb.Rows) != 2 || tb.Rows[0]["next"] != "Alpha (synthetic)" {
		t.Fatalf("rows %v", tb.Rows)
	}
	tb.check(t, "system", "Beta (synthetic)", "difference", -2.3410256410256407)
	tb.check(t, "system", "Beta (synthetic)", "se_cluster", 1.1708061780775898)
	tb.check(t, "system", "Beta (synthetic)", "shared", 39)
	x, err := excelize.OpenFile(filepath.Join(out, "xlsx", "scores.xlsx"))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if rows, err := x.GetRows("requested_pairs"); err != nil || len(rows) < 3 || rows[1][0] != "Beta (synthetic)" {
		t.Errorf("workbook sheet requested_pairs: %v %q", err, rows)
	}
	for _, c := range []struct{ pair, want string }{
		{"Alpha (synthetic)", "want SYSTEM_A,SYSTEM_B"},
		{"Alpha (synthetic),Nobody", `no system "Nobody"`},
	} {
		if code, _, stderr := run(t, scoresArgs(t.TempDir(), "--pair", c.pair)...); code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("--pair %q: exit %d, %s", c.pair, code, stderr)
		}
	}
}
