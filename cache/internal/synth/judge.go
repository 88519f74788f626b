package synth

import (
	"fmt"
	"io"
)

// Judge traffic: what a benchmark's judges send, as repetitive as the real
// thing. Every report is graded against every item of a shared rubric by
// each of three judge models, so that each report's text recurs in
// judgeItems*len(judgeModels) requests and each rubric's instructions in
// all of them; only the item, the judge and the short verdict differ.

// judgeItems is the number of rubric items each report is graded on.
const judgeItems = 50

var judgeModels = []string{"synthetic-judge-1", "synthetic-judge-2", "synthetic-judge-3"}

// judgeRubric is the instructions shared by every judge request.
const judgeRubric = "You are a strict financial analyst grading a research report against one rubric item. " +
	"Read the whole report, decide whether it satisfies the item, and reply with JSON " +
	"{\"score\": 0 or 1, \"justification\": \"one or two sentences quoting the report\"}. " +
	"Score 1 only when the report states the fact explicitly with a number and its period; " +
	"an estimate, a range without a point value or a figure for another period scores 0. " +
	"Ignore style, length and formatting. Do not reward hedged statements."

// A JudgeGen draws synthetic judge exchanges from a seeded source.
type JudgeGen struct {
	g      *Gen
	items  []string
	report string
	zh     bool
	n      int
}

// NewJudge returns a judge-traffic generator for seed.
func NewJudge(seed uint64) *JudgeGen {
	g := New(seed)
	j := &JudgeGen{g: g}
	for i := range judgeItems {
		j.items = append(j.items, fmt.Sprintf("Item %d: the report gives the company's %s for the latest fiscal year and explains its change.", i+1, enMetrics[g.r.IntN(len(enMetrics))]))
	}
	return j
}

// Next returns the next exchange: a JSONL line without its newline.
func (j *JudgeGen) Next() []byte {
	per := judgeItems * len(judgeModels)
	if j.n%per == 0 {
		j.zh = j.g.r.IntN(2) == 0
		j.report = j.g.text(j.zh, 6*1024+j.g.r.IntN(18*1024))
	}
	item := j.items[j.n/len(judgeModels)%judgeItems]
	model := judgeModels[j.n%len(judgeModels)]
	report := j.n / per
	j.n++
	prompt := fmt.Sprintf("Report %d:\n%s\n\nRubric item:\n%s", report+1, j.report, item)
	score := j.g.r.IntN(2)
	answer := fmt.Sprintf(`{"score": %d, "justification": %q}`, score, j.g.text(j.zh, 80+j.g.r.IntN(240)))
	body := map[string]any{
		"model":       model,
		"temperature": 0,
		"max_tokens":  512,
		"messages": []map[string]string{
			{"role": "system", "content": judgeRubric},
			{"role": "user", "content": prompt},
		},
	}
	req := map[string]any{"provider": "openai", "endpoint": "chat/completions", "body": body}
	resp := map[string]any{
		"id":      fmt.Sprintf("synthetic-judge-%08d", j.n),
		"object":  "chat.completion",
		"model":   model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]string{"role": "assistant", "content": answer}}},
		"usage":   map[string]int{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(answer) / 4},
	}
	return mustJSON(Exchange{Request: mustJSON(req), Response: mustJSON(resp), Meta: map[string]any{
		"provider": "openai", "model": model, "reported_model": model + "-0001",
		"input_tokens": len(prompt) / 4, "output_tokens": len(answer) / 4,
		"cost_usd": float64(j.g.r.IntN(10000)) / 1e6, "latency_ms": 200 + j.g.r.IntN(5000),
		"recorded_at": fmt.Sprintf("2026-02-%02dT%02d:%02d:00Z", 1+j.g.r.IntN(28), j.g.r.IntN(24), j.g.r.IntN(60)),
		"attempts":    1, "source": "sim",
	}})
}

// WriteJudge writes n judge exchanges as JSONL to w.
func WriteJudge(w io.Writer, n int, seed uint64) error {
	j := NewJudge(seed)
	for range n {
		if _, err := w.Write(append(j.Next(), '\n')); err != nil {
			return err
		}
	}
	return nil
}
