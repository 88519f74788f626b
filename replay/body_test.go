package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// refBodyOf is the reference body builder: maps of any, for
// encoding/json. bodyOf must give the bytes refBody gives.
func refBodyOf(p results.Prompt, kind Kind) (map[string]any, string, error) {
	body := map[string]any{}
	setParams := func(dst map[string]any, rename map[string]string) error {
		for _, k := range slices.Sorted(maps.Keys(p.Params)) {
			name := k
			if r, ok := rename[k]; ok {
				name = r
			}
			if _, dup := dst[name]; dup {
				return fmt.Errorf("param %q clashes with a field the prompt sets", k)
			}
			dst[name] = p.Params[k]
		}
		return nil
	}
	switch kind {
	case KindChat, KindSim:
		var msgs []any
		if p.System != "" {
			msgs = append(msgs, map[string]any{"role": "system", "content": p.System})
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": p.User})
		body["model"] = p.Model
		body["messages"] = msgs
		return body, "chat/completions", setParams(body, nil)
	case KindResponses:
		body["model"] = p.Model
		if p.System != "" {
			body["instructions"] = p.System
		}
		body["input"] = p.User
		return body, "responses", setParams(body, map[string]string{"max_tokens": "max_output_tokens"})
	case KindAnthropic:
		body["model"] = p.Model
		if p.System != "" {
			body["system"] = p.System
		}
		body["messages"] = []any{map[string]any{"role": "user", "content": p.User}}
		if err := setParams(body, nil); err != nil {
			return nil, "", err
		}
		if _, ok := body["max_tokens"]; !ok {
			body["max_tokens"] = DefaultMaxTokens
		}
		return body, "messages", nil
	case KindGemini:
		if strings.ContainsAny(p.Model, "/:?#") {
			return nil, "", fmt.Errorf("gemini model name %q has a path character", p.Model)
		}
		if p.System != "" {
			body["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": p.System}}}
		}
		body["contents"] = []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": p.User}}}}
		if len(p.Params) > 0 {
			gc := map[string]any{}
			if err := setParams(gc, map[string]string{
				"max_tokens": "maxOutputTokens", "top_p": "topP", "top_k": "topK", "stop": "stopSequences",
			}); err != nil {
				return nil, "", err
			}
			body["generationConfig"] = gc
		}
		return body, "models/" + p.Model + ":generateContent", nil
	}
	return nil, "", fmt.Errorf("unknown provider kind %q", kind)
}

// refBody encodes refBodyOf's body without HTML escaping.
func refBody(p results.Prompt, kind Kind) ([]byte, string, error) {
	body, endpoint, err := refBodyOf(p, kind)
	if err != nil {
		return nil, "", err
	}
	b, err := refJSON(body)
	return b, endpoint, err
}

// refJSON is v encoded by encoding/json without HTML escaping.
func refJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

var allKinds = []Kind{KindChat, KindSim, KindResponses, KindAnthropic, KindGemini}

// checkSameBody compares bodyOf with the reference for every kind.
func checkSameBody(t *testing.T, p results.Prompt) {
	t.Helper()
	for _, k := range allKinds {
		want, wantEP, wantErr := refBody(p, k)
		got, gotEP, gotErr := bodyOf(p, k)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%s %+v: error %v, reference %v", k, p, gotErr, wantErr)
		}
		if wantErr != nil {
			continue
		}
		if !bytes.Equal(got, want) || gotEP != wantEP {
			t.Fatalf("%s %+v:\n got %s %s\nwant %s %s", k, p, gotEP, got, wantEP, want)
		}
	}
}

func TestBodyOfMatchesMarshal(t *testing.T) {
	for _, p := range []results.Prompt{
		{Model: "m", User: "hello"},
		{Model: "m", System: "be <terse> & exact", User: "line\nbreak\t\"quoted\" \\ \u2028 \u2029 \x01 \x7f é 漢字 \xff\xfe"},
		{Model: "gpt-5", User: "u", Params: map[string]any{"temperature": 0.0, "max_tokens": 100, "seed": 7, "stop": []any{"a", "<b>"}}},
		{Model: "m", User: "u", Params: map[string]any{"response_format": map[string]any{"type": "json_object", "z": 1, "a": []any{1.5, true, nil}}}},
		{Model: "m", User: "u", Params: map[string]any{"model": "clash"}},                      // clashes everywhere but gemini
		{Model: "m", User: "u", Params: map[string]any{"max_tokens": 1, "maxOutputTokens": 2}}, // clashes in gemini
		{Model: "m", User: "u", Params: map[string]any{"top_k": 3, "top_p": 0.9, "messages": 1}},
		{Model: "a/b", User: "u"}, // not a gemini model name
		{Model: "m", User: "u", Params: map[string]any{"bad": func() {}}},
	} {
		checkSameBody(t, p)
	}
}

func FuzzBodyOf(f *testing.F) {
	f.Add("m", "", "hello", "temperature", 0.5)
	f.Add("claude", "sys <x>", "\u2028\xff\"\\\n", "max_tokens", 10.0)
	f.Add("gem", "s", "u", "stop", 1e300)
	f.Fuzz(func(t *testing.T, model, system, user, param string, v float64) {
		p := results.Prompt{Model: model, System: system, User: user}
		if param != "" {
			p.Params = map[string]any{param: v, param + "_s": user}
		}
		checkSameBody(t, p)
	})
}

// BenchmarkAppendJSONString measures writing a prompt as a JSON string on
// the wire (appendJSONString, an encoding/json Encoder per string) beside
// its canonical form for the key (reqkey.AppendCanonicalString), on a
// judge prompt of English and Chinese text with quotes and newlines.
func BenchmarkAppendJSONString(b *testing.B) {
	s := strings.Repeat("Grade the \"prediction\" against the criterion.\n净息差下降12个基点；存款重定价。 ", 60)
	for _, c := range []struct {
		name string
		f    func([]byte, string) []byte
	}{{"wire", appendJSONString}, {"keyed", reqkey.AppendCanonicalString}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			var buf []byte
			for b.Loop() {
				buf = c.f(buf[:0], s)
			}
		})
	}
}

// TestCompactValid: whitespace between tokens goes, whitespace and
// escaped quotes and backslashes inside strings stay (the outputs written
// by hand).
func TestCompactValid(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, `{}`},
		{" {\n\t\"a\" : [ 1 , 2 ]\r\n} \n", `{"a":[1,2]}`},
		{`{"a b": "c \" d", "e": "\\", "f": "\\\" g"}`, `{"a b":"c \" d","e":"\\","f":"\\\" g"}`},
		{`["\u00e9 ", true, null]`, `["\u00e9 ",true,null]`},
		{`"x\\\\" , `, `"x\\\\",`},
	} {
		if got := compactValid([]byte("<"), []byte(c.in)); string(got) != "<"+c.want {
			t.Errorf("compactValid(%q) = %q, want %q", c.in, got[1:], c.want)
		}
	}
}

// FuzzCompactValid: on valid JSON, compactValid gives the bytes
// jsontext.Value.Compact gives; on anything else it does not panic.
func FuzzCompactValid(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2, {"b": "c \" \\ d"}]}`, " \"\\\\\" ", `[1 , "x\"`, `"\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := compactValid(nil, b)
		want := jsontext.Value(bytes.Clone(b))
		if want.Compact() == nil && !bytes.Equal(got, want) {
			t.Fatalf("compactValid(%q) = %q, want %q", b, got, want)
		}
	})
}
