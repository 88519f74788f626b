package forecast

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// fixtureInputs loads the fixture's inputs afresh.
func fixtureInputs(t *testing.T) *Inputs {
	t.Helper()
	in, err := LoadInputs(os.DirFS(filepath.Join("testdata", "fixture", "inputs", Name)))
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// labelAnswerer answers each call with a reply naming the call's label:
// the final answer "<task>/<system>", one cited source
// https://example.com/<task>/<system> published in 2030 (after every
// deadline), the cache key of the label's hash (upper case for system B,
// a word that is not hex for system C on task t2) and the model
// "m-<system>". Every fifth call (by position in the whole list of calls,
// counted across Answer calls) has no reply. It fails the test when one
// Answer call gets more than max calls, and counts the calls.
type labelAnswerer struct {
	t       *testing.T
	max     int
	answers int // Answer calls
	n       int // calls answered so far
}

func labelKey(task, system string) string {
	h := sha256.Sum256([]byte(task + "\x00" + system))
	k := hex.EncodeToString(h[:])
	switch {
	case system == "B":
		k = strings.ToUpper(k)
	case system == "C" && task == "t2":
		k = "not-a-hex-key"
	case system == "C" && task == "t3":
		k += "00" // hex, but longer than a key
	}
	return k
}

// labelMissing says whether the n-th call of the whole list gets no reply.
func labelMissing(n int) bool { return n%5 == 4 }

func (a *labelAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	a.answers++
	if len(calls) > a.max {
		a.t.Errorf("one Answer call got %d calls, more than the window of %d", len(calls), a.max)
	}
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		n := a.n
		a.n++
		if labelMissing(n) {
			out[i] = results.Reply{Err: errors.New("cache miss")}
			continue
		}
		l := c.Label.Task + "/" + c.Label.Name
		out[i] = results.Reply{
			Text:  "Final answer: " + l + "\nEvidence:\n- https://example.com/" + l + " (published 2030-01-01T00:00:00Z)\n",
			Model: "m-" + c.Label.Name, Source: results.SourceImport, Key: labelKey(c.Label.Task, c.Label.Name),
		}
	}
	return out
}

// TestCollectWindows collects the fixture (7 tasks, 3 systems: 21 calls)
// with windows of several sizes and checks that no Answer call gets more
// calls than its window (or than one task's, when the window is smaller),
// that the windows cover the tasks once, and that every prediction and
// drill-down carries the reply of its own task and system, whichever
// window the task fell in.
func TestCollectWindows(t *testing.T) {
	want := fixtureInputs(t) // the questions, before a collection drops them
	ns := len(want.Config.Systems)
	for _, tc := range []struct {
		window, answers int
	}{
		{1, 7}, // one task (3 calls) at a time
		{3, 7},
		{5, 7}, // a window of 5 calls holds one whole task
		{6, 4}, // 2+2+2+1 tasks
		{7, 4},
		{20, 2}, // 6+1 tasks
		{21, 1},
		{window, 1},
	} {
		t.Run(strconv.Itoa(tc.window), func(t *testing.T) {
			a := &labelAnswerer{t: t, max: max(tc.window, ns)}
			c, err := collect(context.Background(), fixtureInputs(t), a, &analysis.MemoryTexts{}, tc.window)
			if err != nil {
				t.Fatal(err)
			}
			if a.answers != tc.answers || a.n != len(want.Tasks)*ns {
				t.Errorf("%d Answer calls for %d calls, want %d for %d", a.answers, a.n, tc.answers, len(want.Tasks)*ns)
			}
			n, missing := 0, 0
			for ti, task := range want.Tasks {
				for s, sys := range want.Config.Systems {
					l := task.ID + "/" + sys.Name
					p, leaks := c.pred(ti, s), c.leaks[ti*ns+s]
					switch {
					case c.in.Tasks[ti].ID != task.ID:
						t.Errorf("%s: task %d is %s", l, ti, c.in.Tasks[ti].ID)
					case labelMissing(n) != p.Missing:
						t.Errorf("%s: missing %v, want %v", l, p.Missing, labelMissing(n))
					case p.Missing && (p.Leaked || leaks != nil):
						t.Errorf("%s: no reply, but leaks %v", l, leaks)
					case !p.Missing && (p.Answer != l || !p.Leaked || len(leaks) != 1 || leaks[0].URL != "https://example.com/"+l):
						t.Errorf("%s: answer %q, leaks %v", l, p.Answer, leaks)
					}
					missing += btoi(labelMissing(n))
					n++
				}
			}
			res := c.score(DefaultOptions())
			if res.Missing != missing {
				t.Errorf("%d missing, want %d", res.Missing, missing)
			}
			n = 0
			for d := range res.LazyDetails {
				ti, s := n/ns, n%ns
				task, sys := want.Tasks[ti], want.Config.Systems[s]
				l := task.ID + "/" + sys.Name
				if d.Task != task.ID || d.System != sys.Name || d.Question != task.Question {
					t.Errorf("detail %d: task %s system %s question %q, want %s", n, d.Task, d.System, d.Question, l)
				}
				switch {
				case labelMissing(n) && (d.Call != nil || d.Output != ""):
					t.Errorf("%s: no reply, but call %v output %q", l, d.Call, d.Output)
				case labelMissing(n):
				case d.Call == nil || d.Call.Key != labelKey(task.ID, sys.Name) || d.Call.Model != "m-"+sys.Name || d.Call.Source != results.SourceImport:
					t.Errorf("%s: call %+v", l, d.Call)
				case !strings.HasPrefix(d.Output, "Final answer: "+l+"\n"):
					t.Errorf("%s: output %q", l, d.Output)
				}
				n++
			}
			if n != len(want.Tasks)*ns {
				t.Errorf("%d details, want %d", n, len(want.Tasks)*ns)
			}
		})
	}
}

// TestWindowsSameResult: the fixture's result does not depend on the
// window, under the default settings and the ones that change most.
func TestWindowsSameResult(t *testing.T) {
	for _, s := range []analysis.Settings{nil, {KnobLatePolicy: LateExclude, KnobZeroRule: ZeroExclude}} {
		want := hashResult(t, runFixture(t, s))
		for _, w := range []int{1, 4, 6, 20} {
			c, err := collect(context.Background(), fixtureInputs(t), fixtureReplies, &analysis.MemoryTexts{}, w)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Benchmark{}.Score(context.Background(), c, s)
			if err != nil {
				t.Fatal(err)
			}
			if got := hashResult(t, res); got != want {
				t.Errorf("settings %v, window %d: result differs from one window's", s, w)
			}
		}
	}
}
