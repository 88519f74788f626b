package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The tests below recompute one headline table of each benchmark from its
// json/<benchmark>/items.jsonl alone, by aggregations written out here
// from the papers' protocols (docs/*.md), without calling the benchmarks'
// scoring, and compare with the table reproduce wrote.

// item is one record of an items.jsonl file.
type item map[string]any

func (it item) str(k string) string { s, _ := it[k].(string); return s }

// num returns field k and whether it is a number (not null).
func (it item) num(k string) (float64, bool) { x, ok := it[k].(float64); return x, ok }

func (it item) flag(k string) (v, ok bool) { v, ok = it[k].(bool); return v, ok }

// readItems reads a JSON Lines file, checking that every record has the
// same keys in the same order as the first.
func readItems(t *testing.T, p string) []item {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []item
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var it item
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("%s:%d: %v", p, len(out)+1, err)
		}
		if len(out) > 0 && len(it) != len(out[0]) {
			t.Fatalf("%s:%d: %d keys, the first record has %d", p, len(out)+1, len(it), len(out[0]))
		}
		out = append(out, it)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no records", p)
	}
	return out
}

// jsonTable is a table file as WriteJSON writes it.
type jsonTable struct {
	Columns []struct {
		Name     string `json:"name"`
		Decimals int    `json:"decimals"`
	} `json:"columns"`
	Rows []map[string]any `json:"rows"`
}

func readTable(t *testing.T, p string) *jsonTable {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var tb jsonTable
	if err := json.Unmarshal(b, &tb); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return &tb
}

// check compares the recomputed column col of the row whose key column
// is key (NaN: the cell must be null) within the rounding of the JSON
// numbers: decimals + 2 digits.
func (tb *jsonTable) check(t *testing.T, keyCol, key, col string, want float64) {
	t.Helper()
	i := slices.IndexFunc(tb.Rows, func(r map[string]any) bool { return r[keyCol] == key })
	if i < 0 {
		t.Errorf("no row %s=%q", keyCol, key)
		return
	}
	got, isNum := tb.Rows[i][col].(float64)
	if math.IsNaN(want) {
		if tb.Rows[i][col] != nil {
			t.Errorf("%s %s: got %v, recomputed undefined", key, col, tb.Rows[i][col])
		}
		return
	}
	d := 2
	for _, c := range tb.Columns {
		if c.Name == col {
			d = c.Decimals
		}
	}
	if tol := 0.5*math.Pow(10, -float64(d+2)) + 1e-9; !isNum || math.Abs(got-want) > tol {
		t.Errorf("%s %s: table %v, recomputed from items %.6f", key, col, tb.Rows[i][col], want)
	}
}

// ratio is 100 num / den, NaN when den is 0.
func ratio(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return 100 * num / den
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func TestItemsRecomputeTables(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := run(t, "reproduce", "--no-sweep", "--quiet", "--out", out); code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", code, stdout, stderr)
	}
	sums := checkSums(t, out)
	for _, b := range []string{"icbcbench", "findeepresearch", "findeepforecast", "finresearchbench2"} {
		for _, f := range []string{"json/" + b + "/items.jsonl", "csv/" + b + "/items.csv"} {
			if _, ok := sums[f]; !ok {
				t.Errorf("%s not in SHA256SUMS", f)
			}
		}
	}
	items := func(b string) []item { return readItems(t, filepath.Join(out, "json", b, "items.jsonl")) }
	table := func(b, name string) *jsonTable { return readTable(t, filepath.Join(out, "json", b, name+".json")) }

	t.Run("findeepforecast/overall", func(t *testing.T) {
		// accuracy = correct / scored, scored = rows whose correct is not null
		ok, n := map[string]float64{}, map[string]float64{}
		for _, it := range items("findeepforecast") {
			if c, scored := it.flag("correct"); scored {
				n[it.str("system")]++
				if c {
					ok[it.str("system")]++
				}
			}
		}
		// and each readable recurrent prediction on a resolved task with a
		// non-zero truth is correct exactly when its relative error is
		// below the tolerance
		checked := 0
		for _, it := range items("findeepforecast") {
			c, scored := it.flag("correct")
			v, hasV := it.num("value")
			eps, _ := it.num("tolerance")
			truth, err := strconv.ParseFloat(it.str("truth"), 64)
			if late, _ := it.flag("late"); !scored || late || !hasV || err != nil || truth == 0 {
				continue
			}
			if want := math.Abs((v-truth)/truth) < eps; c != want {
				t.Errorf("%s %s: correct %v, relative error %g vs tolerance %g", it.str("system"), it.str("task"), c, math.Abs((v-truth)/truth), eps)
			}
			checked++
		}
		if checked == 0 {
			t.Error("no recurrent prediction checked")
		}
		tb := table("findeepforecast", "overall")
		if len(tb.Rows) != len(n) {
			t.Errorf("%d rows, %d systems in the items", len(tb.Rows), len(n))
		}
		for sys := range n {
			tb.check(t, "method", sys, "overall_accuracy", ratio(ok[sys], n[sys]))
			tb.check(t, "method", sys, "correct", ok[sys])
			tb.check(t, "method", sys, "scored", n[sys])
		}
	})

	t.Run("findeepresearch/accuracy", func(t *testing.T) {
		// a report's accuracy is 100 x sum(weight x score) / sum(weight);
		// a system's is the mean over its scored reports
		type rep struct{ sys, co string }
		num, den := map[rep]float64{}, map[rep]float64{}
		var order []rep
		for _, it := range items("findeepresearch") {
			r := rep{it.str("system"), it.str("company")}
			w, _ := it.num("weight")
			s, _ := it.num("score")
			if _, seen := den[r]; !seen {
				order = append(order, r)
			}
			num[r] += w * s
			den[r] += w
		}
		accs := map[string][]float64{}
		for _, r := range order {
			accs[r.sys] = append(accs[r.sys], ratio(num[r], den[r]))
		}
		tb := table("findeepresearch", "accuracy")
		for _, row := range tb.Rows {
			sys := row["system"].(string)
			tb.check(t, "system", sys, "accuracy", mean(accs[sys]))
			tb.check(t, "system", sys, "reports", float64(len(accs[sys])))
		}
	})

	t.Run("findeepresearch/accuracy/clustered", func(t *testing.T) {
		// The clustered errors of the accuracy table from the items alone
		// (docs/findeepresearch.md, docs/scores.md). Each grading item of a
		// report of n items with weights w stands for
		// y_i = 100·n·w_i·score_i / Σ w, so that a report's items average
		// to its accuracy and a system's items to its mean over reports.
		// With one report per company, the CR1 error clustered by company
		// is that of the report accuracies a_g, each its own cluster:
		// residual sums n·(a_g - ā) give G/(G-1)·Σ n²(a_g - ā)²/(nG)² =
		// G/(G-1)·Σ (a_g - ā)²/G² (cr1 in pairs_test.go). The naive error is
		// s/√N over the N items y_i (s with divisor N-1), and the design
		// effect (SE cluster / SE naive)².
		recs := items("findeepresearch")
		type rep struct{ sys, co string }
		n, sw := map[rep]float64{}, map[rep]float64{}
		for _, it := range recs {
			r := rep{it.str("system"), it.str("company")}
			w, _ := it.num("weight")
			n[r]++
			sw[r] += w
		}
		y := map[string][]float64{}
		for _, it := range recs {
			r := rep{it.str("system"), it.str("company")}
			w, _ := it.num("weight")
			sc, _ := it.num("score")
			y[r.sys] = append(y[r.sys], 100*n[r]*w*sc/sw[r])
		}
		acc := reportAccuracies(recs)
		tb := table("findeepresearch", "accuracy")
		checked := 0
		for sys, byCo := range acc {
			var a []float64
			var cl []string
			for co, v := range byCo {
				a, cl = append(a, v), append(cl, co)
			}
			if len(a) < 2 {
				continue
			}
			ys := y[sys]
			ybar := mean(ys)
			var ss float64
			for _, v := range ys {
				ss += (v - ybar) * (v - ybar)
			}
			naive := math.Sqrt(ss / float64(len(ys)-1) / float64(len(ys)))
			se := cr1(a, cl)
			tb.check(t, "system", sys, "se_cluster", se)
			tb.check(t, "system", sys, "se_naive", naive)
			tb.check(t, "system", sys, "design_effect", se*se/(naive*naive))
			tb.check(t, "system", sys, "clusters", float64(len(a)))
			checked++
		}
		if checked == 0 {
			t.Error("no system with two companies")
		}
	})

	t.Run("findeepforecast/overall/clustered", func(t *testing.T) {
		// Clustered by task (the default cluster knob), each scored task is
		// one item of 100 (correct) or 0 and its own cluster, so the CR1
		// error is √(G/(G-1)·Σ (y - ȳ)²/G²) over the G scored tasks.
		y, cl := map[string][]float64{}, map[string][]string{}
		for _, it := range items("findeepforecast") {
			if c, scored := it.flag("correct"); scored {
				y[it.str("system")] = append(y[it.str("system")], 100*float64(b2int(c)))
				cl[it.str("system")] = append(cl[it.str("system")], it.str("task"))
			}
		}
		tb := table("findeepforecast", "overall")
		for sys := range y {
			if len(y[sys]) > 1 {
				tb.check(t, "method", sys, "se_cluster", cr1(y[sys], cl[sys]))
			}
		}
	})

	t.Run("finresearchbench2/pass_rates", func(t *testing.T) {
		// Defaults: a rubric is consistent when on every product's report
		// all judges give the same yes/no label (unanimous); gold when
		// also at least one product's majority label is yes and one's is
		// no; a product passes a rubric when more judges say yes than no.
		// gold_item pools the gold rubrics, gold_macro averages per-query
		// rates over the queries with a gold rubric.
		type key struct{ q, r string }
		labels := map[key]map[string][]string{} // by rubric, product: the judges' labels
		var rubrics []key
		products := map[string]bool{}
		for _, it := range items("finresearchbench2") {
			if run, _ := it.num("run"); run != 0 {
				continue
			}
			k := key{it.str("query"), it.str("rubric")}
			if labels[k] == nil {
				labels[k] = map[string][]string{}
				rubrics = append(rubrics, k)
			}
			labels[k][it.str("product")] = append(labels[k][it.str("product")], it.str("label"))
			products[it.str("product")] = true
		}
		goldN := map[string]float64{}           // gold rubrics by query
		pass := map[string]map[string]float64{} // by query, product
		for _, k := range rubrics {
			consistent, ny, nn := true, 0, 0
			myes := map[string]bool{}
			for p, ls := range labels[k] {
				y, n := 0, 0
				for _, l := range ls {
					y += b2int(l == "yes")
					n += b2int(l == "no")
				}
				consistent = consistent && (y == len(ls) || n == len(ls))
				myes[p] = y > n
				ny += b2int(y > n)
				nn += b2int(n > y)
			}
			if !consistent || ny == 0 || nn == 0 {
				continue
			}
			goldN[k.q]++
			if pass[k.q] == nil {
				pass[k.q] = map[string]float64{}
			}
			for p, y := range myes {
				if y {
					pass[k.q][p]++
				}
			}
		}
		tb := table("finresearchbench2", "pass_rates")
		for p := range products {
			var passed, total float64
			var macro []float64
			for q, n := range goldN {
				passed += pass[q][p]
				total += n
				macro = append(macro, 100*pass[q][p]/n)
			}
			tb.check(t, "product", p, "gold_item", ratio(passed, total))
			tb.check(t, "product", p, "gold_macro", mean(macro))
		}
	})

	t.Run("icbcbench/main_results", func(t *testing.T) {
		// objective = 100 x correct / judged answers; subjective = 0.8
		// expert + 0.1 citation + 0.1 source (the demo's weights), where
		// expert is the mean over reports scoring above 0 (expert_average
		// positive), citation 100 x the mean per-report share (task
		// average) and source 100 x the mean S_t; an absent component
		// counts 0. overall = (objective + subjective) / 2 per track.
		type sl struct{ sys, lang string }
		okN, objN := map[sl]float64{}, map[sl]float64{}
		expert, scored, cit, src := map[sl][]float64{}, map[sl]int{}, map[sl][]float64{}, map[sl][]float64{}
		systems := map[string]bool{}
		for _, it := range items("icbcbench") {
			if it.str("set") != "public" {
				continue
			}
			k := sl{it.str("system"), it.str("language")}
			systems[k.sys] = true
			switch it.str("part") {
			case "objective":
				objN[k]++
				if c, _ := it.flag("correct"); c {
					okN[k]++
				}
			case "subjective":
				if e, ok := it.num("expert"); ok {
					scored[k]++
					if e > 0 {
						expert[k] = append(expert[k], e)
					}
				}
				if c, ok := it.num("citation"); ok {
					cit[k] = append(cit[k], c)
				}
				if s, ok := it.num("source"); ok {
					src[k] = append(src[k], s)
				}
			}
		}
		zeroNaN := func(x float64) float64 {
			if math.IsNaN(x) {
				return 0
			}
			return x
		}
		tb := table("icbcbench", "main_results")
		for sys := range systems {
			for _, l := range []string{"en", "zh"} {
				k := sl{sys, l}
				obj := ratio(okN[k], objN[k])
				e := mean(expert[k])
				if scored[k] == 0 {
					e = math.NaN()
				} else if len(expert[k]) == 0 {
					e = 0
				}
				sub := 0.8*e + 0.1*zeroNaN(100*mean(cit[k])) + 0.1*zeroNaN(100*mean(src[k]))
				tb.check(t, "system", sys, l+"_objective", obj)
				tb.check(t, "system", sys, l+"_subjective", sub)
				tb.check(t, "system", sys, l+"_overall", (obj+sub)/2)
			}
		}
	})

	t.Run("csv matches jsonl", func(t *testing.T) {
		// the two files hold the same records: same count, same header as
		// the JSON keys
		for _, b := range []string{"icbcbench", "findeepresearch", "findeepforecast", "finresearchbench2"} {
			data, err := os.ReadFile(filepath.Join(out, "csv", b, "items.csv"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(data), "\r\n"), "\r\n")
			its := items(b)
			if len(lines)-1 != len(its) {
				t.Errorf("%s: %d CSV records, %d JSON lines", b, len(lines)-1, len(its))
			}
			var keys []string
			for _, f := range strings.Split(lines[0], ",") {
				keys = append(keys, f)
				if _, ok := its[0][f]; !ok {
					t.Errorf("%s: CSV column %s not in the JSON records", b, f)
				}
			}
			if len(keys)+1 != len(its[0]) { // + "synthetic"
				t.Errorf("%s: %d CSV columns, %d JSON keys", b, len(keys), len(its[0]))
			}
		}
	})
}

func b2int(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSyntheticLabelled checks every CSV, JSON and LaTeX output of the
// synthetic demo: each JSON table says "synthetic": true, each item
// record too, each .tex file has the comment line, and every folder of
// CSV or LaTeX files has a README saying the data is synthetic.
func TestSyntheticLabelled(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := run(t, "reproduce", "--no-sweep", "--quiet", "--out", out); code != 0 {
		t.Fatalf("reproduce exit %d\n%s\n%s", code, stdout, stderr)
	}
	const banner = "SYNTHETIC DATA:"
	counts := map[string]int{}
	for _, format := range []string{"csv", "json", "latex"} {
		root := filepath.Join(out, format)
		benches, err := os.ReadDir(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range benches {
			dir := filepath.Join(root, b.Name())
			files, _ := os.ReadDir(dir)
			if format != "json" {
				readme, err := os.ReadFile(filepath.Join(dir, "README"))
				if err != nil || !strings.Contains(string(readme), banner) {
					t.Errorf("%s/%s: no README saying the data is synthetic (%v)", format, b.Name(), err)
				}
			}
			for _, f := range files {
				p := filepath.Join(dir, f.Name())
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				switch filepath.Ext(f.Name()) {
				case ".json":
					var obj struct {
						Synthetic bool   `json:"synthetic"`
						Note      string `json:"synthetic_note"`
					}
					if err := json.Unmarshal(data, &obj); err != nil || !obj.Synthetic || !strings.HasPrefix(obj.Note, banner) {
						t.Errorf("%s: not labelled synthetic (%v)", p, err)
					}
				case ".jsonl":
					for _, it := range readItems(t, p) {
						if it["synthetic"] != true {
							t.Fatalf("%s: a record is not labelled synthetic: %v", p, it)
						}
					}
				case ".tex":
					lines := strings.SplitN(string(data), "\n", 3)
					if len(lines) < 2 || !strings.HasPrefix(lines[1], "% "+banner) {
						t.Errorf("%s: no synthetic comment line", p)
					}
				}
				counts[filepath.Ext(f.Name())]++
			}
		}
	}
	for _, ext := range []string{".csv", ".json", ".jsonl", ".tex"} {
		if counts[ext] == 0 {
			t.Errorf("no %s file checked", ext)
		}
	}
	t.Logf("checked %v", counts)
}
