package scores

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// expected is testdata/synthetic_expected.json, computed by
// testdata/synthetic.py with numpy and statsmodels.
type expected struct {
	CompleteTasks int `json:"complete_tasks"`
	Systems       map[string]struct {
		Mean, SECluster, SENaive, MeanComplete, MeanEN, MeanZH float64
		Answered, Clusters                                     int
	} `json:"systems"`
	Pair struct {
		Difference, SECluster float64
		Shared                int
	} `json:"pair_alpha_beta"`
}

func loadExpected(t *testing.T) expected {
	b, err := os.ReadFile("testdata/synthetic_expected.json")
	if err != nil {
		t.Fatal(err)
	}
	var e expected
	// the JSON keys are snake_case; map them onto the fields
	r := strings.NewReplacer(`"se_cluster"`, `"SECluster"`, `"se_naive"`, `"SENaive"`, `"mean_complete"`, `"MeanComplete"`, `"mean_EN"`, `"MeanEN"`, `"mean_ZH"`, `"MeanZH"`)
	if err := json.Unmarshal([]byte(r.Replace(string(b))), &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Systems) != 4 {
		t.Fatalf("expected values for %d systems", len(e.Systems))
	}
	return e
}

func cell(t *testing.T, tab *analysis.Table, row int, col string) analysis.Cell {
	t.Helper()
	c := tab.Col(col)
	if c < 0 {
		t.Fatalf("table %s has no column %q", tab.Name, col)
	}
	return tab.Rows[row][c]
}

func rowOf(t *testing.T, tab *analysis.Table, col, text string) int {
	t.Helper()
	c := tab.Col(col)
	for i, r := range tab.Rows {
		if r[c].Text == text {
			return i
		}
	}
	t.Fatalf("table %s: no row with %s = %q", tab.Name, col, text)
	return -1
}

func analyseSynthetic(t *testing.T, cfg Config) *analysis.Result {
	t.Helper()
	if cfg.Reps == 0 {
		cfg.Reps = 2000
	}
	res, err := Analyse(loadSynthetic(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSyntheticStatsmodels checks the leaderboard of the synthetic matrix
// against numpy and statsmodels: means over answered tasks, over the
// tasks every system answered, CR1 and naive standard errors, counts, the
// EN and ZH means and the Alpha - Beta paired difference.
func TestSyntheticStatsmodels(t *testing.T) {
	e := loadExpected(t)
	res := analyseSynthetic(t, Config{})
	lb := res.Table("leaderboard")
	for name, want := range e.Systems {
		i := rowOf(t, lb, "system", name)
		for _, c := range []struct {
			col  string
			want float64
		}{
			{"mean", want.Mean}, {"se_cluster", want.SECluster}, {"se_naive", want.SENaive},
			{"mean_complete", want.MeanComplete}, {"answered", float64(want.Answered)},
			{"missing", float64(40 - want.Answered)}, {"clusters", float64(want.Clusters)},
		} {
			if got := cell(t, lb, i, c.col); !got.IsNum || math.Abs(got.Num-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
				t.Errorf("%s %s = %+v, want %v", name, c.col, got, c.want)
			}
		}
		by := res.Table("by_language")
		j := rowOf(t, by, "system", name)
		en, zh := cell(t, by, j, "EN").Num, cell(t, by, j, "ZH").Num
		if math.Abs(en-want.MeanEN) > 1e-9 || math.Abs(zh-want.MeanZH) > 1e-9 || math.Abs(cell(t, by, j, "EN - ZH").Num-(want.MeanEN-want.MeanZH)) > 1e-9 {
			t.Errorf("%s by language: EN %v ZH %v, want %v %v", name, en, zh, want.MeanEN, want.MeanZH)
		}
	}
	if !strings.Contains(strings.Join(lb.Notes, " "), "29 of 40 tasks were answered by every system") {
		t.Errorf("notes %q do not count the %d complete tasks", lb.Notes, e.CompleteTasks)
	}
	// the ranking: Alpha, Beta, Gamma, Delta by construction; Alpha-Beta
	// is the first adjacent pair
	if got := strings.Join(res.Ranking, ","); got != "Alpha (synthetic),Beta (synthetic),Gamma (synthetic),Delta (synthetic)" {
		t.Errorf("ranking %s", got)
	}
	pt := res.Table("pairs")
	if d, se, n := cell(t, pt, 0, "difference").Num, cell(t, pt, 0, "se_cluster").Num, cell(t, pt, 0, "shared").Num; math.Abs(d-e.Pair.Difference) > 1e-9 || math.Abs(se-e.Pair.SECluster) > 1e-9 || int(n) != e.Pair.Shared {
		t.Errorf("Alpha - Beta: %v (SE %v, %v shared), statsmodels %v (SE %v, %d)", d, se, n, e.Pair.Difference, e.Pair.SECluster, e.Pair.Shared)
	}
}

// TestSyntheticInferences checks what follows from the statistics rather
// than their values: intervals contain their means, Holm never lowers a
// p-value, tie groups are contiguous and agree with the p-values, and the
// power note is there.
func TestSyntheticInferences(t *testing.T) {
	res := analyseSynthetic(t, Config{})
	lb, pt := res.Table("leaderboard"), res.Table("pairs")
	for i := range lb.Rows {
		m, lo, hi := cell(t, lb, i, "mean").Num, cell(t, lb, i, "ci_lo").Num, cell(t, lb, i, "ci_hi").Num
		if !(lo <= m && m <= hi) {
			t.Errorf("row %d: mean %v outside [%v, %v]", i, m, lo, hi)
		}
		r, rlo, rhi := cell(t, lb, i, "rank").Num, cell(t, lb, i, "rank_lo").Num, cell(t, lb, i, "rank_hi").Num
		if !(rlo <= r && r <= rhi) {
			t.Errorf("row %d: rank %v outside [%v, %v]", i, r, rlo, rhi)
		}
	}
	if len(pt.Rows) != 3 {
		t.Fatalf("%d adjacent pairs, want 3", len(pt.Rows))
	}
	for i := range pt.Rows {
		p, h := cell(t, pt, i, "p").Num, cell(t, pt, i, "p_holm").Num
		if h < p || h > 1 {
			t.Errorf("pair %d: p %v, Holm %v", i, p, h)
		}
		if cell(t, pt, i, "p_method").Text != "sampled" { // 2^20 patterns > 2000
			t.Errorf("pair %d: p method %q", i, cell(t, pt, i, "p_method").Text)
		}
	}
	// Gamma - Delta differ by about 15 points on every task: resolved.
	// Tie groups are formed against each group's best: Beta is not
	// resolved from Alpha (2.3 points, p about 0.07), Gamma is (4.3
	// points), so Gamma leads group 2 although it is not resolved from
	// Beta; Delta leads group 3
	if cell(t, pt, 2, "resolved").Text != "yes" {
		t.Errorf("Gamma - Delta not resolved: %v", pt.Rows[2])
	}
	g := func(i int) float64 { return cell(t, lb, i, "tie_group").Num }
	if g(0) != 1 || g(1) != 1 || g(2) != 2 || g(3) != 3 {
		t.Errorf("tie groups %v %v %v %v", g(0), g(1), g(2), g(3))
	}
	notes := strings.Join(lb.Notes, " ")
	if !strings.Contains(notes, "are not resolvable with 20 clusters at 80 % power") {
		t.Errorf("no power note in %q", notes)
	}
}

// TestDeterminism checks that two runs give the same tables and that the
// order of the rows of the file does not change any printed value.
func TestDeterminism(t *testing.T) {
	a := analyseSynthetic(t, Config{Seed: 5})
	b := analyseSynthetic(t, Config{Seed: 5})
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs differ")
	}
	m := loadSynthetic(t)
	perm := rand.New(rand.NewPCG(1, 2)).Perm(len(m.Tasks))
	sh := &Matrix{File: m.File, Systems: m.Systems}
	for range m.Systems {
		sh.Scores = append(sh.Scores, nil)
	}
	for _, g := range m.Groups {
		sh.Groups = append(sh.Groups, Group{Name: g.Name})
	}
	for _, i := range perm {
		sh.Tasks = append(sh.Tasks, m.Tasks[i])
		sh.Cluster = append(sh.Cluster, m.Cluster[i])
		for s := range m.Systems {
			sh.Scores[s] = append(sh.Scores[s], m.Scores[s][i])
		}
		for g := range m.Groups {
			sh.Groups[g].Values = append(sh.Groups[g].Values, m.Groups[g].Values[i])
		}
	}
	c, err := Analyse(sh, Config{Seed: 5, Reps: 2000})
	if err != nil {
		t.Fatal(err)
	}
	for k, ta := range a.Tables {
		tc := c.Tables[k]
		for i := range ta.Rows {
			for j := range ta.Rows[i] {
				d := ta.Columns[j].Decimals + 2
				if x, y := ta.Rows[i][j].Format(d), tc.Rows[i][j].Format(d); x != y {
					t.Errorf("%s row %d %s: %s, shuffled %s", ta.Name, i, ta.Columns[j].Name, x, y)
				}
			}
		}
	}
}

// TestPublished checks the comparison with published means: printed to
// one decimal, Alpha's 73.2 reproduces 73.2175 (within 0.05), Beta's 72.0
// does not, and a system absent from the matrix is not comparable.
func TestPublished(t *testing.T) {
	pub, err := ParsePublished("pub.csv", strings.NewReader("system,score\nAlpha (synthetic),73.2\nBeta (synthetic),72.0\nOmega,50\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := analyseSynthetic(t, Config{Published: pub, Synthetic: true})
	pt := res.Table("published")
	want := map[string]string{"Alpha (synthetic)": "reproduced", "Beta (synthetic)": "differs", "Omega": "not comparable"}
	for sys, v := range want {
		if got := cell(t, pt, rowOf(t, pt, "system", sys), "verdict").Text; got != v {
			t.Errorf("%s: %s, want %s", sys, got, v)
		}
	}
	if !res.Synthetic || !strings.HasPrefix(pt.Title, "SYNTHETIC DATA") {
		t.Error("synthetic result not marked")
	}
}

// TestSmallMatrix is a matrix small enough to check by hand: A scores 1,
// 0, 1 and B 0, 0, (missing) on three tasks, each its own cluster. A's
// mean 2/3, B's 0 over its 2 answered tasks; over the 2 complete tasks A
// has 1/2. The scores are 0/1, so Wilson columns appear: A's 2 of 3 gives
// (0.2077, 0.9385) (Newcombe 1998's formula; statsmodels agrees).
func TestSmallMatrix(t *testing.T) {
	m, err := Parse("small.csv", strings.NewReader("task,A,B\nt1,1,0\nt2,0,0\nt3,1,\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Analyse(m, Config{Reps: 500})
	if err != nil {
		t.Fatal(err)
	}
	lb := res.Table("leaderboard")
	checks := []struct {
		row  int
		col  string
		want float64
	}{
		{0, "mean", 2.0 / 3}, {0, "mean_complete", 0.5}, {1, "mean", 0}, {1, "mean_complete", 0},
		{0, "wilson_lo", 0.2076596}, {0, "wilson_hi", 0.9385081}, {1, "answered", 2}, {1, "missing", 1},
	}
	for _, c := range checks {
		if got := cell(t, lb, c.row, c.col); !got.IsNum || math.Abs(got.Num-c.want) > 1e-6 {
			t.Errorf("row %d %s = %+v, want %v", c.row, c.col, got, c.want)
		}
	}
	// B is constant 0: its standard errors are 0 and its design effect 1
	if se, d := cell(t, lb, 1, "se_cluster"), cell(t, lb, 1, "design_effect"); se.Num != 0 || d.Num != 1 {
		t.Errorf("B: SE %+v, design effect %+v", se, d)
	}
	// one system only: no pairs, no power note, still a leaderboard
	m1, _ := Parse("one.csv", strings.NewReader("task,A\nt1,1\n"), Options{})
	res, err = Analyse(m1, Config{Reps: 10})
	if err != nil {
		t.Fatal(err)
	}
	lb = res.Table("leaderboard")
	if len(lb.Rows) != 1 || !cell(t, lb, 0, "se_cluster").Undef || len(res.Table("pairs").Rows) != 0 {
		t.Errorf("one task, one system: %+v", lb.Rows)
	}
}
