package consensus

import (
	"context"
	"slices"
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
