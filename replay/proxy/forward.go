package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
)

// forward sends a missing request to its upstream, relays the answer
// and stores it when it is a success; it reports whether it stored it.
// An upstream error is passed to the client as it came (status, headers,
// body), so that the client's own retry policy applies, and consumes no
// sample.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, x *exchange) bool {
	pc, _ := s.client.Provider(x.rt.provider)
	if pc.BaseURL == "" {
		s.refuse(w, x, http.StatusBadGateway, TypeUpstream, fmt.Sprintf("finrepro proxy: no upstream for provider %q: give --upstream %s=URL", x.rt.provider, x.rt.provider))
		x.log.Outcome = outcomeFailed
		return false
	}
	base := strings.TrimRight(pc.BaseURL, "/")
	if v := x.rt.version; v != "" {
		// Ask in the client's Gemini API version.
		if b, ok := strings.CutSuffix(base, "/v1beta"); ok {
			base = b + "/" + v
		} else if b, ok := strings.CutSuffix(base, "/v1"); ok {
			base = b + "/" + v
		}
	}
	u := base + "/" + x.rt.endpoint
	if r.URL.RawQuery != "" {
		u += "?" + r.URL.RawQuery
	}
	method := http.MethodPost
	var body io.Reader = bytes.NewReader(x.body)
	if x.rt.get {
		method, body = http.MethodGet, nil
	}
	hr, err := http.NewRequestWithContext(r.Context(), method, u, body)
	if err != nil {
		s.refuse(w, x, http.StatusBadGateway, TypeUpstream, "finrepro proxy: "+err.Error())
		x.log.Outcome = outcomeFailed
		return false
	}
	copyRequestHeaders(hr.Header, r.Header)
	if err := s.client.Recordable(); err != nil {
		s.refuse(w, x, http.StatusBadGateway, TypeUpstream, "finrepro proxy: not sent, the cache takes no writes: "+err.Error())
		x.log.Outcome = outcomeFailed
		return false
	}
	release, err := s.client.Acquire(r.Context(), x.rt.provider, x.body)
	if err != nil {
		x.log.Outcome = outcomeCanceled
		return false
	}
	defer release()
	start := s.clock() // latency is a measurement of the real call, kept in meta only
	resp, err := s.http.Do(hr)
	if err != nil {
		s.refuse(w, x, http.StatusBadGateway, TypeUpstream, "finrepro proxy: upstream "+x.rt.provider+": "+err.Error())
		x.log.Outcome = outcomeFailed
		return false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.passThrough(w, x, resp)
		return false
	}
	meta := cache.Meta{
		Provider: x.rt.provider, Model: x.model, Attempts: 1, Source: cache.SourceAPI,
		Headers: provenance(resp.Header),
	}
	if s.cfg.Clock != nil {
		meta.RecordedAt = s.cfg.Clock().UTC().Format(time.RFC3339)
	}
	if meta.Model == "" {
		meta.Model = x.rt.provider // the cache wants a model; GETs have none
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return s.relayStream(w, x, resp, start, &meta)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, replay.MaxResponse+1))
	meta.LatencyMS = s.clock().Sub(start).Milliseconds()
	switch {
	case err != nil:
		s.fail(x, "reading the upstream answer: "+err.Error())
		panic(http.ErrAbortHandler) // the upstream broke off: so does the answer
	case len(b) > replay.MaxResponse:
		s.fail(x, fmt.Sprintf("upstream answer larger than %d bytes", replay.MaxResponse))
		panic(http.ErrAbortHandler)
	}
	why := s.keep(x, x.rt.kind, b, &meta)
	h := w.Header()
	setHeaders(h, meta.Headers)
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	how := "recorded"
	if why != "" {
		how = "not-stored"
		s.fail(x, why)
	}
	s.setKeyHeaders(h, x, how)
	w.WriteHeader(http.StatusOK)
	n, _ := w.Write(b) // a client gone is its own business
	x.log.Bytes, x.log.Status = n, http.StatusOK
	if x.rt.kind == replay.KindResponses {
		x.respID = responseID(b)
	}
	return why == ""
}

// keep stores one answer through the client's checks and store path
// (replay.Client.StoreAnswer); it returns why it did not.
func (s *Server) keep(x *exchange, kind replay.Kind, resp []byte, meta *cache.Meta) string {
	if ce := s.client.StoreAnswer(x.req, kind, resp, meta); ce != nil {
		return "not stored: " + ce.Error()
	}
	x.log.Outcome, x.log.CostUSD = outcomeRecorded, meta.CostUSD
	return ""
}

// fail marks x as failed, with a message.
func (s *Server) fail(x *exchange, msg string) {
	x.log.Outcome = outcomeFailed
	x.log.Error = s.client.Redact(msg)
	s.counts.logf("failed %s %s %s: %s", x.rt.provider, x.rt.endpoint, x.key.Str(), x.log.Error)
}

// relayStream relays an upstream event stream frame by frame, flushing
// each, and stores it once its terminal event has arrived; it reports
// whether it stored it. A stream that breaks off breaks off the answer
// too; one that ends without its terminal event, or carries an error
// event, reaches the client as it came and is not stored.
func (s *Server) relayStream(w http.ResponseWriter, x *exchange, resp *http.Response, start time.Time, meta *cache.Meta) bool {
	ct := resp.Header.Get("Content-Type")
	h := w.Header()
	setHeaders(h, meta.Headers)
	h.Set("Content-Type", ct)
	s.setKeyHeaders(h, x, "recorded")
	w.WriteHeader(http.StatusOK)
	x.log.Status = http.StatusOK
	fl, _ := w.(http.Flusher)
	fr := newFrameReader(resp.Body, replay.MaxResponse)
	g := grammar{family: x.rt.family}
	st := Stream{Version: StreamVersion, ContentType: ct}
	var readErr error
	for {
		f, err := fr.next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		if len(st.Frames) == MaxFrames {
			readErr = fmt.Errorf("more than %d events", MaxFrames)
			break
		}
		st.Frames = append(st.Frames, Frame{AtUS: s.clock().Sub(start).Microseconds(), Bytes: f})
		g.add(f)
		n, werr := w.Write(f)
		x.log.Bytes += n
		if werr != nil {
			readErr = fmt.Errorf("client gone: %v", werr)
			break
		}
		if fl != nil {
			fl.Flush()
		}
	}
	meta.LatencyMS = s.clock().Sub(start).Milliseconds()
	switch {
	case readErr != nil:
		s.fail(x, "stream broke off: "+readErr.Error())
		panic(http.ErrAbortHandler) // the client must not take a cut stream for a whole one
	case g.err != "":
		s.fail(x, "stream not stored: "+g.err)
		return false
	case !g.done:
		s.fail(x, "stream not stored: it ended without its terminal event")
		return false
	}
	meta.ReportedModel, meta.InputTokens, meta.OutputTokens = g.model, g.in, g.out
	b, err := json.Marshal(&st)
	if err != nil {
		s.fail(x, err.Error())
		return false
	}
	if why := s.keep(x, "", b, meta); why != "" {
		s.fail(x, why)
		return false
	}
	x.respID = g.responseID
	return true
}

// passThrough relays an upstream error answer as it came.
func (s *Server) passThrough(w http.ResponseWriter, x *exchange, resp *http.Response) {
	h := w.Header()
	for k, vs := range resp.Header {
		if hopByHop(k) || strings.EqualFold(k, "Content-Length") {
			continue
		}
		h[k] = vs
	}
	s.setKeyHeaders(h, x, "not-stored")
	w.WriteHeader(resp.StatusCode)
	n, _ := io.Copy(w, io.LimitReader(resp.Body, replay.MaxResponse)) // a client gone is its own business
	x.log.Bytes, x.log.Status = int(n), resp.StatusCode
	x.log.Outcome = outcomeUpstream
}
