package hisrubric

import (
	"math"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

func cellOf(t *testing.T, tb *analysis.Table, system, col string) analysis.Cell {
	t.Helper()
	c := tb.Col(col)
	for _, r := range tb.Rows {
		if r[0].Text == system {
			return r[c]
		}
	}
	t.Fatalf("%s: no row %s", tb.Name, system)
	return analysis.Cell{}
}

// TestAccuracyClustersByCompany checks that the accuracy's clustered
// error resamples companies, not grading items. In the fixture Alpha has
// one report on each of two companies (one US, one CN), with accuracies a
// and b read from the markets table. Each company's items average to its
// report's accuracy (uncertainty.Weighted), so with G = 2 equal clusters
// of n items the residual sums are ±n·(a-b)/2 and
// SE² = G/(G-1)·Σ r_g²/N² = 2·2·n²·((a-b)/2)²/(2n)² = ((a-b)/2)²:
// SE = |a-b|/2. The naive error treats the 2n items as independent and
// differs; Beta has one report, too few clusters for an error.
func TestAccuracyClustersByCompany(t *testing.T) {
	res, _ := runFixture(t, nil, false)
	acc, mk := res.Table("accuracy"), res.Table("markets")
	a, b := cellOf(t, mk, "Alpha", "US").Num, cellOf(t, mk, "Alpha", "CN").Num
	se, naive := cellOf(t, acc, "Alpha", "se_cluster"), cellOf(t, acc, "Alpha", "se_naive")
	if math.Abs(se.Num-math.Abs(a-b)/2) > 1e-9 {
		t.Errorf("SE cluster %v, want |%v - %v|/2 = %v", se.Num, a, b, math.Abs(a-b)/2)
	}
	if !naive.IsNum || math.Abs(naive.Num-se.Num) < 0.1 {
		t.Errorf("naive SE %+v, want a number unlike the clustered %v", naive, se.Num)
	}
	deff := cellOf(t, acc, "Alpha", "design_effect").Num
	if math.Abs(deff-(se.Num/naive.Num)*(se.Num/naive.Num)) > 1e-9 {
		t.Errorf("design effect %v", deff)
	}
	if c := cellOf(t, acc, "Alpha", "clusters"); c.Num != 2 {
		t.Errorf("clusters %+v, want 2 companies", c)
	}
	if c := cellOf(t, acc, "Beta", "se_cluster"); !c.Undef {
		t.Errorf("Beta's SE %+v, want undefined (one company)", c)
	}
	if res.Table("pairs") == nil {
		t.Error("no pairs table")
	}
}
