package replay

import (
	"testing"

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
