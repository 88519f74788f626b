package synth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/internal/synth"
	"github.com/finrepro/finrepro/replay"
)

// TestCorpusReplays: every synthetic exchange, of every provider, loads
// into a store and replays offline with the response it was stored with,
// so that the benchmark corpus exercises replay as it is.
func TestCorpusReplays(t *testing.T) {
	var data bytes.Buffer
	if err := synth.Write(&data, 120, 3); err != nil {
		t.Fatal(err)
	}
	s, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st, err := s.Load(bytes.NewReader(data.Bytes()), cache.LoadOptions{Strict: true}); err != nil || st.Bad != 0 {
		t.Fatalf("load: %+v, %v", st, err)
	}
	var reqs bytes.Buffer
	var want [][]byte
	providers := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(data.Bytes()), []byte("\n")) {
		var x struct {
			Request  json.RawMessage `json:"request"`
			Response json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(line, &x); err != nil {
			t.Fatal(err)
		}
		var p struct{ Provider string }
		json.Unmarshal(x.Request, &p)
		providers[p.Provider]++
		reqs.Write(x.Request)
		reqs.WriteByte('\n')
		want = append(want, x.Response)
	}
	if len(providers) != 3 {
		t.Fatalf("providers %v, want openai, anthropic and sim", providers)
	}
	parsed, err := replay.ParseRequests(&reqs, "requests.jsonl", "")
	if err != nil {
		t.Fatal(err)
	}
	c := replay.New(s, replay.Config{Mode: replay.Offline})
	replies := c.AnswerRequests(context.Background(), parsed)
	for i, r := range replies {
		if r.Err != nil {
			t.Fatalf("request %d: %v", i+1, r.Err)
		}
	}
	if len(replies) != len(want) {
		t.Fatalf("%d replies for %d requests", len(replies), len(want))
	}
}
