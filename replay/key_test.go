package replay

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// checkPromptKey compares the key built from a prompt's values with the
// key of its request's JSON, for every kind.
func checkPromptKey(t *testing.T, p results.Prompt) {
	t.Helper()
	for _, k := range allKinds {
		got, gotEP, gotErr := promptKey(&p, k)
		want, wantEP, wantErr := requestKey(&p, k)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("%s %+v: error %v, through JSON %v", k, p, gotErr, wantErr)
		}
		if wantErr == nil && (got != want || gotEP != wantEP) {
			t.Fatalf("%s %+v: key %s %s, through JSON %s %s", k, p, got.Str(), gotEP, want.Str(), wantEP)
		}
	}
}

func TestPromptKey(t *testing.T) {
	for _, p := range []results.Prompt{
		{Provider: "openai", Model: "m", User: "hello"},
		{Provider: "x", Model: "m", System: "be <terse> & exact", User: "line\nbreak\t\"q\" \\ \u2028 \u2029 \x01 \x7f é 漢字 \xff\xfe", Sample: 3},
		{Provider: "x", Model: "m", User: "e\u0301 and A\u030a and \u1e0b\u0323: not NFC"},
		{Provider: "ünï", Model: "mödel", User: "u"},
		{Provider: "x", Model: "gpt-5", User: "u", Params: map[string]any{"temperature": 0.0, "max_tokens": 100, "seed": 7, "stop": []any{"a", "<b>"}}},
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"top_p": 1e21, "x": 1e-7, "y": -0.0, "z": 123456789.125}},
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"response_format": map[string]any{"typé": "e\u0301", "b": 1, "a": []any{1.5, true, nil}}}},
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"naïve": 1}}, // keyed through JSON
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"model": "clash"}},
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"max_tokens": 1, "maxOutputTokens": 2}},
		{Provider: "x", Model: "a/b", User: "u"},
		{Provider: "x", Model: "", User: "u"},
		{Provider: "x", Model: "m", User: "u", Sample: -1},
		{Provider: "", Model: "m", User: "u"},
		{Provider: "x", Model: "m", User: "u", Params: map[string]any{"bad": func() {}}},
	} {
		checkPromptKey(t, p)
	}
}

func FuzzPromptKey(f *testing.F) {
	f.Add("openai", "m", "", "hello", "temperature", 0.5, 0)
	f.Add("x", "claude", "sys <x>", "\u2028\xff\"\\\n e\u0301", "max_tokens", 10.0, 2)
	f.Add("x", "gem", "s", "u", "naïve", 1e300, 0)
	f.Fuzz(func(t *testing.T, provider, model, system, user, param string, v float64, sample int) {
		p := results.Prompt{Provider: provider, Model: model, System: system, User: user, Sample: sample}
		if param != "" {
			p.Params = map[string]any{param: v, param + "_s": user, "n": map[string]any{param: []any{v, system}}}
		}
		checkPromptKey(t, p)
	})
}

// countKeyOf counts the request objects keyed through their JSON until
// the test ends.
func countKeyOf(t *testing.T) *atomic.Int64 {
	var n atomic.Int64
	t.Cleanup(func() { keyOf = reqkey.Of })
	keyOf = func(raw []byte) (cache.Key, error) {
		n.Add(1)
		return reqkey.Of(raw)
	}
	return &n
}

// TestPromptKeyedOnce: a call is keyed from its prompt's values only,
// whether it is recorded, missed or replayed; its request's JSON is never
// keyed again (the store, which keys what it stores, checks the key).
func TestPromptKeyedOnce(t *testing.T) {
	store, _ := openStore(t)
	n := countKeyOf(t)
	var calls []results.Call
	for i := range 20 {
		calls = append(calls, call("sim", "judge", fmt.Sprintf("question %d", i)))
	}
	rec := New(store, Config{Mode: Record, Sim: NewSim(1, OracleFunc(func(p results.Prompt) (string, error) { return "ok " + p.User, nil }), nil)})
	for _, r := range rec.Answer(context.Background(), calls) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	off := New(store, Config{})
	for _, r := range off.Answer(context.Background(), append(calls, call("sim", "judge", "not stored"))) {
		var me *MissError
		if r.Err != nil && !errors.As(r.Err, &me) {
			t.Fatal(r.Err)
		}
	}
	if got := n.Load(); got != 0 {
		t.Errorf("%d requests keyed through their JSON, want 0", got)
	}
	if c := off.Counts(); c.Hits != 20 || c.Missed != 1 {
		t.Errorf("counts %+v, want 20 hits and 1 miss", c)
	}
}

// TestRequestModelRead: a request object's model is read from its body
// only when it is needed, which a request answered from the cache is not.
func TestRequestModelRead(t *testing.T) {
	store, _ := openStore(t)
	c := New(store, Config{})
	j, err := c.newJob(Request{Provider: "openai", Body: []byte(`{"model":"gpt-x","messages":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if j.model != "" {
		t.Errorf("model %q read before it was needed", j.model)
	}
	if got := j.requested(); got != "gpt-x" {
		t.Errorf("requested() = %q, want gpt-x", got)
	}
}

// TestStoredKeyChecked: an exchange the store keys otherwise than the
// call it answers fails that call instead of passing for recorded.
func TestStoredKeyChecked(t *testing.T) {
	store, _ := openStore(t)
	c := New(store, Config{Mode: Record})
	j, err := c.newJob(Request{Provider: "openai", Body: []byte(`{"model":"m","messages":[]}`)})
	if err != nil {
		t.Fatal(err)
	}
	j.key[0] ^= 1 // as if its prompt had been keyed wrong
	err = c.put(j, []byte(`{"choices":[{"message":{"content":"hi"}}]}`), cache.Meta{Provider: "openai", Model: "m", Source: results.SourceAPI})
	var ce *CallError
	if !errors.As(err, &ce) || ce.Cause != CauseRequest {
		t.Fatalf("put = %v, want a bad_request failure", err)
	}
	if fs := c.Failures(); len(fs) != 1 || fs[0].Key != j.key.String() {
		t.Errorf("failures %+v", fs)
	}
}
