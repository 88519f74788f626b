package forecast

import (
	"io"
	"math"
	"strconv"

	"github.com/finrepro/finrepro/results"
)

// A Tolerance is one row of the tolerance table: the relative error eps_k
// under which a recurrent forecast counts as correct.
type Tolerance struct {
	// Kind is "unit" (matched against a task's unit_type) or "category"
	// (matched against its category; a category row wins).
	Kind string
	// Key is the value tasks carry in unit_type or category.
	Key string
	// AppliesTo is the row's description, as the paper prints it.
	AppliesTo string
	Epsilon   float64
}

// Kinds of tolerance row.
const (
	ByUnit     = "unit"
	ByCategory = "category"
)

// DefaultTolerances is the paper's table: 5% for million-scale metrics, 1%
// for percentages and ratios, 0.1% for interest and FX rates, 1% for other
// macro indicators.
func DefaultTolerances() []Tolerance {
	return []Tolerance{
		{ByUnit, "million", "million-scale financial metrics", 0.05},
		{ByUnit, "percent_ratio", "percentage and ratio metrics", 0.01},
		{ByCategory, "interest_rate", "interest rates", 0.001},
		{ByCategory, "fx_rate", "foreign exchange rates", 0.001},
		{ByCategory, "other_macro", "other macro indicators", 0.01},
	}
}

// ReadTolerances reads a tolerance table from CSV with the header
// kind,key,applies_to,epsilon. Keys are unique per kind; epsilon is a
// finite positive number.
func ReadTolerances(r io.Reader, file string) ([]Tolerance, error) {
	ct, err := results.ReadCSV(r, file)
	if err != nil {
		return nil, err
	}
	want := []string{"kind", "key", "applies_to", "epsilon"}
	if len(ct.Header) != len(want) {
		return nil, results.Errorf(file, len(ct.Comments)+1, "", "header: want %v, got %v", want, ct.Header)
	}
	for i, h := range want {
		if ct.Header[i] != h {
			return nil, results.Errorf(file, len(ct.Comments)+1, h, "header: want %v, got %v", want, ct.Header)
		}
	}
	var out []Tolerance
	for i, rec := range ct.Rows {
		line := ct.Lines[i]
		tl := Tolerance{Kind: rec[0], Key: rec[1], AppliesTo: rec[2]}
		if tl.Kind != ByUnit && tl.Kind != ByCategory {
			return nil, results.Errorf(file, line, "kind", "want %q or %q, got %q", ByUnit, ByCategory, tl.Kind)
		}
		if tl.Key == "" {
			return nil, results.Errorf(file, line, "key", "empty")
		}
		eps, err := strconv.ParseFloat(rec[3], 64)
		if err != nil || !(eps > 0) || math.IsInf(eps, 0) {
			return nil, results.Errorf(file, line, "epsilon", "want a positive number, got %q", rec[3])
		}
		tl.Epsilon = eps
		for _, o := range out {
			if o.Kind == tl.Kind && o.Key == tl.Key {
				return nil, results.Errorf(file, line, "key", "%s %q repeated", tl.Kind, tl.Key)
			}
		}
		out = append(out, tl)
	}
	if len(out) == 0 {
		return nil, results.Errorf(file, 0, "", "no tolerance rows")
	}
	return out, nil
}

// lookupTolerance returns the index of t's tolerance row: its category
// row, else its unit-type row, else -1.
func lookupTolerance(tol []Tolerance, t *Task) int {
	for _, want := range []struct{ kind, key string }{{ByCategory, t.Category}, {ByUnit, t.UnitType}} {
		if want.key == "" {
			continue
		}
		for i, tl := range tol {
			if tl.Kind == want.kind && tl.Key == want.key {
				return i
			}
		}
	}
	return -1
}
