package replay

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A fake imitates one provider's HTTP API: its paths, authentication,
// response shapes and error bodies. Faults are scripted per attempt.
type fake struct {
	kind Kind
	key  string // the API key the fake accepts
	srv  *httptest.Server

	mu          sync.Mutex
	script      []step // consumed one per request; then every request succeeds
	calls       int
	bodies      [][]byte
	inflight    int
	maxInflight int
	delay       time.Duration // every request takes this long
	// reported, when set, is the model name the fake reports.
	reported string
}

// A step is a scripted response.
type step struct {
	status   int
	body     string
	header   map[string]string
	truncate bool          // declare a longer body than sent
	reset    bool          // close the connection without a response
	sleep    time.Duration // before answering
	text     *string       // a successful response with this text
	refusal  bool          // a successful response that refuses
}

func newFake(t *testing.T, kind Kind, key string) *fake {
	f := &fake{kind: kind, key: key}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) config() ProviderConfig {
	env := ""
	if f.key != "" {
		env = "FAKE_KEY"
	}
	return ProviderConfig{Kind: f.kind, BaseURL: f.srv.URL + "/v1", KeyEnv: env, Backoff: time.Millisecond, Timeout: 5 * time.Second}
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls++
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	var st step
	scripted := len(f.script) > 0
	if scripted {
		st, f.script = f.script[0], f.script[1:]
	}
	delay := f.delay
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	var body map[string]any
	raw := make([]byte, 0, 1024)
	buf := make([]byte, 4096)
	for {
		n, err := r.Body.Read(buf)
		raw = append(raw, buf[:n]...)
		if err != nil {
			break
		}
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, raw)
	f.mu.Unlock()
	if r.Method != http.MethodPost {
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		f.apiError(w, 400, "invalid JSON body")
		return
	}
	model, ok := f.route(r, body)
	if !ok {
		f.apiError(w, 404, "unknown path "+r.URL.Path)
		return
	}
	if got := f.gotKey(r); f.key != "" && got != f.key {
		// OpenAI echoes part of a wrong key; this fake echoes all of it.
		f.apiError(w, 401, "Incorrect API key provided: "+got)
		return
	}
	if delay > 0 {
		sleepOrDone(r, delay)
	}
	if scripted {
		if st.sleep > 0 && !sleepOrDone(r, st.sleep) {
			return
		}
		for k, v := range st.header {
			w.Header().Set(k, v)
		}
		switch {
		case st.reset:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		case st.truncate:
			w.Header().Set("Content-Length", strconv.Itoa(len(st.body)+100))
			w.WriteHeader(200)
			w.Write([]byte(st.body))
			return
		case st.text != nil || st.refusal:
			f.ok(w, model, st.text, st.refusal)
			return
		case st.status != 0:
			if st.body == "" {
				f.apiError(w, st.status, "scripted failure")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(st.status)
			w.Write([]byte(st.body))
			return
		}
	}
	text := "answer to: " + userText(f.kind, body)
	f.ok(w, model, &text, false)
}

func sleepOrDone(r *http.Request, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-r.Context().Done():
		return false
	}
}

// route checks the path of the fake's kind and returns the model.
func (f *fake) route(r *http.Request, body map[string]any) (string, bool) {
	m, _ := body["model"].(string)
	switch f.kind {
	case KindChat:
		return m, r.URL.Path == "/v1/chat/completions"
	case KindResponses:
		return m, r.URL.Path == "/v1/responses"
	case KindAnthropic:
		return m, r.URL.Path == "/v1/messages" && r.Header.Get("anthropic-version") != ""
	case KindGemini:
		rest, ok := strings.CutPrefix(r.URL.Path, "/v1/models/")
		model, ok2 := strings.CutSuffix(rest, ":generateContent")
		return model, ok && ok2
	}
	return "", false
}

func (f *fake) gotKey(r *http.Request) string {
	switch f.kind {
	case KindAnthropic:
		return r.Header.Get("x-api-key")
	case KindGemini:
		return r.Header.Get("x-goog-api-key")
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// userText returns the user message of a request body of kind k.
func userText(k Kind, body map[string]any) string {
	switch k {
	case KindResponses:
		s, _ := body["input"].(string)
		return s
	case KindGemini:
		c := body["contents"].([]any)[0].(map[string]any)
		return c["parts"].([]any)[0].(map[string]any)["text"].(string)
	}
	msgs := body["messages"].([]any)
	return msgs[len(msgs)-1].(map[string]any)["content"].(string)
}

func (f *fake) ok(w http.ResponseWriter, model string, text *string, refusal bool) {
	f.mu.Lock()
	if f.reported != "" {
		model = f.reported
	}
	f.mu.Unlock()
	var v any
	t := ""
	if text != nil {
		t = *text
	}
	switch f.kind {
	case KindChat:
		msg := map[string]any{"role": "assistant", "content": t, "refusal": nil}
		if refusal {
			msg["content"], msg["refusal"] = nil, "I'm sorry, I can't help with that."
		}
		v = map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000, "model": model,
			"choices":            []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": "stop"}},
			"usage":              map[string]any{"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
			"system_fingerprint": "fp_1",
		}
	case KindResponses:
		part := map[string]any{"type": "output_text", "text": t, "annotations": []any{}}
		if refusal {
			part = map[string]any{"type": "refusal", "refusal": "I can't help with that."}
		}
		v = map[string]any{
			"id": "resp_1", "object": "response", "created_at": 1700000000, "status": "completed", "model": model,
			"output": []any{
				map[string]any{"type": "reasoning", "id": "rs_1", "summary": []any{}},
				map[string]any{"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": []any{part}},
			},
			"usage": map[string]any{"input_tokens": 12, "output_tokens": 7, "total_tokens": 19},
		}
	case KindAnthropic:
		stop := "end_turn"
		if refusal {
			stop = "refusal"
		}
		v = map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": t}},
			"stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 12, "output_tokens": 7},
		}
	case KindGemini:
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": t}}}, "finishReason": "STOP", "index": 0}
		if refusal {
			cand = map[string]any{"finishReason": "SAFETY", "index": 0}
		}
		v = map[string]any{
			"candidates":    []any{cand},
			"usageMetadata": map[string]any{"promptTokenCount": 12, "candidatesTokenCount": 7, "totalTokenCount": 19},
			"modelVersion":  model, "responseId": "r1",
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// apiError writes the provider's error body shape.
func (f *fake) apiError(w http.ResponseWriter, status int, msg string) {
	var v any
	switch f.kind {
	case KindAnthropic:
		typ := map[int]string{401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		if typ == "" {
			typ = "api_error"
		}
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case KindGemini:
		v = map[string]any{"error": map[string]any{"code": status, "message": msg, "status": http.StatusText(status)}}
	default:
		v = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": fmt.Sprint(status)}}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
