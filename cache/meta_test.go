package cache

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeMeta holds decodeMeta to encoding/json's reading of a meta.
func FuzzDecodeMeta(f *testing.F) {
	for _, s := range []string{
		`{"provider":"openai","model":"m","reported_model":"m-2","input_tokens":3,"output_tokens":4,"cost_usd":0.5,"latency_ms":12,"recorded_at":"2026-01-02T03:04:05Z","attempts":2,"source":"api"}`,
		`{"PROVIDER":"x","source":"sim","source":"api"}`,
		`{"cost_usd":1e-9,"input_tokens":1.5}`,
		`{"reportedmodel":"x","model":"\xff"}`,
		`{"model":null,"attempts":"2"}`,
		`[]`, `{`, `{} x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want, got Meta
		wantErr := json.Unmarshal([]byte(s), &want)
		gotErr := decodeMeta([]byte(s), &got)
		if (wantErr != nil) != (gotErr != nil) {
			t.Fatalf("%q: error %v, encoding/json %v", s, gotErr, wantErr)
		}
		if wantErr == nil && got != want {
			t.Fatalf("%q:\n got %+v\nwant %+v", s, got, want)
		}
	})
}
