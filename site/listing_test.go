package site

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// withListings returns in with its results' details handed as
// listings, each made from the details added in reverse order, and a
// TaskDetails that returns a task's full details, also reversed: what
// reproduce hands the site. The results are copies without details.
func withListings(in Input) Input {
	full := map[[2]string][]analysis.Detail{}
	in.Listings = map[string]*Listing{}
	var res []*analysis.Result
	for _, r := range in.Results {
		var lr Lister
		ds := r.AllDetails()
		for i := len(ds) - 1; i >= 0; i-- {
			d := ds[i]
			lr.Add(d)
			k := [2]string{r.Benchmark, d.Task}
			full[k] = append(full[k], d)
		}
		in.Listings[r.Benchmark] = lr.Listing()
		c := *r
		c.Details, c.LazyDetails = nil, nil
		res = append(res, &c)
	}
	in.Results = res
	in.TaskDetails = func(bench, task string) ([]analysis.Detail, func(), error) {
		return full[[2]string{bench, task}], nil, nil
	}
	return in
}

// TestListingsSite checks that the site made from listings of the
// details and their task pages' loads is the same, byte for byte, as
// the site given every detail.
func TestListingsSite(t *testing.T) {
	for name, in := range map[string]Input{"fixture": fixture(true), "demo": demoInput()} {
		t.Run(name, func(t *testing.T) {
			want, err := build(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := build(withListings(in))
			if err != nil {
				t.Fatal(err)
			}
			sameFiles(t, got, want, "differs from the site given every detail")
		})
	}
	// a listing's task pages need a loader
	in := withListings(fixture(false))
	in.TaskDetails = nil
	if _, err := build(in); err == nil || !strings.Contains(err.Error(), "no TaskDetails") {
		t.Errorf("err = %v, want the missing loader", err)
	}
}

// TestLister checks the listing of details added in any order: by task
// in natural order ("q2" before "q10"), then by system, the details of
// one task and system in the order added; each task with the question
// of its detail with the first system (the first added of those),
// whitespace runs as one space and cut to 160 characters with an
// ellipsis.
func TestLister(t *testing.T) {
	long := strings.Repeat("é", 170)
	for _, tc := range []struct {
		name string
		add  []analysis.Detail
		want []analysis.Detail
	}{
		{name: "none"},
		{
			name: "sorted already",
			add:  []analysis.Detail{{Task: "q1", System: "a", Question: "What?", Score: "1"}, {Task: "q1", System: "b", Question: "What?", Score: "0"}},
			want: []analysis.Detail{{Task: "q1", System: "a", Question: "What?", Score: "1"}, {Task: "q1", System: "b", Question: "What?", Score: "0"}},
		},
		{
			name: "natural task order, systems sorted",
			add: []analysis.Detail{
				{Task: "q10", System: "b", Score: "x"}, {Task: "q2", System: "b", Score: "y"},
				{Task: "q10", System: "a", Score: "y"}, {Task: "q2", System: "a", Score: "x"},
			},
			want: []analysis.Detail{
				{Task: "q2", System: "a", Score: "x"}, {Task: "q2", System: "b", Score: "y"},
				{Task: "q10", System: "a", Score: "y"}, {Task: "q10", System: "b", Score: "x"},
			},
		},
		{
			name: "question of the first system, ties in the order added",
			add: []analysis.Detail{
				{Task: "t", System: "c", Question: "from c", Score: "3"},
				{Task: "t", System: "a", Question: "from the first a", Score: "1"},
				{Task: "t", System: "b", Question: "from b", Score: "2"},
				{Task: "t", System: "a", Question: "from the second a", Score: "4"},
			},
			want: []analysis.Detail{
				{Task: "t", System: "a", Question: "from the first a", Score: "1"},
				{Task: "t", System: "a", Question: "from the first a", Score: "4"},
				{Task: "t", System: "b", Question: "from the first a", Score: "2"},
				{Task: "t", System: "c", Question: "from the first a", Score: "3"},
			},
		},
		{
			name: "questions as listed",
			add: []analysis.Detail{
				{Task: "short", System: "s", Question: "  Net\tinterest\n\nmargin?  "},
				{Task: "long", System: "s", Question: long},
			},
			want: []analysis.Detail{
				{Task: "long", System: "s", Question: strings.Repeat("é", 160) + "…"},
				{Task: "short", System: "s", Question: "Net interest margin?"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lr Lister
			for _, d := range tc.add {
				lr.Add(d)
			}
			l := lr.Listing()
			if got := slices.Collect(l.All()); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("listed\n%+v\nwant\n%+v", got, tc.want)
			}
			// the Lister is empty again
			lr.Add(analysis.Detail{Task: "other", System: "z"})
			if got := slices.Collect(lr.Listing().All()); !reflect.DeepEqual(got, []analysis.Detail{{Task: "other", System: "z"}}) {
				t.Errorf("a listing after another lists %+v", got)
			}
		})
	}
}
