package replay

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

// A SimModel sets the faults of one simulated model. The answers
// themselves come from the Oracle.
type SimModel struct {
	// Refusal is the share of requests the model refuses (a refusal
	// response, which is never stored).
	Refusal float64
	// Malformed is the share of attempts whose response body is not valid
	// JSON, as from a flaky gateway; the client retries them.
	Malformed float64
	// LatencyMS is the mean simulated latency, recorded in the exchange's
	// metadata; the simulator never sleeps.
	LatencyMS int
	// ReportedModel, when set, is the model name the simulator reports
	// instead of the requested one (to exercise drift warnings).
	ReportedModel string
}

// A Sim is the built-in deterministic simulator behind provider "sim".
// Its output depends only on the seed, the model and the request (and the
// attempt number for transient faults), never on call order or
// concurrency.
type Sim struct {
	seed   uint64
	oracle Oracle
	models map[string]SimModel
}

// NewSim returns a simulator with the given seed, oracle and per-model
// faults; a model missing from models has no faults.
func NewSim(seed uint64, oracle Oracle, models map[string]SimModel) *Sim {
	return &Sim{seed: seed, oracle: oracle, models: models}
}

// A simResult is one simulated attempt.
type simResult struct {
	body      []byte
	latencyMS int64
}

// uniform returns a number in [0, 1) derived from the seed, a purpose
// label, the request's key and the attempt.
func (s *Sim) uniform(purpose string, key cache.Key, attempt int) float64 {
	h := sha256.New()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], s.seed)
	binary.BigEndian.PutUint64(b[8:], uint64(attempt))
	h.Write(b[:])
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(key[:])
	sum := h.Sum(nil)
	return float64(binary.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)
}

// respond simulates attempt number attempt (from 1) of request r, whose
// key is key. Everything random derives from the key, so a request
// encoded another way gets the same simulated response.
func (s *Sim) respond(r *Request, key cache.Key, attempt int) (*simResult, error) {
	p, err := promptOfChat(r)
	if err != nil {
		return nil, err
	}
	m := s.models[p.Model]
	res := &simResult{}
	if m.LatencyMS > 0 {
		// Latency between half and one and a half times the mean.
		res.latencyMS = int64(float64(m.LatencyMS) * (0.5 + s.uniform("latency", key, attempt)))
	}
	if s.uniform("malformed", key, attempt) < m.Malformed {
		res.body = []byte(`{"id": "sim-malformed", "choices": [{"message": {"content": "`)
		return res, nil
	}
	reported := p.Model
	if m.ReportedModel != "" {
		reported = m.ReportedModel
	}
	msg := map[string]any{"role": "assistant", "content": nil}
	text := ""
	if s.uniform("refusal", key, 0) < m.Refusal {
		msg["refusal"] = "I can't help with that request."
	} else {
		if s.oracle == nil {
			return nil, fmt.Errorf("sim: no oracle for model %s", p.Model)
		}
		text, err = s.oracle.Respond(p)
		if err != nil {
			return nil, fmt.Errorf("sim: oracle: %w", err)
		}
		msg["content"] = text
	}
	in := estimateTokens(p.System) + estimateTokens(p.User)
	resp := map[string]any{
		"id":                 fmt.Sprintf("sim-%x", sha256.Sum256(key[:]))[:20],
		"object":             "chat.completion",
		"created":            0,
		"model":              reported,
		"system_fingerprint": "finrepro-sim",
		// Anyone reading the raw exchange sees that it is synthetic.
		"finrepro_synthetic": "output of the finrepro simulator, not of a real model",
		"choices":            []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage": map[string]any{
			"prompt_tokens": in, "completion_tokens": estimateTokens(text),
			"total_tokens": in + estimateTokens(text),
		},
	}
	res.body, err = json.Marshal(resp)
	return res, err
}

// promptOfChat turns a Chat Completions request back into the prompt the
// Oracle sees: model, system and user messages, other fields as params.
func promptOfChat(r *Request) (results.Prompt, error) {
	var body map[string]json.RawMessage
	p := results.Prompt{Provider: r.Provider, Sample: r.Sample}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		return p, fmt.Errorf("sim: body: %w", err)
	}
	if err := json.Unmarshal(body["model"], &p.Model); err != nil || p.Model == "" {
		return p, fmt.Errorf("sim: body: missing model")
	}
	var msgs []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(body["messages"], &msgs); err != nil {
		return p, fmt.Errorf("sim: body: messages: %w", err)
	}
	for _, m := range msgs {
		switch m.Role {
		case "system", "developer":
			p.System += m.Content
		case "user":
			if p.User != "" {
				p.User += "\n\n"
			}
			p.User += m.Content
		default:
			return p, fmt.Errorf("sim: body: messages: role %q not simulated", m.Role)
		}
	}
	for k, v := range body {
		if k == "model" || k == "messages" {
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return p, fmt.Errorf("sim: body: %s: %w", k, err)
		}
		if p.Params == nil {
			p.Params = map[string]any{}
		}
		p.Params[k] = x
	}
	return p, nil
}
