// Package proxy is finrepro's recording and replaying HTTP proxy: unmodified
// clients of the OpenAI, Anthropic and Gemini APIs (SDKs, agents,
// evaluation harnesses) are pointed at it by base URL, and their exchanges
// are answered from, or recorded into, the exchange cache, streams
// included, byte for byte.
//
// Each request becomes the request object the replay client keys,
//
//	{"provider": NAME, "endpoint": PATH, "body": {...}, "sample": N}
//
// with the body as the client sent it, NAME the provider the path names
// (see routeOf) and N the number of identical requests the same run has
// already been answered: an agent that sends one body twice gets its two
// recorded answers back in order, and a request that failed (an upstream
// 429, a cut stream, a miss) consumes no sample, so an SDK's retry asks
// for the same one. Headers, credentials, query strings and base URLs are
// never part of a key, of the store or of the log.
//
// In Offline mode, the default, the proxy never dials out: a miss is
// answered at once with HTTP 404 in the provider's own error shape, with
// type finrepro_cache_miss. In Record mode a miss is forwarded to its
// upstream with the client's credentials, and a successful answer is
// stored, a stream once its terminal event has arrived, before or while
// it reaches the client. In Refresh mode every request is forwarded and
// stored under the next free sample index. docs/proxy.md is the manual.
package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/replay"
)

// A Pace says how a stored stream's frames are spaced on replay.
type Pace string

// Paces.
const (
	Collapsed Pace = "collapsed" // every frame at once, each flushed on its own
	Recorded  Pace = "recorded"  // each frame at its recorded arrival offset
)

// Config configures a Server.
type Config struct {
	// Mode is replay.Offline when empty.
	Mode replay.Mode
	// Client gives the provider table (base URLs of the upstreams), the
	// concurrency and rate limits, the prices and the secret redaction;
	// its store is the cache the proxy answers from.
	Client *replay.Client
	// Run names the run of requests that carry no X-Finrepro-Run header.
	Run string
	// Pace is Collapsed when empty.
	Pace Pace
	// MissDir, when set, receives each missing request object as
	// KEY.json, for "finrepro cache explain".
	MissDir string
	// Log, when set, receives one JSON line per request.
	Log io.Writer
	// Progress, when set, receives the live counts (redrawn on a
	// terminal).
	Progress io.Writer
	// HTTP sends upstream requests; nil means a client that follows no
	// redirect.
	HTTP *http.Client
	// Clock gives recorded_at, the log's times, latencies and stream
	// frame offsets; nil means time.Now.
	Clock func() time.Time
}

// A Server is the proxy's HTTP handler. It is safe for concurrent use.
type Server struct {
	cfg    Config
	store  *cache.Store
	client *replay.Client
	http   *http.Client
	clock  func() time.Time
	runs   runs
	counts counter
	logMu  sync.Mutex
}

// New returns a proxy over cfg.Client's store.
func New(cfg Config) (*Server, error) {
	if cfg.Client == nil {
		return nil, errors.New("proxy: no replay client")
	}
	if cfg.Mode == "" {
		cfg.Mode = replay.Offline
	}
	if _, err := replay.ParseMode(string(cfg.Mode)); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	switch cfg.Pace {
	case "":
		cfg.Pace = Collapsed
	case Collapsed, Recorded:
	default:
		return nil, fmt.Errorf("proxy: unknown pace %q (want collapsed or recorded)", cfg.Pace)
	}
	s := &Server{cfg: cfg, store: cfg.Client.Store(), client: cfg.Client, http: cfg.HTTP, clock: cfg.Clock}
	if s.http == nil {
		s.http = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	s.runs.init()
	s.counts.w = cfg.Progress
	s.counts.tty = isTerminal(cfg.Progress)
	return s, nil
}

// Counts returns the outcome counts so far.
func (s *Server) Counts() Counts { return s.counts.get() }

// HeaderRun names the run of a request; without it the request belongs
// to Config.Run.
const HeaderRun = "X-Finrepro-Run"

// Response headers the proxy adds.
const (
	HeaderKey    = "X-Finrepro-Key"    // the request's cache key
	HeaderSample = "X-Finrepro-Sample" // its sample index
	HeaderCache  = "X-Finrepro-Cache"  // hit, recorded or miss
)

// Error types of the proxy's own answers (the "type" of the provider's
// error shape; Gemini carries it as the ErrorInfo reason).
const (
	TypeMiss        = "finrepro_cache_miss"       // 404: not in the cache, offline
	TypeServerState = "finrepro_server_state"     // 400: depends on state not recorded in this run
	TypeBadRequest  = "finrepro_bad_request"      // 400: not a request the proxy can key
	TypeNoEndpoint  = "finrepro_unknown_endpoint" // 404: a path the proxy does not serve
	TypeUpstream    = "finrepro_upstream_error"   // 502: the upstream could not be reached
)

// An exchange is one request being answered.
type exchange struct {
	rt       route
	run      string
	body     []byte
	stream   bool
	model    string
	req      replay.Request
	key      cache.Key
	log      logEntry
	respID   string // a Responses answer's id, for the run's state
	released bool
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.clock()
	x := &exchange{run: r.Header.Get(HeaderRun)}
	if x.run == "" {
		x.run = s.cfg.Run
	}
	x.log = logEntry{Run: x.run, Method: r.Method, Path: r.URL.Path}
	defer func() {
		x.log.LatencyMS = s.clock().Sub(start).Milliseconds()
		x.log.Time = start.UTC().Format(time.RFC3339Nano)
		s.writeLog(&x.log)
		s.counts.add(x.log.Outcome, x.log.CostUSD)
	}()
	rt, err := routeOf(r.Method, r.URL, func(name string) bool { _, ok := s.client.Provider(name); return ok })
	x.rt = rt
	if err != nil {
		if errors.Is(err, errNoRoute) {
			s.refuse(w, x, http.StatusNotFound, TypeNoEndpoint, fmt.Sprintf("finrepro proxy: %s %s is not an endpoint it serves (see docs/proxy.md)", r.Method, r.URL.Path))
		} else {
			s.refuse(w, x, http.StatusBadRequest, TypeBadRequest, "finrepro proxy: "+err.Error())
		}
		return
	}
	x.log.Provider, x.log.Endpoint = rt.provider, rt.endpoint
	if err := s.readBody(r, x); err != nil {
		s.refuse(w, x, http.StatusBadRequest, TypeBadRequest, "finrepro proxy: "+err.Error())
		return
	}
	// The client's secret check keeps every credential out of the store.
	for _, c := range credentials(r) {
		s.client.AddSecret(c)
	}
	if msg := s.stateCheck(x); msg != "" {
		s.refuse(w, x, http.StatusBadRequest, TypeServerState, msg)
		return
	}
	x.req = replay.Request{Provider: rt.provider, Endpoint: rt.endpoint, Body: x.body}
	_, base, err := replay.EncodeKey(&x.req)
	if err != nil {
		s.refuse(w, x, http.StatusBadRequest, TypeBadRequest, "finrepro proxy: "+s.client.Redact(err.Error()))
		return
	}
	sq, err := s.runs.lock(r.Context(), x.run, base)
	if err != nil {
		x.log.Outcome = outcomeCanceled
		return
	}
	defer sq.unlock()
	if err := s.pickSample(x, sq.next); err != nil {
		s.refuse(w, x, http.StatusInternalServerError, TypeBadRequest, "finrepro proxy: "+err.Error())
		return
	}
	if s.cfg.Mode != replay.Refresh && s.serveStored(w, r, x) {
		sq.next = x.req.Sample + 1
		s.runs.noteID(x.run, x.respID)
		return
	}
	if s.cfg.Mode == replay.Offline {
		s.miss(w, x)
		return
	}
	if s.forward(w, r, x) {
		sq.next = x.req.Sample + 1
		s.runs.noteID(x.run, x.respID)
	}
}

// readBody reads and checks the request body and the fields the proxy
// looks at.
func (s *Server) readBody(r *http.Request, x *exchange) error {
	if x.rt.get {
		x.body = []byte("{}")
		return nil
	}
	b, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, reqkey.MaxRequestBytes))
	if err != nil {
		return fmt.Errorf("reading the request body: %v", err)
	}
	var f struct {
		Model              string `json:"model"`
		Stream             bool   `json:"stream"`
		PreviousResponseID string `json:"previous_response_id"`
		Background         bool   `json:"background"`
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return errors.New("the request body is not a JSON object")
	}
	if err := json.Unmarshal(b, &f); err != nil {
		// A body whose fields have other types is keyed all the same;
		// only what is not JSON at all is refused.
		if !json.Valid(b) {
			return errors.New("the request body is not valid JSON")
		}
	}
	x.body, x.model = b, f.Model
	x.stream = f.Stream || x.rt.gemStream
	x.log.Stream = x.stream
	if x.rt.family == gemini {
		m, _, _ := strings.Cut(strings.TrimPrefix(x.rt.endpoint, "models/"), ":")
		x.model = m
	}
	x.respID = ""
	if f.PreviousResponseID != "" {
		x.log.Depends = f.PreviousResponseID
	}
	return nil
}

// stateCheck refuses a request that depends on server state that was
// not answered in the same run: a previous_response_id, or retrieving a
// stored response, of a response this run has not seen.
func (s *Server) stateCheck(x *exchange) string {
	id := x.log.Depends
	if x.rt.retrieve != "" {
		id = x.rt.retrieve
	}
	if id == "" || s.runs.seen(x.run, id) {
		return ""
	}
	return fmt.Sprintf("finrepro proxy: the request depends on server state: response %q was not answered in run %q; "+
		"a conversation kept by the server (previous_response_id, background responses, retrieval) replays only within the run that recorded it", id, x.run)
}

// pickSample sets the request's sample: next in Offline and Record mode,
// the first index from next on that is not stored in Refresh mode.
func (s *Server) pickSample(x *exchange, next int) error {
	x.req.Sample = next
	for {
		_, k, err := replay.EncodeKey(&x.req)
		if err != nil {
			return err
		}
		x.key = k
		if s.cfg.Mode != replay.Refresh {
			break
		}
		has, err := s.store.Has(k)
		if err != nil {
			return err
		}
		if !has {
			break
		}
		x.req.Sample++
	}
	x.log.Key, x.log.Sample = x.key.String(), x.req.Sample
	return nil
}

// serveStored answers x from the cache and reports whether it could. An
// unreadable entry is a miss.
func (s *Server) serveStored(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	bp := responseBuffers.Get().(*[]byte)
	defer putResponseBuffer(bp)
	resp, meta, err := s.store.AppendResponse((*bp)[:0], x.key)
	if resp != nil {
		*bp = resp
	}
	if err != nil {
		if !errors.Is(err, cache.ErrNotFound) {
			s.counts.logf("warning: cache entry %s unreadable, treated as missing: %v", x.key.Str(), err)
		}
		return false
	}
	var st *Stream
	if isStream(resp) {
		if st, err = parseStreamInPlace(resp); err != nil {
			s.counts.logf("warning: cache entry %s: %v; treated as missing", x.key.Str(), err)
			return false
		}
	}
	x.log.Outcome, x.log.Status, x.log.CostUSD = outcomeHit, http.StatusOK, 0
	s.counts.avoid(meta.CostUSD)
	h := w.Header()
	setHeaders(h, meta.Headers)
	s.setKeyHeaders(h, x, "hit")
	if st == nil {
		if h.Get("Content-Type") == "" {
			h.Set("Content-Type", "application/json")
		}
		h.Set("Content-Length", strconv.Itoa(len(resp)))
		w.WriteHeader(http.StatusOK)
		n, _ := w.Write(resp) // a client gone is its own business
		x.log.Bytes = n
		if x.rt.kind == replay.KindResponses {
			x.respID = responseID(resp)
		}
		return true
	}
	h.Set("Content-Type", st.ContentType)
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	var g grammar
	began := time.Now() // pacing only; never stored
	for _, f := range st.Frames {
		if s.cfg.Pace == Recorded {
			if d := time.Duration(f.AtUS)*time.Microsecond - time.Since(began); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-t.C:
				case <-r.Context().Done():
					t.Stop()
					return true
				}
			}
		}
		n, err := w.Write(f.Bytes)
		x.log.Bytes += n
		if err != nil {
			return true
		}
		if fl != nil {
			fl.Flush()
		}
		if x.rt.kind == replay.KindResponses {
			g.family = openAI
			g.add(f.Bytes)
		}
	}
	x.respID = g.responseID
	return true
}

// responseBuffers keeps serveStored's response buffers between
// requests; a buffer is put back once the whole response, every frame
// of a stream (they slice it), has been written. With them and the
// stream parsed in place, BenchmarkStreamReplay's 1 MB replay takes
// 0.8 of the time it took reading and parsing into fresh pages each
// time (4 paired rounds: 4.0-5.1 ms against 4.7-6.6).
var responseBuffers = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledResponse bounds the buffers responseBuffers keeps, so that a
// rare huge response costs its memory only once.
const maxPooledResponse = 4 << 20

// putResponseBuffer gives a buffer back to responseBuffers unless it is
// larger than maxPooledResponse.
func putResponseBuffer(bp *[]byte) {
	if cap(*bp) <= maxPooledResponse {
		responseBuffers.Put(bp)
	}
}

// setKeyHeaders adds the proxy's own response headers.
func (s *Server) setKeyHeaders(h http.Header, x *exchange, how string) {
	h.Set(HeaderKey, x.key.String())
	h.Set(HeaderSample, strconv.Itoa(x.req.Sample))
	h.Set(HeaderCache, how)
}

// miss answers a request that is not stored, offline.
func (s *Server) miss(w http.ResponseWriter, x *exchange) {
	explain := "finrepro cache explain --dir " + s.store.Dir() + " REQUEST.json"
	if s.cfg.MissDir != "" {
		p := filepath.Join(s.cfg.MissDir, x.key.String()+".json")
		if err := writeMiss(p, &x.req); err != nil {
			s.counts.logf("warning: %v", err)
		} else {
			explain = "finrepro cache explain --dir " + s.store.Dir() + " " + p
		}
	}
	msg := fmt.Sprintf("finrepro proxy: not in the cache (offline): key %s, provider %s, endpoint %s, sample %d of run %q; "+
		"the nearest stored requests: %s; record it with finrepro proxy --mode record",
		x.key, x.req.Provider, x.req.Endpoint, x.req.Sample, x.run, explain)
	s.setKeyHeaders(w.Header(), x, "miss")
	s.refuse(w, x, http.StatusNotFound, TypeMiss, msg)
	x.log.Outcome = outcomeMiss
}

// writeMiss writes a missing request object for cache explain.
func writeMiss(path string, r *replay.Request) error {
	raw, err := r.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("proxy: write miss: %w", err)
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, append(raw, '\n'), 0o644); err != nil {
		return fmt.Errorf("proxy: write miss: %w", err)
	}
	return os.Rename(tmp, path)
}

// refuse answers with the proxy's own error in the provider's shape.
func (s *Server) refuse(w http.ResponseWriter, x *exchange, status int, typ, msg string) {
	msg = s.client.Redact(msg)
	x.log.Outcome, x.log.Status, x.log.Error = outcomeRefused, status, typ
	b := errorBody(x.rt.family, status, typ, msg)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	n, _ := w.Write(b) // a client gone is its own business
	x.log.Bytes = n
}

// errorBody is an error in the provider's own shape.
func errorBody(f family, status int, typ, msg string) []byte {
	var v any
	switch f {
	case anthropic:
		v = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case gemini:
		v = map[string]any{"error": map[string]any{
			"code": status, "message": msg, "status": grpcStatus(status),
			"details": []any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": typ, "domain": "finrepro"}},
		}}
	default:
		v = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": typ}}
	}
	b, _ := json.Marshal(v) // maps of strings and numbers always encode
	return append(b, '\n')
}

// grpcStatus is the Google API status name of an HTTP status.
func grpcStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusBadGateway:
		return "UNAVAILABLE"
	}
	return "INTERNAL"
}

// responseID is the top-level "id" of a JSON response.
func responseID(b []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(b, &v) // no id: nothing to note
	return v.ID
}

// credentials returns the credential values a request carries, for
// redaction and for the check that none is stored.
func credentials(r *http.Request) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= 8 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, name := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key", "Cookie", "Openai-Organization", "Openai-Project"} {
		for _, v := range r.Header.Values(name) {
			add(v)
			if rest, ok := strings.CutPrefix(v, "Bearer "); ok {
				add(rest)
			}
		}
	}
	add(r.URL.Query().Get("key"))
	return out
}
