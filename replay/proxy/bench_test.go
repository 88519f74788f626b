package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
)

// storeExchanges stores, for each of bodies request bodies, samples
// synthetic answers of about 200 + 17*repeat bytes, and returns the
// bodies and their answers by body and sample.
func storeExchanges(tb testing.TB, store *cache.Store, endpoint string, bodies, samples, repeat int) ([]string, map[string][][]byte) {
	tb.Helper()
	batch := store.NewBatch()
	var out []string
	answers := map[string][][]byte{}
	for i := range bodies {
		body := fmt.Sprintf(`{"model":"gpt-test","messages":[{"role":"user","content":"question %d"}]}`, i)
		out = append(out, body)
		for s := range samples {
			resp := fmt.Sprintf(`{"id":"chatcmpl-%d-%d","object":"chat.completion","model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":200}}`,
				i, s, strings.Repeat("synthetic answer ", repeat))
			raw, err := (&replay.Request{Provider: "openai", Endpoint: endpoint, Body: []byte(body), Sample: s}).Encode()
			if err != nil {
				tb.Fatal(err)
			}
			if _, _, err := batch.Add(&cache.Exchange{Request: raw, Response: []byte(resp), Meta: cache.Meta{Source: cache.SourceSim}}); err != nil {
				tb.Fatal(err)
			}
			answers[body] = append(answers[body], []byte(resp))
		}
	}
	if err := batch.Flush(); err != nil {
		tb.Fatal(err)
	}
	return out, answers
}

// offlineHandler is an offline proxy over dir.
func offlineHandler(tb testing.TB, dir string) *Server {
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	srv, err := New(Config{Client: replay.New(store, replay.Config{})})
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// hammer sends n POSTs to url from clients goroutines, the i-th with
// body(i) and run header run(i), and returns the latencies, sorted.
func hammer(tb testing.TB, url string, n, clients int, body func(int) string, run func(int) string) []time.Duration {
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	lat := make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				req, _ := http.NewRequest("POST", url, strings.NewReader(body(i)))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(HeaderRun, run(i))
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err != nil {
					tb.Error(err)
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if err != nil || resp.StatusCode != 200 {
					tb.Errorf("status %d %v", resp.StatusCode, err)
					return
				}
			}
		})
	}
	wg.Wait()
	slices.Sort(lat)
	return lat
}

// BenchmarkOfflineHits measures 64 concurrent clients answered from the
// cache by the proxy against the same clients going through a plain
// httputil.ReverseProxy to an upstream that serves the same bytes from
// memory, in the same run: requests per second and p50/p99 latency of
// each, and the throughput ratio proxy/pass-through (1 or more: the
// proxy is at least as fast).
func BenchmarkOfflineHits(b *testing.B) {
	const clients, bodies = 64, 256
	dir := b.TempDir()
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	reqs, answers := storeExchanges(b, store, "chat/completions", bodies, 1, 50)
	store.Close()
	prox := httptest.NewServer(offlineHandler(b, dir))
	defer prox.Close()
	mem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answers[string(body)][0])
	}))
	defer mem.Close()
	target, _ := url.Parse(mem.URL)
	rp := httptest.NewServer(httputil.NewSingleHostReverseProxy(target))
	defer rp.Close()
	body := func(i int) string { return reqs[i%bodies] }
	// Each request is its own run's first occurrence: sample 0 always.
	iter := 0
	run := func(i int) string { return fmt.Sprint(iter, "-", i/bodies) }
	var proxyDur, rpDur time.Duration
	var proxyLat, rpLat []time.Duration
	b.ResetTimer()
	for range b.N {
		iter++
		t0 := time.Now()
		rpLat = hammer(b, rp.URL+"/v1/chat/completions", 20000, clients, body, run)
		rpDur += time.Since(t0)
		t0 = time.Now()
		proxyLat = hammer(b, prox.URL+"/v1/chat/completions", 20000, clients, body, run)
		proxyDur += time.Since(t0)
	}
	b.StopTimer()
	n := float64(20000 * b.N)
	b.ReportMetric(n/proxyDur.Seconds(), "proxy-req/s")
	b.ReportMetric(n/rpDur.Seconds(), "passthrough-req/s")
	b.ReportMetric(rpDur.Seconds()/proxyDur.Seconds(), "throughput-ratio")
	b.ReportMetric(float64(proxyLat[len(proxyLat)/2].Microseconds()), "proxy-p50-µs")
	b.ReportMetric(float64(proxyLat[len(proxyLat)*99/100].Microseconds()), "proxy-p99-µs")
	b.ReportMetric(float64(rpLat[len(rpLat)/2].Microseconds()), "passthrough-p50-µs")
	b.ReportMetric(float64(rpLat[len(rpLat)*99/100].Microseconds()), "passthrough-p99-µs")
}

// BenchmarkStreamReplay replays a stored 1 MB stream of 2,000 frames
// (chat-completion chunks of 512 bytes, whose quotes the stored JSON
// escapes) with collapsed timing against the test upstream writing the
// same frames from memory, each flushed, in the same run; the ratio is
// replay time over upstream time (the target is 2 or less).
func BenchmarkStreamReplay(b *testing.B) {
	const head = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"m","choices":[{"index":0,"delta":{"content":"`
	const tail = `"},"finish_reason":null}]}` + "\n\n"
	frame := head + strings.Repeat("x", 512-len(head)-len(tail)) + tail
	st := Stream{Version: StreamVersion, ContentType: "text/event-stream"}
	for i := range 2000 {
		st.Frames = append(st.Frames, Frame{AtUS: int64(i), Bytes: []byte(frame)})
	}
	st.Frames[1999].Bytes = []byte("data: [DONE]\n\n")
	dir := b.TempDir()
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		b.Fatal(err)
	}
	body := `{"model":"m","stream":true,"messages":[]}`
	raw, _ := (&replay.Request{Provider: "openai", Endpoint: "chat/completions", Body: []byte(body)}).Encode()
	enc, _ := json.Marshal(&st)
	if _, err := store.Put(&cache.Exchange{Request: raw, Response: enc, Meta: cache.Meta{Source: cache.SourceSim}}); err != nil {
		b.Fatal(err)
	}
	store.Close()
	prox := httptest.NewServer(offlineHandler(b, dir))
	defer prox.Close()
	mem := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher)
		for _, f := range st.Frames {
			w.Write(f.Bytes)
			fl.Flush()
		}
	}))
	defer mem.Close()
	get := func(u string) int {
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set(HeaderRun, fmt.Sprint(time.Now().UnixNano()))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, _ := io.Copy(io.Discard, resp.Body)
		return int(n)
	}
	var proxyDur, upDur time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		n1 := get(mem.URL + "/v1/chat/completions")
		upDur += time.Since(t0)
		t0 = time.Now()
		n2 := get(prox.URL + "/v1/chat/completions")
		proxyDur += time.Since(t0)
		if n1 != n2 || n1 < 1_000_000 {
			b.Fatalf("upstream %d bytes, replay %d", n1, n2)
		}
	}
	b.ReportMetric(float64(proxyDur.Microseconds())/float64(b.N), "replay-µs/stream")
	b.ReportMetric(float64(upDur.Microseconds())/float64(b.N), "upstream-µs/stream")
	b.ReportMetric(proxyDur.Seconds()/upDur.Seconds(), "time-ratio")
}

// memoryFlat answers n requests offline (n/100 distinct bodies, 100
// samples each, every one a hit) and returns the live heap after the
// first tenth of them and after all.
func memoryFlat(tb testing.TB, n int) (h1, h2 uint64) {
	dir := tb.TempDir()
	store, err := cache.Open(dir, cache.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	bodies := n / 100
	reqs, _ := storeExchanges(tb, store, "chat/completions", bodies, 100, 1)
	store.Close()
	srv := offlineHandler(tb, dir)
	var w discardWriter
	serve := func(i int) {
		r := httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(reqs[i%bodies]))
		w.h = http.Header{}
		srv.ServeHTTP(&w, r)
		if w.status != 200 {
			tb.Fatalf("request %d: status %d", i, w.status)
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for i := range n / 10 {
		serve(i)
	}
	h1 = heap()
	for i := n / 10; i < n; i++ {
		serve(i)
	}
	h2 = heap()
	if c := srv.Counts(); c.Hits != n {
		tb.Fatalf("counts %+v", c)
	}
	return h1, h2
}

// TestMemoryFlat checks over 20,000 requests that the live heap after
// them is within 4 MB of the heap after the first 2,000: nothing grows
// per request beyond one counter per distinct request of a run.
// BenchmarkMemory does the same over 100,000.
func TestMemoryFlat(t *testing.T) {
	h1, h2 := memoryFlat(t, 20000)
	if h2 > h1+4<<20 {
		t.Fatalf("heap grew from %d to %d bytes over 18,000 requests", h1, h2)
	}
}

// BenchmarkMemory reports the live heap after 10,000 and after 100,000
// offline requests.
func BenchmarkMemory(b *testing.B) {
	for range b.N {
		h1, h2 := memoryFlat(b, 100000)
		b.ReportMetric(float64(h1)/1e6, "heap-MB-at-10k")
		b.ReportMetric(float64(h2)/1e6, "heap-MB-at-100k")
	}
}

// discardWriter is a ResponseWriter that keeps the status only.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(s int)           { w.status = s }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
