package proxy

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// An upstream is a local server that speaks the OpenAI (Chat
// Completions, Responses, embeddings, models), Anthropic Messages and
// Gemini generateContent wire formats, streams included. The answer to a
// body names how often that body was seen, so that repeated identical
// requests get different answers. A trigger word in the last message
// makes the first such request fail: RATE_LIMIT_ONCE (429 with
// Retry-After), SERVER_ERROR_ONCE (500), CUT_ONCE (the stream breaks off
// before its terminal event), STREAM_ERROR_ONCE (an error event in
// the stream), and, for Chat Completions, REFUSE_ONCE (a refusal) and
// EMPTY_ONCE (an answer of blank text).
type upstream struct {
	*httptest.Server
	mu    sync.Mutex
	seen  map[string]int
	once  map[string]bool
	reqs  []upstreamReq
	delay func() // called after each stream frame, when set (setDelay)
}

type upstreamReq struct {
	Method, Path string
	Header       http.Header
}

func newUpstream(t testing.TB) *upstream {
	u := &upstream{seen: map[string]int{}, once: map[string]bool{}}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.Close)
	return u
}

// requests returns the number of requests received.
func (u *upstream) requests() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.reqs)
}

// upBody is the part of a request body the upstream reads.
type upBody struct {
	Model         string `json:"model"`
	Stream        bool   `json:"stream"`
	Background    bool   `json:"background"`
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Messages []struct {
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Input          json.RawMessage `json:"input"`
	Tools          json.RawMessage `json:"tools"`
	EncodingFormat string          `json:"encoding_format"`
	Contents       []struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"contents"`
}

// lastText is the text of the last message, whatever its shape.
func (b *upBody) lastText() string {
	if n := len(b.Contents); n > 0 {
		var s []string
		for _, p := range b.Contents[n-1].Parts {
			s = append(s, p.Text)
		}
		return strings.Join(s, "")
	}
	raw := b.Input
	if n := len(b.Messages); n > 0 {
		raw = b.Messages[n-1].Content
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

func (u *upstream) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.reqs = append(u.reqs, upstreamReq{r.Method, r.URL.Path, r.Header.Clone()})
	nreq := len(u.reqs)
	delay := u.delay
	u.mu.Unlock()
	var b upBody
	if r.Method == http.MethodPost && json.Unmarshal(raw, &b) != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	p := r.URL.Path
	fam := openAI
	switch {
	case strings.HasPrefix(p, "/v1beta/"):
		fam = gemini
	case strings.HasPrefix(p, "/v1/messages"):
		fam = anthropic
	}
	text := b.lastText()
	trigger := func(word string) bool {
		if !strings.Contains(text, word) {
			return false
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		k := word + " " + p + " " + text
		if u.once[k] {
			return false
		}
		u.once[k] = true
		return true
	}
	switch {
	case trigger("RATE_LIMIT_ONCE"):
		w.Header().Set("Retry-After", "1")
		upError(w, fam, http.StatusTooManyRequests, "rate limited, retry later")
		return
	case trigger("SERVER_ERROR_ONCE"):
		upError(w, fam, http.StatusInternalServerError, "internal error")
		return
	}
	u.mu.Lock()
	u.seen[p+" "+string(raw)]++
	n := u.seen[p+" "+string(raw)]
	u.mu.Unlock()
	answer := fmt.Sprintf("Answer %d to %q.", n, text)
	tool := len(b.Tools) > 0 && string(b.Tools) != "null"
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_%d", nreq))
	w.Header().Set("Openai-Organization", "org-secretorganisation")
	w.Header().Set("X-Ratelimit-Remaining-Requests", "99")
	switch {
	case r.Method == http.MethodGet && p == "/v1/models":
		writeJSON(w, `{"object":"list","data":[{"id":"gpt-test","object":"model","created":1700000000,"owned_by":"finrepro-test"}]}`)
	case p == "/v1/embeddings":
		u.embeddings(w, &b)
	case p == "/v1/chat/completions" && !b.Stream:
		msg := fmt.Sprintf(`{"role":"assistant","content":%s,"refusal":null}`, js(answer))
		fin := "stop"
		switch {
		case tool:
			msg, fin = `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`, "tool_calls"
		case trigger("REFUSE_ONCE"):
			msg = `{"role":"assistant","content":null,"refusal":"I can't help with that."}`
		case trigger("EMPTY_ONCE"):
			msg = `{"role":"assistant","content":" ","refusal":null}`
		}
		writeJSON(w, fmt.Sprintf(`{"id":"chatcmpl-%d","object":"chat.completion","created":1700000000,"model":%s,"choices":[{"index":0,"message":%s,"logprobs":null,"finish_reason":%q}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`, n, js(b.Model+"-2025-01-01"), msg, fin))
	case p == "/v1/chat/completions":
		var fr []string
		head := fmt.Sprintf(`{"id":"chatcmpl-%d","object":"chat.completion.chunk","created":1700000000,"model":%s,"choices":[`, n, js(b.Model+"-2025-01-01"))
		fr = append(fr, head+`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		fin := "stop"
		if tool {
			fr = append(fr, head+`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]},"finish_reason":null}]}`)
			for _, a := range []string{`{"ci`, `ty":`, `"Par`, `is"}`} {
				fr = append(fr, head+fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":%s}}]},"finish_reason":null}]}`, js(a)))
			}
			fin = "tool_calls"
		} else {
			for _, piece := range pieces(answer) {
				fr = append(fr, head+fmt.Sprintf(`{"index":0,"delta":{"content":%s},"finish_reason":null}]}`, js(piece)))
			}
		}
		fr = append(fr, head+fmt.Sprintf(`{"index":0,"delta":{},"finish_reason":%q}]}`, fin))
		if b.StreamOptions.IncludeUsage {
			fr = append(fr, head+`],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`)
		}
		var frames []string
		for _, f := range fr {
			frames = append(frames, "data: "+f+"\n\n")
		}
		u.stream(w, delay, trigger, frames, "data: [DONE]\n\n", `data: {"error":{"message":"stream failed","type":"server_error"}}`+"\n\n")
	case p == "/v1/responses" && !b.Stream && b.Background:
		writeJSON(w, responsesObject(n, b.Model, "queued", ""))
	case p == "/v1/responses" && !b.Stream:
		writeJSON(w, responsesObject(n, b.Model, "completed", answer))
	case p == "/v1/responses":
		frames := []string{
			sse("response.created", fmt.Sprintf(`{"type":"response.created","sequence_number":0,"response":%s}`, responsesObject(n, b.Model, "in_progress", ""))),
			sse("response.output_item.added", fmt.Sprintf(`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_%d","status":"in_progress","role":"assistant","content":[]}}`, n)),
		}
		for i, piece := range pieces(answer) {
			frames = append(frames, sse("response.output_text.delta", fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_%d","output_index":0,"content_index":0,"delta":%s}`, i+2, n, js(piece))))
		}
		last := sse("response.completed", fmt.Sprintf(`{"type":"response.completed","sequence_number":%d,"response":%s}`, len(frames), responsesObject(n, b.Model, "completed", answer)))
		u.stream(w, delay, trigger, frames, last, sse("error", `{"type":"error","sequence_number":99,"code":"server_error","message":"stream failed","param":null}`))
	case p == "/v1/messages" && !b.Stream:
		content, stop := fmt.Sprintf(`[{"type":"text","text":%s}]`, js(answer)), "end_turn"
		if tool {
			content, stop = `[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}]`, "tool_use"
		}
		writeJSON(w, fmt.Sprintf(`{"id":"msg_%d","type":"message","role":"assistant","model":%s,"content":%s,"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":8}}`, n, js(b.Model), content, stop))
	case p == "/v1/messages":
		frames := []string{
			sse("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_%d","type":"message","role":"assistant","model":%s,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`, n, js(b.Model))),
		}
		stop := "end_turn"
		if tool {
			frames = append(frames, sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`), sse("ping", `{"type": "ping"}`))
			for _, a := range []string{`{"ci`, `ty":`, `"Par`, `is"}`} {
				frames = append(frames, sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%s}}`, js(a))))
			}
			stop = "tool_use"
		} else {
			frames = append(frames, sse("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`), sse("ping", `{"type": "ping"}`))
			for _, piece := range pieces(answer) {
				frames = append(frames, sse("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":%s}}`, js(piece))))
			}
		}
		frames = append(frames, sse("content_block_stop", `{"type":"content_block_stop","index":0}`),
			sse("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":8}}`, stop)))
		u.stream(w, delay, trigger, frames, sse("message_stop", `{"type":"message_stop"}`), sse("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	case strings.HasSuffix(p, ":embedContent"):
		writeJSON(w, `{"embedding":{"values":[0.25,-0.5,0.125]}}`)
	case strings.HasSuffix(p, ":batchEmbedContents"):
		writeJSON(w, `{"embeddings":[{"values":[0.25,-0.5,0.125]}]}`)
	case strings.HasSuffix(p, ":generateContent"):
		writeJSON(w, geminiChunk(n, b.Model, geminiParts(tool, answer), "STOP"))
	case strings.HasSuffix(p, ":streamGenerateContent") && r.URL.Query().Get("alt") == "sse":
		var frames []string
		if tool {
			frames = append(frames, "data: "+geminiChunk(n, "", geminiParts(true, ""), "")+"\r\n\r\n")
		} else {
			for _, piece := range pieces(answer) {
				frames = append(frames, "data: "+geminiChunk(n, "", fmt.Sprintf(`[{"text":%s}]`, js(piece)), "")+"\r\n\r\n")
			}
		}
		last := "data: " + geminiChunk(n, "", `[{"text":""}]`, "STOP") + "\r\n\r\n"
		u.stream(w, delay, trigger, frames, last, `data: {"error":{"code":500,"message":"stream failed","status":"INTERNAL"}}`+"\r\n\r\n")
	default:
		upError(w, fam, http.StatusNotFound, "no such endpoint "+p)
	}
}

// stream writes frames, then the terminal frame; CUT_ONCE breaks off
// before it, STREAM_ERROR_ONCE sends errFrame instead.
func (u *upstream) stream(w http.ResponseWriter, delay func(), trigger func(string) bool, frames []string, last, errFrame string) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	for _, f := range frames {
		io.WriteString(w, f)
		fl.Flush()
		if delay != nil {
			delay()
		}
	}
	switch {
	case trigger("CUT_ONCE"):
		panic(http.ErrAbortHandler) // the connection closes mid-stream
	case trigger("STREAM_ERROR_ONCE"):
		io.WriteString(w, errFrame)
	default:
		io.WriteString(w, last)
	}
}

func (u *upstream) embeddings(w http.ResponseWriter, b *upBody) {
	vec := []float32{0.25, -0.5, float32(len(b.lastText())) / 100}
	var emb string
	if b.EncodingFormat == "base64" {
		buf := make([]byte, 4*len(vec))
		for i, v := range vec {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		emb = js(base64.StdEncoding.EncodeToString(buf))
	} else {
		e, _ := json.Marshal(vec)
		emb = string(e)
	}
	writeJSON(w, fmt.Sprintf(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":%s}],"model":%s,"usage":{"prompt_tokens":4,"total_tokens":4}}`, emb, js(b.Model)))
}

func upError(w http.ResponseWriter, f family, status int, msg string) {
	var b string
	switch f {
	case anthropic:
		typ := "api_error"
		if status == http.StatusTooManyRequests {
			typ = "rate_limit_error"
		}
		b = fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%s}}`, typ, js(msg))
	case gemini:
		st := "INTERNAL"
		if status == http.StatusTooManyRequests {
			st = "RESOURCE_EXHAUSTED"
		}
		b = fmt.Sprintf(`{"error":{"code":%d,"message":%s,"status":%q}}`, status, js(msg), st)
	default:
		b = fmt.Sprintf(`{"error":{"message":%s,"type":"server_error","param":null,"code":null}}`, js(msg))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, b)
}

func responsesObject(n int, model, status, text string) string {
	out := "[]"
	usage := "null"
	if status == "completed" {
		out = fmt.Sprintf(`[{"type":"message","id":"msg_%d","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}]`, n, js(text))
		usage = `{"input_tokens":9,"output_tokens":6,"total_tokens":15}`
	}
	return fmt.Sprintf(`{"id":"resp_%d","object":"response","created_at":1700000000,"status":%q,"model":%s,"output":%s,"usage":%s,"error":null}`, n, status, js(model), out, usage)
}

func geminiParts(tool bool, text string) string {
	if tool {
		return `[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]`
	}
	return fmt.Sprintf(`[{"text":%s}]`, js(text))
}

func geminiChunk(n int, model, parts, finish string) string {
	fin := ""
	if finish != "" {
		fin = fmt.Sprintf(`,"finishReason":%q`, finish)
	}
	mv := ""
	if model != "" {
		mv = fmt.Sprintf(`,"modelVersion":%s`, js(model))
	}
	return fmt.Sprintf(`{"candidates":[{"content":{"parts":%s,"role":"model"}%s,"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":3,"totalTokenCount":8}%s,"responseId":"r-%d"}`, parts, fin, mv, n)
}

// pieces splits an answer into three parts, for streamed deltas.
func pieces(s string) []string {
	r := []rune(s)
	a, b := len(r)/3, 2*len(r)/3
	return []string{string(r[:a]), string(r[a:b]), string(r[b:])}
}

func sse(event, data string) string { return "event: " + event + "\ndata: " + data + "\n\n" }

func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func writeJSON(w http.ResponseWriter, s string) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, s)
}

// setDelay sets the function called after each stream frame.
func (u *upstream) setDelay(f func()) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.delay = f
}
