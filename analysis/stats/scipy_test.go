package stats

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// TestCorrelationsScipy compares Spearman and KendallTauB with scipy's
// spearmanr and kendalltau on inputs with ties, n = 2, constant input and
// NaN (testdata/ties_ref.json, made by testdata/ties_ref.py; a null
// statistic is scipy's nan, which must be undefined here; a null x value
// is a NaN input).
func TestCorrelationsScipy(t *testing.T) {
	b, err := os.ReadFile("testdata/ties_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Name     string
		X        []*float64
		Y        []float64
		Rho, Tau *float64
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 9 {
		t.Fatalf("%d cases, want the 9 of ties_ref.py", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			x := make([]float64, len(tc.X))
			for i, v := range tc.X {
				x[i] = math.NaN()
				if v != nil {
					x[i] = *v
				}
			}
			for _, f := range []struct {
				name string
				fn   func(x, y []float64) (float64, error)
				want *float64
			}{{"Spearman", Spearman, tc.Rho}, {"KendallTauB", KendallTauB, tc.Tau}} {
				got, err := f.fn(x, tc.Y)
				switch {
				case f.want == nil && err == nil:
					t.Errorf("%s = %v, want undefined (scipy nan)", f.name, got)
				case f.want != nil && (err != nil || math.Abs(got-*f.want) > 1e-12):
					t.Errorf("%s = %v, %v; want %v", f.name, got, err, *f.want)
				}
			}
		})
	}
}
