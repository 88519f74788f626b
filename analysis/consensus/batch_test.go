package consensus

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// batchLog records the batches it is asked, with copies of their calls.
type batchLog struct {
	fixAnswerer
	sizes []int
	calls []results.Call
}

func (b *batchLog) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	b.sizes = append(b.sizes, len(calls))
	b.calls = append(b.calls, calls...)
	return b.fixAnswerer.Answer(ctx, calls)
}

// TestAnswerCallsInBatches checks that answerCalls asks callBatch calls
// at a time, in order, each with the user message of its query and
// product, the message a run writing them all at once gives every call
// (the fixture's first and last calls share one), and leaves none of the
// messages in the calls once answered.
func TestAnswerCallsInBatches(t *testing.T) {
	in, err := Load(fixFS())
	if err != nil {
		t.Fatal(err)
	}
	calls, slots, user := buildCalls(in, []int{0, 1, 2})
	// the fixture's 32 calls, 40 times over: more than two batches
	var many []results.Call
	var manySlots []slot
	for range 40 {
		many, manySlots = append(many, calls...), append(manySlots, slots...)
	}
	log := &batchLog{}
	var replies []results.Reply
	read := func(lo int, got []results.Reply) {
		if lo != len(replies) {
			t.Fatalf("replies of calls from %d read after %d", lo, len(replies))
		}
		replies = append(replies, got...)
	}
	n := len(many)
	if got := answerCalls(context.Background(), log, many, manySlots, user, read); got != n {
		t.Fatalf("%d calls answered, want %d", got, n)
	}
	if want := []int{callBatch, callBatch, n - 2*callBatch}; !slices.Equal(log.sizes, want) {
		t.Fatalf("batches of %v calls, want %v", log.sizes, want)
	}
	if len(replies) != n {
		t.Fatalf("%d replies for %d calls", len(replies), n)
	}
	for i, c := range log.calls {
		sl := manySlots[i]
		if want := user.write(sl.q, sl.p, map[int]string{}); c.Prompt.User != want || c.Label != many[i].Label {
			t.Fatalf("call %d (query %d, product %d): user message %.80q, want %.80q", i, sl.q, sl.p, c.Prompt.User, want)
		}
		if many[i].Prompt.User != "" {
			t.Fatalf("call %d keeps its user message once answered", i)
		}
	}
	if log.calls[0].Prompt.User != log.calls[31].Prompt.User {
		t.Error("the first call and its stability rerun have different messages")
	}
}

// labelJudge answers every call from its label alone: rubric id of the
// call's query gets "yes" when the SHA-256 of "task judge id" starts
// with an even byte, "no" otherwise, and the reply's key is the SHA-256
// of "task judge". It records the size of every Answer call.
type labelJudge struct {
	ids   map[string][]string // rubric ids by query id
	sizes []int
}

func labelWord(task, judge, id string) int8 {
	if sha256.Sum256([]byte(task + " " + judge + " " + id))[0]%2 == 0 {
		return yes
	}
	return no
}

func labelKey(task, judge string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(task+" "+judge)))
}

func (a *labelJudge) Answer(_ context.Context, calls []results.Call) []results.Reply {
	a.sizes = append(a.sizes, len(calls))
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		task, judge := c.Label.Task, c.Label.Name
		query, _, _ := strings.Cut(task, "/")
		var b strings.Builder
		for _, id := range a.ids[query] {
			fmt.Fprintf(&b, "%s: %s\n", id, map[int8]string{yes: "yes", no: "no"}[labelWord(task, judge, id)])
		}
		out[i] = results.Reply{Text: b.String(), Key: labelKey(task, judge)}
	}
	return out
}

// TestBatchEdges collects the fixture callBatch calls at a time for
// several batch sizes and checks that no Answer call gets more than a
// batch, and that every label and exchange the collection keeps, main
// runs and stability reruns, is the one its own call was answered with.
func TestBatchEdges(t *testing.T) {
	in, err := Load(fixFS())
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string][]string{}
	for q, rs := range in.Rubrics {
		for _, r := range rs {
			ids[in.Queries[q].ID] = append(ids[in.Queries[q].ID], r.ID)
		}
	}
	defer func(n int) { callBatch = n }(callBatch)
	for _, n := range []int{1, 3, 5, 31, 32, 512} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			callBatch = n
			ans := &labelJudge{ids: ids}
			c, err := collectFS(context.Background(), fixFS(), ans, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, s := range ans.sizes {
				if s > n {
					t.Errorf("an Answer call of %d calls, batch %d", s, n)
				}
				total += s
			}
			if total != 32 {
				t.Errorf("%d calls, want the fixture's 32", total)
			}
			np := len(in.Panel.Products)
			for j, ji := range c.judges {
				judge := in.Panel.Judges[ji].Name
				for q, rs := range in.Rubrics {
					for p, pr := range in.Panel.Products {
						task := in.Queries[q].ID + "/" + pr.Name
						if k := c.calls[j][q][p]; k == nil || k.Key != labelKey(task, judge) {
							t.Errorf("%s %s: exchange %+v", task, judge, k)
						}
						for r, rub := range rs {
							if got, want := c.ls.lab[j][q][r*np+p], labelWord(task, judge, rub.ID); got != want {
								t.Errorf("%s %s %s: label %d, want %d", task, judge, rub.ID, got, want)
							}
						}
						for run, labs := range c.reruns[slot{j, q, p, 0}] {
							if run == 0 {
								continue
							}
							rt := task + "/run" + fmt.Sprint(run+1)
							for r, rub := range rs {
								if want := labelWord(rt, judge, rub.ID); labs[r] != want {
									t.Errorf("%s %s %s: label %d, want %d", rt, judge, rub.ID, labs[r], want)
								}
							}
						}
					}
				}
			}
			if len(c.reruns) == 0 {
				t.Error("no stability reruns: the fixture has some")
			}
		})
	}
}
