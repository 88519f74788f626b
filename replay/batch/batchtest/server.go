// Package batchtest is a local stand-in for the providers' batch APIs,
// for tests: an httptest server speaking OpenAI's Files and Batch
// endpoints and Anthropic's Message Batches as their API references
// document them, with batches that finish out of order, result lines in
// a shuffled order, lines that error, a batch that expires part done and
// a results download cut in the middle.
//
// Every answer is synthetic: "reply to: " and the last message's content.
package batchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Options shape a Server's behaviour.
type Options struct {
	// Key is the API key every request must carry.
	Key string
	// ErrorEvery makes one request in ErrorEvery (by its custom_id's
	// hash) fail with an error line, and the next one in ErrorEvery
	// answer an empty completion; 0 never.
	ErrorEvery int
	// Expire makes the n-th batch created (1-based) expire with the
	// first half of its requests done; 0 never.
	Expire int
	// Fail makes the n-th batch created fail as a whole (OpenAI's
	// status "failed", with an error list, and no results; Anthropic has
	// no such status and ignores it); 0 never.
	Fail int
	// Flaky makes every Flaky-th GET and file upload answer 429 (with
	// Retry-After) or 503 instead; 0 never.
	Flaky int
	// Stray adds a result line with a custom_id no request has to every
	// batch's results.
	Stray bool
	// Cut makes the first results download of the n-th batch created end
	// after half its bytes; 0 never.
	Cut int
	// HoldAfter, with Hold, makes the first results download of more
	// than HoldAfter lines send HoldAfter lines, flush, and wait until
	// Hold is closed or the client goes away.
	HoldAfter int
	Hold      chan struct{}
	// Held, when not nil, is closed once a download is held.
	Held chan struct{}
	// HoldCreate, with CreateHold, makes the HoldCreate-th batch create
	// request (1-based) wait until CreateHold is closed or the client
	// goes away, and then fail without creating anything; CreateHeld,
	// when not nil, is closed once it waits.
	HoldCreate             int
	CreateHold, CreateHeld chan struct{}
}

// A Server is the stand-in. Its base URL for both providers is URL+"/v1".
type Server struct {
	*httptest.Server
	opt Options

	mu       sync.Mutex
	files    map[string][]byte
	batches  []*fakeBatch
	byID     map[string]*fakeBatch
	held     bool
	creates  int
	retried  int // GETs and uploads counted for Flaky
	Requests int // requests submitted, over every batch
}

type fakeBatch struct {
	n         int // 1-based creation number
	id        string
	anthropic bool
	endpoint  string
	lines     []inLine
	polls     int
	status    string
	cancelled bool
	downloads int
	output    []byte // OpenAI output file, or Anthropic results
	errors    []byte // OpenAI error file
}

type inLine struct {
	id   string
	body json.RawMessage
}

// New starts a Server.
func New(opt Options) *Server {
	s := &Server{opt: opt, files: map[string][]byte{}, byID: map[string]*fakeBatch{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the base URL to give both providers.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Batches returns the number of batches created.
func (s *Server) Batches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.batches)
}

// Downloads returns how many times the results of the n-th batch created
// were downloaded (for OpenAI, its output file).
func (s *Server) Downloads(n int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n < 1 || n > len(s.batches) {
		return 0
	}
	return s.batches[n-1].downloads
}

// Answered returns the last message contents of the requests the server
// answered with a non-empty completion, sorted.
func (s *Server) Answered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.batches {
		for _, l := range bytes.Split(bytes.TrimSpace(b.output), []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var x struct {
				CustomID string `json:"custom_id"`
				Response *struct {
					Body struct {
						Choices []struct {
							Message struct {
								Content string `json:"content"`
							} `json:"message"`
						} `json:"choices"`
					} `json:"body"`
				} `json:"response"`
				Result struct {
					Message struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"message"`
				} `json:"result"`
			}
			json.Unmarshal(l, &x)
			if x.CustomID == "stray" {
				continue
			}
			text := ""
			if x.Response != nil && len(x.Response.Body.Choices) > 0 {
				text = x.Response.Body.Choices[0].Message.Content
			}
			if c := x.Result.Message.Content; len(c) > 0 {
				text = c[0].Text
			}
			if q, ok := strings.CutPrefix(text, "reply to: "); ok {
				out = append(out, q)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Outcome is what the server does with a request: "ok", "error",
// "empty" or, in the expiring batch, "expired".
func (s *Server) Outcome(customID string) string {
	if s.opt.ErrorEvery == 0 {
		return "ok"
	}
	switch hash(customID) % uint64(s.opt.ErrorEvery) {
	case 0:
		return "error"
	case 1:
		return "empty"
	}
	return "ok"
}

func hash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	msg, _ := json.Marshal(fmt.Sprintf(format, args...))
	fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":%s}}`, msg)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

var (
	anthropicBatchPath = regexp.MustCompile(`^/v1/messages/batches/([A-Za-z0-9_]+)(/cancel|/results)?$`)
	openaiBatchPath    = regexp.MustCompile(`^/v1/batches/([A-Za-z0-9_]+)(/cancel)?$`)
	filePath           = regexp.MustCompile(`^/v1/files/([A-Za-z0-9_-]+)/content$`)
	customIDPattern    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	anthropic := strings.HasPrefix(p, "/v1/messages/")
	if anthropic {
		if r.Header.Get("x-api-key") != s.opt.Key || r.Header.Get("anthropic-version") == "" {
			httpError(w, 401, "invalid x-api-key")
			return
		}
	} else if r.Header.Get("Authorization") != "Bearer "+s.opt.Key {
		httpError(w, 401, "incorrect API key")
		return
	}
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()
	if s.opt.Flaky > 0 && (r.Method == "GET" || p == "/v1/files") {
		s.retried++
		if s.retried%s.opt.Flaky == 0 {
			if s.retried/s.opt.Flaky%2 == 0 {
				w.Header().Set("Retry-After", "1")
				httpError(w, 429, "synthetic rate limit")
			} else {
				httpError(w, 503, "synthetic overload")
			}
			return
		}
	}
	if (p == "/v1/batches" || p == "/v1/messages/batches") && r.Method == "POST" {
		s.creates++
		if s.creates == s.opt.HoldCreate && s.opt.CreateHold != nil {
			s.mu.Unlock()
			if s.opt.CreateHeld != nil {
				close(s.opt.CreateHeld)
			}
			select {
			case <-s.opt.CreateHold:
			case <-r.Context().Done():
			}
			s.mu.Lock()
			httpError(w, 500, "synthetic: the create request was interrupted")
			return
		}
	}
	switch {
	case p == "/v1/files" && r.Method == "POST":
		s.upload(w, r)
	case p == "/v1/batches" && r.Method == "POST":
		s.openaiCreate(w, r)
	case p == "/v1/messages/batches" && r.Method == "POST":
		s.anthropicCreate(w, r)
	case openaiBatchPath.MatchString(p):
		m := openaiBatchPath.FindStringSubmatch(p)
		b := s.byID[m[1]]
		if b == nil || b.anthropic {
			httpError(w, 404, "no batch %s", m[1])
			return
		}
		if m[2] == "/cancel" {
			b.cancelled = true
		} else {
			s.advance(b)
		}
		writeJSON(w, s.openaiObject(b))
	case anthropicBatchPath.MatchString(p):
		m := anthropicBatchPath.FindStringSubmatch(p)
		b := s.byID[m[1]]
		if b == nil || !b.anthropic {
			httpError(w, 404, "no batch %s", m[1])
			return
		}
		switch m[2] {
		case "/cancel":
			b.cancelled = true
			writeJSON(w, s.anthropicObject(b))
		case "/results":
			if b.status != "ended" {
				httpError(w, 400, "batch %s has not ended", b.id)
				return
			}
			locked = false
			s.download(w, r, b, b.output) // unlocks
		default:
			s.advance(b)
			writeJSON(w, s.anthropicObject(b))
		}
	case filePath.MatchString(p) && r.Method == "GET":
		id := filePath.FindStringSubmatch(p)[1]
		data, ok := s.files[id]
		if !ok {
			httpError(w, 404, "no file %s", id)
			return
		}
		var owner *fakeBatch
		for _, b := range s.batches {
			if id == "out-"+b.id {
				owner = b
			}
		}
		locked = false
		s.download(w, r, owner, data) // unlocks
	default:
		httpError(w, 404, "no route %s %s", r.Method, p)
	}
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		httpError(w, 400, "multipart: %v", err)
		return
	}
	if r.FormValue("purpose") != "batch" {
		httpError(w, 400, "purpose %q, want batch", r.FormValue("purpose"))
		return
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		httpError(w, 400, "file: %v", err)
		return
	}
	data, _ := io.ReadAll(f)
	id := fmt.Sprintf("file-in%d", len(s.files)+1)
	s.files[id] = data
	writeJSON(w, map[string]any{"id": id, "object": "file", "purpose": "batch", "bytes": len(data)})
}

func (s *Server) openaiCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		InputFileID      string `json:"input_file_id"`
		Endpoint         string `json:"endpoint"`
		CompletionWindow string `json:"completion_window"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		httpError(w, 400, "body: %v", err)
		return
	}
	data, ok := s.files[req.InputFileID]
	if !ok || req.CompletionWindow != "24h" {
		httpError(w, 400, "bad input_file_id or completion_window")
		return
	}
	b := &fakeBatch{endpoint: req.Endpoint}
	seen := map[string]bool{}
	model := ""
	for i, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var in struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		var m struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(l, &in); err != nil || json.Unmarshal(in.Body, &m) != nil {
			httpError(w, 400, "input line %d: not JSON", i+1)
			return
		}
		if in.CustomID == "" || seen[in.CustomID] || in.Method != "POST" || in.URL != req.Endpoint {
			httpError(w, 400, "input line %d: bad custom_id, method or url", i+1)
			return
		}
		if model != "" && m.Model != model {
			httpError(w, 400, "input line %d: a file may hold one model only", i+1)
			return
		}
		model = m.Model
		seen[in.CustomID] = true
		b.lines = append(b.lines, inLine{in.CustomID, in.Body})
	}
	if len(b.lines) > 50_000 || len(data) > 200_000_000 {
		httpError(w, 400, "input file over the limits")
		return
	}
	s.add(b, fmt.Sprintf("batch_%d", len(s.batches)+1))
	writeJSON(w, s.openaiObject(b))
}

func (s *Server) anthropicCreate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requests []struct {
			CustomID string          `json:"custom_id"`
			Params   json.RawMessage `json:"params"`
		} `json:"requests"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		httpError(w, 400, "body: %v", err)
		return
	}
	if len(req.Requests) == 0 || len(req.Requests) > 100_000 || len(body) > 256_000_000 {
		httpError(w, 400, "requests: want 1 to 100000, at most 256 MB")
		return
	}
	b := &fakeBatch{anthropic: true}
	seen := map[string]bool{}
	for i, q := range req.Requests {
		if !customIDPattern.MatchString(q.CustomID) || seen[q.CustomID] {
			httpError(w, 400, "requests.%d.custom_id: %q invalid or repeated", i, q.CustomID)
			return
		}
		seen[q.CustomID] = true
		b.lines = append(b.lines, inLine{q.CustomID, q.Params})
	}
	s.add(b, fmt.Sprintf("msgbatch_%d", len(s.batches)+1))
	writeJSON(w, s.anthropicObject(b))
}

func (s *Server) add(b *fakeBatch, id string) {
	b.n, b.id = len(s.batches)+1, id
	b.status = "validating"
	if b.anthropic {
		b.status = "in_progress"
	}
	s.batches = append(s.batches, b)
	s.byID[id] = b
	s.Requests += len(b.lines)
}

// advance moves a batch on at each poll: batch n of N ends at its
// (N-n+2)-th poll, so that later batches end first.
func (s *Server) advance(b *fakeBatch) {
	if b.output != nil || b.errors != nil || b.status == "ended" || b.status == "failed" || b.status == "completed" || b.status == "expired" || b.status == "cancelled" {
		return
	}
	b.polls++
	switch {
	case b.cancelled:
		s.finish(b, "cancelled")
	case b.polls >= len(s.batches)-b.n+2:
		if b.n == s.opt.Fail && !b.anthropic {
			b.status = "failed"
			b.output = []byte{}
			return
		}
		if b.n == s.opt.Expire {
			s.finish(b, "expired")
		} else {
			s.finish(b, "completed")
		}
	case !b.anthropic:
		b.status = "in_progress"
	}
}

// finish writes a batch's results, in a shuffled order.
func (s *Server) finish(b *fakeBatch, how string) {
	lines := slices.Clone(b.lines)
	slices.SortFunc(lines, func(x, y inLine) int {
		hx, hy := hash("order"+x.id), hash("order"+y.id)
		switch {
		case hx < hy:
			return -1
		case hx > hy:
			return 1
		}
		return 0
	})
	var out, errs bytes.Buffer
	for i, l := range lines {
		outcome := s.Outcome(l.id)
		if how != "completed" && i >= len(lines)/2 {
			outcome = how
		}
		if b.anthropic {
			out.Write(anthropicResult(l, outcome, s.opt.Key))
		} else if outcome == "ok" || outcome == "empty" {
			out.Write(openaiResult(l, outcome, b.n, s.opt.Key))
		} else {
			errs.Write(openaiResult(l, outcome, b.n, s.opt.Key))
		}
	}
	if s.opt.Stray {
		stray := inLine{id: "stray", body: lines[0].body}
		if b.anthropic {
			out.Write(anthropicResult(stray, "ok", s.opt.Key))
		} else {
			out.Write(openaiResult(stray, "ok", b.n, s.opt.Key))
		}
	}
	b.output = out.Bytes()
	if b.anthropic {
		b.status = "ended"
		return
	}
	b.status = how
	b.errors = errs.Bytes()
	s.files["out-"+b.id] = b.output
	if len(b.errors) > 0 {
		s.files["err-"+b.id] = b.errors
	}
}

// reply returns the synthetic answer to a body and its model.
func reply(body json.RawMessage) (text, model string) {
	var b struct {
		Model    string `json:"model"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &b)
	content := ""
	if n := len(b.Messages); n > 0 {
		content = b.Messages[n-1].Content
	}
	return "reply to: " + content, b.Model + "-2025-01-01"
}

// An error line echoes the caller's key, as some gateways do, so that
// tests see it redacted.
func openaiResult(l inLine, outcome string, n int, key string) []byte {
	text, model := reply(l.body)
	var v map[string]any
	switch outcome {
	case "ok", "empty":
		if outcome == "empty" {
			text = ""
		}
		v = map[string]any{"id": "batch_req_" + l.id, "custom_id": l.id, "error": nil, "response": map[string]any{
			"status_code": 200, "request_id": "req_" + strconv.Itoa(n),
			"body": map[string]any{"id": "chatcmpl-" + l.id, "object": "chat.completion", "model": model,
				"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}},
				"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}},
		}}
	case "error":
		v = map[string]any{"id": "batch_req_" + l.id, "custom_id": l.id, "error": nil, "response": map[string]any{
			"status_code": 400, "request_id": "req_x",
			"body": map[string]any{"error": map[string]any{"message": "synthetic invalid request for key " + key, "type": "invalid_request_error"}},
		}}
	default: // expired, cancelled
		code := "batch_expired"
		if outcome == "cancelled" {
			code = "batch_cancelled"
		}
		v = map[string]any{"id": "batch_req_" + l.id, "custom_id": l.id, "response": nil,
			"error": map[string]any{"code": code, "message": "This request could not be executed before the batch ended."}}
	}
	b, _ := json.Marshal(v)
	return append(b, '\n')
}

func anthropicResult(l inLine, outcome, key string) []byte {
	text, model := reply(l.body)
	var res map[string]any
	switch outcome {
	case "ok", "empty":
		if outcome == "empty" {
			text = ""
		}
		res = map[string]any{"type": "succeeded", "message": map[string]any{
			"id": "msg_" + l.id, "type": "message", "role": "assistant", "model": model,
			"content": []any{map[string]any{"type": "text", "text": text}}, "stop_reason": "end_turn",
			"usage": map[string]any{"input_tokens": 12, "output_tokens": 4}}}
	case "error":
		res = map[string]any{"type": "errored", "error": map[string]any{"type": "error",
			"error": map[string]any{"type": "invalid_request_error", "message": "synthetic invalid request for key " + key}}}
	case "cancelled":
		res = map[string]any{"type": "canceled"}
	default:
		res = map[string]any{"type": "expired"}
	}
	b, _ := json.Marshal(map[string]any{"custom_id": l.id, "result": res})
	return append(b, '\n')
}

// download serves results; it is called with s.mu held and unlocks it.
func (s *Server) download(w http.ResponseWriter, r *http.Request, b *fakeBatch, data []byte) {
	cut := b != nil && b.n == s.opt.Cut && b.downloads == 0
	if b != nil {
		b.downloads++
	}
	hold := !cut && s.opt.Hold != nil && !s.held && bytes.Count(data, []byte("\n")) > s.opt.HoldAfter
	if hold {
		s.held = true
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/binary")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	switch {
	case cut:
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler) // closes the connection mid-body
	case hold:
		at := 0
		for range s.opt.HoldAfter {
			at += bytes.IndexByte(data[at:], '\n') + 1
		}
		w.Write(data[:at])
		w.(http.Flusher).Flush()
		if s.opt.Held != nil {
			close(s.opt.Held)
		}
		select {
		case <-s.opt.Hold:
		case <-r.Context().Done():
		}
		panic(http.ErrAbortHandler)
	}
	w.Write(data)
}

func (s *Server) openaiObject(b *fakeBatch) map[string]any {
	total, done, failed := len(b.lines), 0, 0
	if b.output != nil {
		done, failed = bytes.Count(b.output, []byte("\n")), bytes.Count(b.errors, []byte("\n"))
	}
	v := map[string]any{"id": b.id, "object": "batch", "endpoint": b.endpoint, "status": b.status,
		"completion_window": "24h", "input_file_id": "file-in", "output_file_id": nil, "error_file_id": nil,
		"request_counts": map[string]int{"total": total, "completed": done, "failed": failed}}
	if b.status == "failed" {
		v["errors"] = map[string]any{"object": "list", "data": []any{map[string]any{
			"code": "invalid_request", "message": "synthetic: the input file was rejected", "line": 1}}}
		return v
	}
	if b.output != nil {
		v["output_file_id"] = "out-" + b.id
		if len(b.errors) > 0 {
			v["error_file_id"] = "err-" + b.id
		}
	}
	if b.cancelled && b.output == nil {
		v["status"] = "cancelling"
	}
	return v
}

func (s *Server) anthropicObject(b *fakeBatch) map[string]any {
	c := map[string]int{"processing": len(b.lines), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	if b.output != nil {
		c["processing"] = 0
		for _, l := range bytes.Split(bytes.TrimSpace(b.output), []byte("\n")) {
			var x struct {
				Result struct {
					Type string `json:"type"`
				} `json:"result"`
			}
			json.Unmarshal(l, &x)
			c[x.Result.Type]++
		}
	}
	status := b.status
	if b.cancelled && b.output == nil {
		status = "canceling"
	}
	v := map[string]any{"id": b.id, "type": "message_batch", "processing_status": status, "request_counts": c,
		"results_url": nil, "created_at": "2025-01-01T00:00:00Z", "expires_at": "2025-01-02T00:00:00Z"}
	if b.output != nil {
		v["results_url"] = s.URL + "/v1/messages/batches/" + b.id + "/results"
	}
	return v
}
