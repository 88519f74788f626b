package demo

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
)

// TestICBCBenchToolkitRequests compares finrepro's objective judge
// requests with those of ICBCBench's evaluation toolkit, byte for byte in
// canonical form: testdata/icbc_toolkit/requests.jsonl holds the bodies
// the toolkit's judge.py builds (judge_request.py beside it reproduces its
// code and made the file), for an English and a Chinese question and the
// three with a list of answers. A toolkit run recorded through finrepro
// proxy therefore replays in finrepro reproduce with no miss. The joined
// setting keeps the earlier shape, which differs.
func TestICBCBenchToolkitRequests(t *testing.T) {
	var prompts icbc.Prompts
	var questions []icbc.Objective
	for file, v := range map[string]any{"assets/icbcbench/objective_prompts.json": &prompts, "assets/icbcbench/objective_questions_public_80.json": &questions} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	byID := map[string]*icbc.Objective{}
	for i := range questions {
		byID[questions[i].ID] = &questions[i]
	}
	f, err := os.Open("testdata/icbc_toolkit/requests.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	judge := icbc.Model{Name: "judge", Provider: "openai", Model: "gpt-4.1"}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var line struct {
			ID       string          `json:"id"`
			Response string          `json:"response"`
			Body     json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		o := byID[line.ID]
		if o == nil {
			t.Fatalf("no question %s", line.ID)
		}
		want, err := reqkey.Canonical(mustEncode(t, &replay.Request{Provider: "openai", Endpoint: "chat/completions", Body: line.Body}))
		if err != nil {
			t.Fatal(err)
		}
		for _, setting := range []string{"", icbc.JudgeToolkit, icbc.JudgeJoined} {
			cfg := &icbc.Config{ObjectiveJudge: judge, JudgeRequest: setting}
			if setting == icbc.JudgeJoined {
				cfg.ObjectiveJudge.Params = map[string]any{"temperature": 0}
			}
			c := icbc.JudgeCall(cfg, o, &prompts, line.Response, line.ID)
			raw, err := replay.RequestOf(c.Prompt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := reqkey.Canonical(raw)
			if err != nil {
				t.Fatal(err)
			}
			if same := bytes.Equal(got, want); same != (setting != icbc.JudgeJoined) {
				t.Errorf("question %s, judge_request %q: equal to the toolkit's request: %v\n got %s\nwant %s", line.ID, setting, same, got, want)
			}
		}
		n++
	}
	if n != 5 {
		t.Fatalf("%d requests, want 5", n)
	}
}

func mustEncode(t *testing.T, r *replay.Request) []byte {
	t.Helper()
	b, err := r.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
