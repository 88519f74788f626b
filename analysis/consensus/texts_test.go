package consensus

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/finrepro/finrepro/analysis/texttest"
	"github.com/finrepro/finrepro/results"
)

// userLog answers as fixAnswerer and keeps every user message, in call
// order.
type userLog struct {
	fixAnswerer
	users []string
}

func (u *userLog) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	for _, c := range calls {
		u.users = append(u.users, c.Prompt.User)
	}
	return u.fixAnswerer.Answer(ctx, calls)
}

// reorderLines returns the lines of b in the order of perm (line
// indices), each ending in a newline.
func reorderLines(b []byte, perm []int) []byte {
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	var out strings.Builder
	for _, i := range perm {
		out.WriteString(lines[i] + "\n")
	}
	return []byte(out.String())
}

// TestTextsKeptOutOfMemory checks that a collection whose texts go to a
// store holds none of the rubrics' and reports' texts, and that the
// judges' messages, the tables and the details are those of a collection
// that holds them, whatever the order of rubrics.jsonl: grouped by query
// and sorted (one run per query, kept as it is), grouped but not sorted,
// and interleaved (a run per line).
func TestTextsKeptOutOfMemory(t *testing.T) {
	ctx := context.Background()
	var want userLog
	c0, err := collectFS(ctx, fixFS(), &want, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res0, err := c0.score(nil)
	if err != nil {
		t.Fatal(err)
	}
	// the fixture's rubric lines: a1..a4 of q1, then b1..b3 of q2
	for _, tc := range []struct {
		name string
		perm []int
	}{
		{"grouped and sorted", []int{0, 1, 2, 3, 4, 5, 6}},
		{"grouped, not sorted", []int{3, 1, 0, 2, 6, 4, 5}},
		{"interleaved", []int{4, 0, 5, 1, 6, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fixFS()
			fsys[RubricsFile] = &fstest.MapFile{Data: reorderLines(fsys[RubricsFile].Data, tc.perm)}
			var got userLog
			store := &texttest.Store{}
			c, err := collectFS(ctx, fsys, &got, nil, store)
			if err != nil {
				t.Fatal(err)
			}
			for q, rs := range c.in.Rubrics {
				for _, r := range rs {
					if r.Text != "" {
						t.Errorf("query %d: rubric %s keeps its text %q", q, r.ID, r.Text)
					}
				}
				for p, text := range c.in.Reports[q] {
					if text != "" {
						t.Errorf("query %d, product %d: report kept: %q", q, p, text)
					}
				}
			}
			if !slices.Equal(got.users, want.users) {
				t.Errorf("user messages differ from those of the inputs in memory:\n got %q\nwant %q", got.users, want.users)
			}
			res, err := c.score(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Tables, res0.Tables) {
				t.Error("tables differ from those of the inputs in memory")
			}
			d, d0 := res.AllDetails(), res0.AllDetails()
			if len(d) == 0 || !reflect.DeepEqual(d, d0) {
				t.Errorf("details differ from those of the inputs in memory:\n got %+v\nwant %+v", d, d0)
			}
		})
	}
}

// TestTextsLostByStore checks that a store that loses every record makes
// empty texts, not a failed or crashed collection: the run that owns the
// store reports its failure (analysis.TextStore).
func TestTextsLostByStore(t *testing.T) {
	var got userLog
	c, err := collectFS(context.Background(), fixFS(), &got, nil, &texttest.Store{Broken: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.score(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range got.users {
		if strings.Contains(u, "report of") || strings.Contains(u, "rubric a") {
			t.Fatalf("a text the store lost is in a message: %q", u)
		}
	}
	for _, d := range res.AllDetails() {
		if d.Output != "" {
			t.Fatalf("detail %s/%s: output %q from a lost record", d.Task, d.System, d.Output)
		}
	}
}
