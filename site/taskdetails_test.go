package site

import (
	"bytes"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// listed returns in with the details of its results cut to what the
// pages other than task pages show, the full details kept by benchmark
// and task, shuffled (reversed), and a TaskDetails that returns them,
// counting the tasks loaded at once.
func listed(in Input, fail string) (Input, *loadCount) {
	full := map[[2]string][]analysis.Detail{}
	var res []*analysis.Result
	for _, r := range in.Results {
		c := *r
		c.Details = nil
		for _, d := range r.Details {
			k := [2]string{r.Benchmark, d.Task}
			full[k] = append([]analysis.Detail{d}, full[k]...) // reversed: any order will do
			c.Details = append(c.Details, analysis.Detail{Task: d.Task, System: d.System, Question: d.Question, Score: d.Score})
		}
		res = append(res, &c)
	}
	in.Results = res
	n := &loadCount{}
	in.TaskDetails = func(bench, task string) ([]analysis.Detail, error) {
		n.add(1)
		defer n.add(-1)
		if task == fail {
			return nil, errors.New("spill file damaged")
		}
		return full[[2]string{bench, task}], nil
	}
	return in, n
}

// A loadCount counts loads in flight and their peak.
type loadCount struct {
	mu        sync.Mutex
	now, peak int
	loads     int
}

func (c *loadCount) add(d int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += d
	c.peak = max(c.peak, c.now)
	if d > 0 {
		c.loads++
	}
}

// TestTaskDetailsLoaded checks that a site whose task pages load their
// details when written is the same, byte for byte, as one given every
// detail at once (the property the streaming must keep), that every task
// page is loaded once, and that a failed load fails the site naming the
// page.
func TestTaskDetailsLoaded(t *testing.T) {
	for name, in := range map[string]Input{"fixture": fixture(true), "demo": demoInput()} {
		t.Run(name, func(t *testing.T) {
			want, err := build(in)
			if err != nil {
				t.Fatal(err)
			}
			lin, n := listed(in, "")
			got, err := build(lin)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d files, want %d", len(got), len(want))
			}
			tasks := 0
			for i := range want {
				if got[i].name != want[i].name || !bytes.Equal(got[i].data, want[i].data) {
					t.Fatalf("%s differs from the site given every detail", want[i].name)
				}
				if strings.HasPrefix(want[i].name, "tasks/") {
					tasks++
				}
			}
			if tasks == 0 || n.loads != tasks {
				t.Errorf("%d loads for %d task pages", n.loads, tasks)
			}
			// only the pages being rendered hold details
			if limit := 2 * runtime.GOMAXPROCS(0); n.peak > limit {
				t.Errorf("%d tasks loaded at once, more than the %d pages rendered at once", n.peak, limit)
			}
		})
	}
	in := fixture(false)
	task := in.Results[0].Details[0].Task
	lin, _ := listed(in, task)
	_, err := build(lin)
	if err == nil || !strings.Contains(err.Error(), "spill file damaged") || !strings.Contains(err.Error(), "page tasks/") {
		t.Fatalf("err = %v, want the load error with its page", err)
	}
	// a loader that gives other systems than those listed is an error
	lin, _ = listed(in, "")
	load := lin.TaskDetails
	lin.TaskDetails = func(bench, task string) ([]analysis.Detail, error) {
		ds, err := load(bench, task)
		ds = slices.Clone(ds)
		ds[0].System += "-other"
		return ds, err
	}
	if _, err := build(lin); err == nil || !strings.Contains(err.Error(), "is listed") {
		t.Fatalf("err = %v, want the mismatch", err)
	}
}
