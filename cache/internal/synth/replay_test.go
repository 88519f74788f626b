package synth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/internal/synth"
	"github.com/finrepro/finrepro/replay"
)

// TestCorpusReplays: every exchange of both synthetic corpora, of every
// provider, loads into a store as a new exchange and replays offline, so
// that the benchmark corpora exercise replay as it is; the same seed gives
// the same bytes.
func TestCorpusReplays(t *testing.T) {
	for _, tc := range []struct {
		name      string
		write     func(io.Writer, int, uint64) error
		providers int
	}{{"random", synth.Write, 3}, {"judge", synth.WriteJudge, 1}} {
		t.Run(tc.name, func(t *testing.T) { testCorpusReplays(t, tc.write, tc.providers) })
	}
}

func testCorpusReplays(t *testing.T, write func(io.Writer, int, uint64) error, nproviders int) {
	const n = 400
	var data, again bytes.Buffer
	if err := write(&data, n, 3); err != nil {
		t.Fatal(err)
	}
	if err := write(&again, n, 3); err != nil || !bytes.Equal(data.Bytes(), again.Bytes()) {
		t.Fatalf("the same seed gave other bytes (%v)", err)
	}
	s, err := cache.Open(t.TempDir(), cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st, err := s.Load(bytes.NewReader(data.Bytes()), cache.LoadOptions{Strict: true}); err != nil || st.Bad != 0 || st.Added != n {
		t.Fatalf("load: %+v, %v; want %d new exchanges", st, err, n)
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
	if len(providers) != nproviders {
		t.Fatalf("providers %v, want %d", providers, nproviders)
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
