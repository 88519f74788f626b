package replay

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/results"
)

// TestUnknownProvider checks Config.Unknown: a call naming a provider
// that is neither built in nor configured is keyed as the Unknown kind,
// so offline it is a miss (not a bad request); recorded through a base
// URL under that name, it then replays under the Unknown configuration
// alone, with the same key; and recording it without a base URL fails
// with cause bad_request instead of sending anything.
func TestUnknownProvider(t *testing.T) {
	ctx := context.Background()
	store, _ := openStore(t)
	calls := []results.Call{call("myagent", "m", "what is 2+2?")}
	unknown := &ProviderConfig{Kind: KindChat}

	off := New(store, Config{Unknown: unknown})
	if r := off.Answer(ctx, calls)[0]; !errors.As(r.Err, new(*MissError)) {
		t.Fatalf("offline: %v, want a miss", r.Err)
	}
	if m := off.Misses(); len(m) != 1 || m[0].Provider != "myagent" || len(off.Failures()) != 0 {
		t.Fatalf("offline: misses %+v, failures %+v", m, off.Failures())
	}

	noURL := New(store, Config{Mode: Record, Unknown: unknown, Sleep: (&sleeps{}).sleep})
	var ce *CallError
	if r := noURL.Answer(ctx, calls)[0]; !errors.As(r.Err, &ce) || ce.Cause != CauseRequest || !strings.Contains(ce.Msg, "no base URL") {
		t.Fatalf("record without a base URL: %v, want bad_request naming the base URL", r.Err)
	}

	f := newFake(t, KindChat, "")
	rec := New(store, Config{Mode: Record, Providers: map[string]ProviderConfig{"myagent": f.config()}, Unknown: unknown})
	got := rec.Answer(ctx, calls)[0]
	if got.Err != nil || f.count() != 1 {
		t.Fatalf("record: %v, %d requests", got.Err, f.count())
	}
	again := New(store, Config{Unknown: unknown}).Answer(ctx, calls)[0]
	if again != got {
		t.Errorf("replay under Unknown: %+v, want %+v", again, got)
	}
}
