package batch

import (
	"bufio"
	"bytes"
	"context"
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

// An API is a provider's batch API.
type API string

// Batch APIs.
const (
	OpenAI    API = "openai"    // OpenAI Batch API, for chat and responses providers
	Anthropic API = "anthropic" // Anthropic Message Batches
)

// Limits bound one batch.
type Limits struct {
	// Requests is the most requests in one batch.
	Requests int
	// Bytes is the largest OpenAI input file or Anthropic create body.
	Bytes int64
}

// Documented limits (docs/batch.md cites them): OpenAI, "up to 50,000
// requests, and can be up to 200 MB in size" per input file; Anthropic,
// 100,000 requests or 256 MB per batch. Megabytes are taken as 10^6 bytes,
// the smaller reading.
var (
	OpenAILimits    = Limits{Requests: 50_000, Bytes: 200_000_000}
	AnthropicLimits = Limits{Requests: 100_000, Bytes: 256_000_000}
)

// APIOf returns the batch API of a provider kind, false when it has none.
func APIOf(k replay.Kind) (API, bool) {
	switch k {
	case replay.KindChat, replay.KindResponses:
		return OpenAI, true
	case replay.KindAnthropic:
		return Anthropic, true
	}
	return "", false
}

// Limits returns the API's documented limits.
func (a API) Limits() Limits {
	if a == Anthropic {
		return AnthropicLimits
	}
	return OpenAILimits
}

// ended reports whether a batch's status is final: no more results come.
func (a API) ended(status string) bool {
	switch status {
	case "completed", "failed", "expired", "cancelled", "ended":
		return true
	}
	return false
}

// Causes of batch failures, beside replay's.
const (
	CauseExpired  replay.Cause = "batch_expired"   // the batch's 24 hours ran out first
	CauseCanceled replay.Cause = "batch_canceled"  // the batch was cancelled first
	CauseFailed   replay.Cause = "batch_failed"    // the provider rejected the whole batch
	CauseNoResult replay.Cause = "batch_no_result" // the ended batch returned nothing for it
	CauseUnknown  replay.Cause = "batch_unknown"   // a result line the batch does not hold
)

// A line is one request of a batch being created.
type line struct {
	id       string // custom_id
	key      cache.Key
	raw      []byte // the request object, for the state's requests file
	wire     []byte // the line as sent: an input-file line or a create-body element
	endpoint string // the OpenAI endpoint of its input file
}

// A result is one result line of a batch: a 200 body, or why none.
type result struct {
	id   string
	body []byte
	err  *replay.CallError
}

// An endpoint speaks one provider's batch API at one base URL.
type endpoint struct {
	api     API
	kind    replay.Kind
	baseURL string
	key     string
	http    *http.Client
	redact  func(string) string
	sleep   func(context.Context, time.Duration) error
	backoff *replay.Backoff
	now     func() time.Time // Config.Clock, or the wall clock
}

// attempts bounds the attempts of a request that is safe to repeat (GETs
// and file uploads; never a batch create or cancel); the waits between
// them are the replay client's (replay.Backoff).
const attempts = 4

// retryable reports whether a request may be sent again after a 429, a
// 5xx or a connection error: repeating it creates nothing twice.
func retryable(method, path string) bool { return method == "GET" || path == "/files" }

// maxControl caps a control response (a batch or file object).
const maxControl = 4 << 20

// controlTimeout bounds one control call (an upload of up to 256 MB
// included).
const controlTimeout = 10 * time.Minute

// call sends one control request and decodes a 200 JSON answer into v.
func (e *endpoint) call(ctx context.Context, method, path, contentType string, body []byte, v any) error {
	ctx, cancel := context.WithTimeout(ctx, controlTimeout)
	defer cancel()
	resp, err := e.send(ctx, method, path, contentType, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxControl+1))
	if err != nil {
		return fmt.Errorf("batch: %s %s: reading answer: %w", method, path, err)
	}
	if len(b) > maxControl {
		return fmt.Errorf("batch: %s %s: answer larger than %d bytes", method, path, maxControl)
	}
	if err := decodeLenient(b, v); err != nil {
		return fmt.Errorf("batch: %s %s: %v: %s", method, path, err, e.snippet(b))
	}
	return nil
}

// send sends a request and returns a 200 response; any other status is
// an error carrying the start of the body. A request that is safe to
// repeat is retried after a 429, a 5xx or a connection error.
func (e *endpoint) send(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, error) {
	for n := 1; ; n++ {
		resp, retryAfter, err := e.sendOnce(ctx, method, path, contentType, body)
		if err == nil || n == attempts || !retryable(method, path) || ctx.Err() != nil {
			return resp, err
		}
		var he *httpStatusError
		if errors.As(err, &he) && he.status != http.StatusTooManyRequests && he.status < 500 {
			return nil, err
		}
		if serr := e.sleep(ctx, e.backoff.Delay(n, retryAfter)); serr != nil {
			return nil, err
		}
	}
}

// sendOnce makes one attempt of send, returning the Retry-After of a
// refused one.
func (e *endpoint) sendOnce(ctx context.Context, method, path, contentType string, body []byte) (*http.Response, time.Duration, error) {
	url := strings.TrimRight(e.baseURL, "/") + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("batch: %s %s: %w", method, path, err)
	}
	if contentType != "" {
		hr.Header.Set("Content-Type", contentType)
	}
	replay.SetAuth(hr.Header, e.kind, e.key)
	resp, err := e.http.Do(hr)
	if err != nil {
		return nil, 0, errors.New(e.redact(fmt.Sprintf("batch: %s %s: %v", method, path, err)))
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096)) // only for the message
		resp.Body.Close()
		// An HTTP-date Retry-After is relative to the wall clock.
		return nil, replay.RetryAfter(resp.Header, e.now()), &httpStatusError{resp.StatusCode,
			fmt.Sprintf("batch: %s %s: HTTP %d: %s", method, path, resp.StatusCode, e.snippet(b))}
	}
	return resp, 0, nil
}

func (e *endpoint) snippet(b []byte) string { return e.redact(replay.Snippet(b)) }

// maxResultLine caps one result line: a response as large as a recording
// accepts, with room for its envelope.
const maxResultLine = replay.MaxResponse + 1<<20

// errCut is a results download that ended before its last line did.
var errCut = errors.New("download cut short")

// stream reads the JSONL lines of a results download and calls fn with
// each. A read error or a last line without its newline that does not
// parse ends it with errCut; lines already handed to fn stay handled.
func stream(body io.Reader, parse func([]byte) (result, error), fn func(result) error) error {
	br := bufio.NewReaderSize(body, 1<<20)
	n := 0
	for {
		b, err := readLine(br)
		n++
		if len(bytes.TrimSpace(b)) > 0 {
			complete := len(b) > 0 && b[len(b)-1] == '\n'
			r, perr := parse(bytes.TrimSpace(b))
			if perr != nil {
				if !complete || err != nil {
					return fmt.Errorf("%w at line %d: %v", errCut, n, perr)
				}
				return fmt.Errorf("batch: results line %d: %v", n, perr)
			}
			if ferr := fn(r); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, errLong) {
			return fmt.Errorf("batch: results line %d: %w", n, err)
		}
		if err != nil {
			return fmt.Errorf("%w at line %d: %v", errCut, n, err)
		}
	}
}

// errLong is a results line longer than maxResultLine.
var errLong = fmt.Errorf("longer than %d bytes", maxResultLine)

// readLine reads one line, its newline included, of at most
// maxResultLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		frag, err := br.ReadSlice('\n')
		out = append(out, frag...)
		if len(out) > maxResultLine {
			return nil, errLong
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return out, err
		}
	}
}

// decodeLenient decodes a provider's JSON object, whose unknown fields
// (providers add them all the time) are ignored.
func decodeLenient(b []byte, v any) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(b, v)
}

// Estimate prices missing requests both ways: synchronously, as their
// CostUSD says, and with every request whose provider has a batch API at
// BatchDiscount of it. providers override the defaults, as in replay.
// Batchable counts the requests a batch API takes.
func Estimate(ms []replay.Miss, providers map[string]replay.ProviderConfig) (syncUSD, batchUSD float64, batchable int) {
	pcs := replay.DefaultProviders()
	for n, pc := range providers {
		pcs[n] = pc
	}
	for _, m := range ms {
		syncUSD += m.CostUSD
		if _, ok := APIOf(pcs[m.Provider].Kind); ok {
			batchUSD += m.CostUSD * replay.BatchDiscount
			batchable++
		} else {
			batchUSD += m.CostUSD
		}
	}
	return syncUSD, batchUSD, batchable
}
