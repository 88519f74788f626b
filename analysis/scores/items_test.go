package scores

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestParseItemsResearch: two companies, two systems, items of weights 1
// and 2. A on c1 scores (1, 0.5): 100·(1·1 + 2·0.5)/3 = 66.667; on c2
// (0, 1): 100·2/3 = 66.667. B on c1 (1, 1): 100; B has no report of c2.
func TestParseItemsResearch(t *testing.T) {
	in := `{"system":"A","company":"c1","market":"US","item":"i1","weight":1,"score":1}
{"system":"A","company":"c1","market":"US","item":"i2","weight":2,"score":0.5}
{"system":"B","company":"c1","market":"US","item":"i1","weight":1,"score":1}
{"system":"B","company":"c1","market":"US","item":"i2","weight":2,"score":1}
{"system":"A","company":"c2","market":"HK","item":"i1","weight":1,"score":0,"synthetic":true}
{"system":"A","company":"c2","market":"HK","item":"i2","weight":2,"score":1,"synthetic":true}
`
	m, err := ParseItems("items.jsonl", strings.NewReader(in), "findeepresearch", Options{GroupCols: []string{"market"}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Tasks, ",") != "c1,c2" || strings.Join(m.Systems, ",") != "A,B" || strings.Join(m.Groups[0].Values, ",") != "US,HK" {
		t.Fatalf("tasks %v, systems %v, groups %v", m.Tasks, m.Systems, m.Groups)
	}
	want := [][]float64{{200.0 / 3, 200.0 / 3}, {100, math.NaN()}}
	for s := range want {
		for k, w := range want[s] {
			if got := m.Scores[s][k]; math.IsNaN(w) != math.IsNaN(got) || !math.IsNaN(w) && math.Abs(got-w) > 1e-12 {
				t.Errorf("%s on %s: %g, want %g", m.Systems[s], m.Tasks[k], got, w)
			}
		}
	}
}

// TestParseItemsForecast: correct true scores 100, false 0, null
// (not scored) is missing.
func TestParseItemsForecast(t *testing.T) {
	in := `{"system":"A","task":"t1","week":1,"correct":true}
{"system":"B","task":"t1","week":1,"correct":false}
{"system":"A","task":"t2","week":2,"correct":null}
{"system":"B","task":"t2","week":2,"correct":true}
`
	m, err := ParseItems("items.jsonl", strings.NewReader(in), "findeepforecast", Options{ClusterCol: "week"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Cluster, ",") != "1,2" {
		t.Errorf("clusters %v, want the weeks 1,2", m.Cluster)
	}
	if a, b := m.Scores[0], m.Scores[1]; a[0] != 100 || !math.IsNaN(a[1]) || b[0] != 0 || b[1] != 100 {
		t.Errorf("scores %v", m.Scores)
	}
}

func TestParseItemsErrors(t *testing.T) {
	for _, c := range []struct{ bench, in, want string }{
		{"icbcbench", `{}`, "not supported"},
		{"findeepforecast", `{"system":"A","task":"t1","correct":true}` + "\n" + `{"system":"A","task":"t1","correct":false}`, `x.jsonl:2: field "system": second record of system "A" on task "t1" (line 1)`},
		{"findeepforecast", `{"system":"A","task":"t1","correct":"yes"}`, `x.jsonl:1: field "correct": want true, false or null`},
		{"findeepforecast", `{"system":"A","task":"t1"}`, `field "correct": missing`},
		{"findeepresearch", `{"system":"A","company":"c","weight":1,"score":null}`, `field "score": want a number, not null`},
		{"findeepresearch", `{"system":"A","company":"c","weight":"1","score":1}`, `field "weight"`},
		{"findeepresearch", `{"system":"A","company":"c","weight":1,"score":1.5}`, `score in [0, 1], got 1 and 1.5`},
		{"findeepresearch", `{"system":"A","company":"c","weight":-1,"score":1}`, `weight of 0 or more`},
		{"findeepresearch", `{"system":"A","company":"c","weight":1e308,"score":1}` + "\n" + `{"system":"A","company":"c","weight":1e308,"score":1}`, `overflow`},
		{"findeepresearch", `{"system":"A","weight":1,"score":1}`, `field "company": missing`},
		{"findeepresearch", `{"system":"","company":"c","weight":1,"score":1}`, `field "system": want a non-empty string`},
		{"findeepresearch", `[1]`, "x.jsonl:1: not a JSON object"},
		{"findeepresearch", "", "no records"},
	} {
		_, err := ParseItems("x.jsonl", strings.NewReader(c.in), c.bench, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: error %v, want %q", c.bench, c.in, err, c.want)
		}
	}
}

// FuzzParseItems: any input is a matrix or an error naming the file,
// never a panic; an accepted forecast matrix holds only 0, 100 or
// missing, and a research matrix only scores in [0, 100] (100 times a
// weighted mean of scores in [0, 1]) or missing.
func FuzzParseItems(f *testing.F) {
	f.Add(true, `{"system":"A","company":"c1","weight":1,"score":1}`+"\n"+`{"system":"A","company":"c1","weight":2,"score":0.25}`)
	f.Add(false, `{"system":"A","task":"t1","correct":true}`+"\n"+`{"system":"B","task":"t1","correct":null}`)
	f.Fuzz(func(t *testing.T, research bool, in string) {
		bench := "findeepforecast"
		if research {
			bench = "findeepresearch"
		}
		m, err := ParseItems("x.jsonl", strings.NewReader(in), bench, Options{})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		for s, row := range m.Scores {
			if len(row) != len(m.Tasks) {
				t.Fatalf("system %d: %d scores for %d tasks", s, len(row), len(m.Tasks))
			}
			for _, v := range row {
				switch {
				case math.IsNaN(v):
				case !research && v != 0 && v != 100:
					t.Fatalf("forecast score %g", v)
				case research && (v < 0 || v > 100+1e-9):
					t.Fatalf("research score %g outside [0, 100]", v)
				}
			}
		}
	})
}
