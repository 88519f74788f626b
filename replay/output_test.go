package replay

import (
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"
)

// TestParseOutput reads known bodies of each provider's schema; the
// expected outputs are read off the bodies by hand.
func TestParseOutput(t *testing.T) {
	tests := []struct {
		name string
		kind Kind
		body string
		want output // ignored when bad
		bad  bool   // errMalformed
	}{
		{"chat", KindChat, `{"model":"m","choices":[{"message":{"content":"hi <b>\u00e9\n"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`,
			output{Text: "hi <b>é\n", Model: "m", InputTokens: 3, OutputTokens: 4}, false},
		{"chat names in any case, the last repeat wins", KindChat, `{"MODEL":"a","model":"b","Choices":[{"message":{"content":"x"}}]}`,
			output{Text: "x", Model: "b"}, false},
		{"chat refusal", KindChat, `{"choices":[{"message":{"content":null,"refusal":"no"}}],"error":null}`,
			output{Refusal: true, RefusalReason: "no"}, false},
		{"chat content filter", KindSim, `{"choices":[{"message":{"content":"x"},"finish_reason":"content_filter"}]}`,
			output{Text: "x", Refusal: true, RefusalReason: "finish_reason content_filter"}, false},
		{"chat error", KindChat, `{"error":{"message":"rate limited"}}`, output{APIError: `{"message":"rate limited"}`}, false},
		{"chat no choices", KindChat, `{"choices":[]}`, output{}, true},
		{"chat fractional tokens", KindChat, `{"choices":[{"message":{"content":"x"}}],"usage":{"prompt_tokens":1.5}}`, output{}, true},
		{"chat trailing data", KindChat, `{"choices":[]} x`, output{}, true},
		{"responses", KindResponses, `{"model":"r","status":"completed","output":[{"type":"reasoning","content":[{"type":"output_text","text":"hidden"}]},{"type":"message","content":[{"type":"output_text","text":"t1"},{"type":"output_text","text":"t2"}]}],"usage":{"input_tokens":1,"output_tokens":2}}`,
			output{Text: "t1t2", Model: "r", InputTokens: 1, OutputTokens: 2}, false},
		{"responses refusal", KindResponses, `{"output":[{"type":"message","content":[{"type":"refusal","refusal":"cannot"}]}]}`,
			output{Refusal: true, RefusalReason: "cannot"}, false},
		{"responses failed", KindResponses, `{"status":"failed","output":[]}`, output{}, true},
		{"responses no output", KindResponses, `{"status":"completed"}`, output{}, true},
		{"anthropic", KindAnthropic, `{"type":"message","model":"c","content":[{"type":"text","text":"a"},{"type":"tool_use","text":"z"},{"type":"text","text":"b"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":6}}`,
			output{Text: "ab", Model: "c", InputTokens: 5, OutputTokens: 6, Calls: true}, false},
		{"anthropic refusal", KindAnthropic, `{"type":"message","content":[],"stop_reason":"refusal"}`,
			output{Refusal: true, RefusalReason: "stop_reason refusal"}, false},
		{"anthropic error type", KindAnthropic, ` {"type":"error","detail":"overloaded"} `, output{APIError: `{"type":"error","detail":"overloaded"}`}, false},
		{"anthropic other type", KindAnthropic, `{"type":"ping"}`, output{}, true},
		{"gemini", KindGemini, `{"modelVersion":"g","candidates":[{"content":{"parts":[{"text":"p","thought":true},{"text":"q"},{"text":"r"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":7,"candidatesTokenCount":8}}`,
			output{Text: "qr", Model: "g", InputTokens: 7, OutputTokens: 8}, false},
		{"gemini blocked", KindGemini, `{"promptFeedback":{"blockReason":"SAFETY"}}`, output{Refusal: true, RefusalReason: "prompt blocked: SAFETY"}, false},
		{"gemini safety stop", KindGemini, `{"candidates":[{"content":{"parts":[]},"finishReason":"SAFETY"}]}`,
			output{Refusal: true, RefusalReason: "finishReason SAFETY"}, false},
		{"gemini no candidates", KindGemini, `{"candidates":[]}`, output{}, true},
		{"not an object", KindGemini, `[1]`, output{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseOutput(tc.kind, []byte(tc.body))
			switch {
			case tc.bad:
				if !errors.Is(err, errMalformed) {
					t.Fatalf("parseOutput = %+v, %v; want errMalformed", got, err)
				}
			case err != nil || *got != tc.want:
				t.Fatalf("parseOutput = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// FuzzParseOutputRoundTrip checks that a body of each schema built from a text,
// a model and token counts gives them back, and that no body makes
// parseOutput fail other than by errMalformed.
func FuzzParseOutputRoundTrip(f *testing.F) {
	f.Add("hi <b>é\n", "m", 3, 4, `{"choices":[]} trailing`)
	f.Add("", "", 0, 0, "{\"model\":\"\xff\",\"choices\":[{\"message\":{\"content\":\"\\ud800x\"}}]}")
	f.Fuzz(func(t *testing.T, text, model string, in, out int, body string) {
		for _, k := range allKinds {
			if _, err := parseOutput(k, []byte(body)); err != nil && !errors.Is(err, errMalformed) {
				t.Fatalf("%s %q: %v", k, body, err)
			}
		}
		if !utf8.ValidString(text) || !utf8.ValidString(model) {
			return
		}
		bodies := map[Kind]any{
			KindChat: map[string]any{"model": model, "choices": []any{map[string]any{"message": map[string]any{"content": text}}},
				"usage": map[string]any{"prompt_tokens": in, "completion_tokens": out}},
			KindResponses: map[string]any{"model": model, "output": []any{map[string]any{"type": "message", "content": []any{map[string]any{"type": "output_text", "text": text}}}},
				"usage": map[string]any{"input_tokens": in, "output_tokens": out}},
			KindAnthropic: map[string]any{"type": "message", "model": model, "content": []any{map[string]any{"type": "text", "text": text}},
				"usage": map[string]any{"input_tokens": in, "output_tokens": out}},
			KindGemini: map[string]any{"modelVersion": model, "candidates": []any{map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": text}}}}},
				"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out}},
		}
		for k, v := range bodies {
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			want := output{Text: text, Model: model, InputTokens: in, OutputTokens: out}
			if got, err := parseOutput(k, b); err != nil || *got != want {
				t.Fatalf("%s %s: %+v, %v; want %+v", k, b, got, err, want)
			}
		}
	})
}
