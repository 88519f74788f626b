package replay

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache"
)

// This file holds the seams through which code that obtains responses
// by other channels than Client's own calls (replay/batch, which records
// through the providers' batch APIs) keys requests and stores their
// results with the client's checks.

// A KeyedRequest is a request object checked, its endpoint defaulted to
// its provider's, encoded and keyed.
type KeyedRequest struct {
	Request Request
	// Raw is the encoded request object; Key its cache key.
	Raw []byte
	Key cache.Key
	// Model is the requested model.
	Model string
}

// Keyed returns r keyed. It fails as AnswerRequests would on a request
// it cannot key.
func (c *Client) Keyed(r Request) (KeyedRequest, error) {
	j, err := c.newJob(r)
	if err != nil {
		return KeyedRequest{}, err
	}
	return KeyedRequest{Request: j.req, Raw: j.raw, Key: j.key, Model: j.requested()}, nil
}

// EncodeKey returns request object r encoded and its key, as the client
// keys a request (its endpoint and sample as they are).
func EncodeKey(r *Request) ([]byte, cache.Key, error) { return encodeKey(r) }

// Recordable probes the store's writability before the first call is
// sent, as recording does, and afterwards returns the first write the
// store refused: while it is not nil, nothing should be sent, since the
// answer could not be kept.
func (c *Client) Recordable() error {
	c.mu.Lock()
	probed := c.probed
	c.probed = true
	c.mu.Unlock()
	if !probed {
		if err := c.store.CheckWritable(); err != nil {
			c.setStoreErr(err)
		}
	}
	return c.StoreErr()
}

// StoreAnswer stores the 200 answer body to request r that code outside
// the client sent (the proxy) through a recording's checks and store
// path. A body of a provider kind must pass the response check (its
// shape, no error object, no refusal, and some output: text, tool calls,
// or a background response under way) and gives meta its reported model
// and token counts; with kind "" (a stream's record, an embeddings or
// model list answer) the body must be JSON without an error object. meta
// gets the answer's cost. An exchange holding a known API key is not
// stored, and a failed write is StoreErr (see Recordable). The error
// says why the answer was not stored; it is also one of Failures.
func (c *Client) StoreAnswer(r Request, kind Kind, body []byte, meta *cache.Meta) *CallError {
	raw, key, err := encodeKey(&r)
	if err != nil {
		return &CallError{Cause: CauseRequest, Msg: err.Error()}
	}
	j := &job{req: r, raw: raw, key: key, pc: ProviderConfig{Kind: kind}, model: meta.Model}
	if kind != "" {
		o, ce := checkOutput(kind, body, true)
		if ce != nil {
			c.fail(j, ce, meta.Attempts)
			return ce
		}
		meta.ReportedModel, meta.InputTokens, meta.OutputTokens = o.Model, o.InputTokens, o.OutputTokens
	} else if ce := checkJSON(body); ce != nil {
		c.fail(j, ce, meta.Attempts)
		return ce
	}
	meta.CostUSD = c.cost(meta.Model, &output{Model: meta.ReportedModel, InputTokens: meta.InputTokens, OutputTokens: meta.OutputTokens})
	if err := c.put(j, body, *meta); err != nil {
		return err.(*CallError)
	}
	return nil
}

// checkJSON rejects a body of no provider shape that is not JSON, or is
// an object with a non-null "error" member or of type "error".
func checkJSON(body []byte) *CallError {
	if !json.Valid(body) || !utf8.Valid(body) {
		return &CallError{Cause: CauseMalformed, Status: http.StatusOK, Msg: "the answer is not UTF-8 JSON: " + Snippet(body)}
	}
	var v struct {
		errorMember
		Type string `json:"type"`
	}
	if unmarshalObject(body, &v) != nil {
		return nil // a JSON array or scalar has no error member
	}
	if e := v.apiError(body); e != "" || v.Type == "error" {
		return &CallError{Cause: CauseAPIError, Status: http.StatusOK, Msg: cmp.Or(e, Snippet(body))}
	}
	return nil
}

// SetAuth sets the authentication headers a provider of the given kind
// expects for key (and Anthropic's version header).
func SetAuth(h http.Header, kind Kind, key string) { setAuth(h, kind, key) }

// A Result is the outcome of one request obtained outside the client,
// for StoreResults.
type Result struct {
	// Request is the request object as Keyed takes it.
	Request Request
	// Body is the provider's 200 response body; nil when Err is set.
	Body []byte
	// Err says why the request has no response.
	Err *CallError
	// Source is the exchange's source ("batch").
	Source string
	// BatchID names the provider's batch the result came from.
	BatchID string
	// CostFactor multiplies the list price (BatchDiscount for batches).
	CostFactor float64
	// RecordedAt is the exchange's recorded_at (RFC 3339), or empty.
	RecordedAt string
}

// StoreResults checks every result as a recording checks a response
// (shape, error object, refusal, empty output, API keys) and stores the
// good ones in one pack, durable when it returns. The i-th error says why
// rs[i] was not stored (its Err, or the failed check), nil when it was
// stored or its key already was; every such failure is also a failure of
// c (see Failures). The exchanges were not sent by c, so Counts and
// SpentUSD leave them out. The error returned beside them is the store's:
// then nothing of this call is durable.
func (c *Client) StoreResults(rs []Result) ([]*CallError, error) {
	b := c.store.NewBatch()
	errs := make([]*CallError, len(rs))
	for i := range rs {
		r := &rs[i]
		j, err := c.newJob(r.Request)
		if err != nil {
			errs[i] = c.badRequest(r.Request, err).(*CallError)
			continue
		}
		ce := r.Err
		var o *output
		if ce == nil {
			o, ce = checkBody(j.pc.Kind, r.Body)
		}
		body := bytes.TrimSpace(r.Body)
		if ce == nil && c.findSecret(j.raw, body) {
			ce = &CallError{Cause: CauseSecret, Msg: "an API key appears in the exchange; not stored"}
		}
		if ce != nil {
			c.fail(j, ce, 1)
			errs[i] = ce
			continue
		}
		cost := c.cost(j.requested(), o) * r.CostFactor
		meta := cache.Meta{
			Provider: j.req.Provider, Model: j.requested(), ReportedModel: o.Model,
			InputTokens: o.InputTokens, OutputTokens: o.OutputTokens, CostUSD: cost,
			Attempts: 1, Source: r.Source, BatchID: r.BatchID, RecordedAt: r.RecordedAt,
		}
		if _, _, err := b.Add(&cache.Exchange{Request: j.raw, Response: body, Meta: meta}); err != nil {
			ce := &CallError{Cause: CauseStore, Msg: err.Error()}
			c.fail(j, ce, 1)
			errs[i] = ce
			continue
		}
		c.checkDrift(j, o.Model)
	}
	if err := b.Flush(); err != nil {
		return errs, fmt.Errorf("replay: store results: %w", err)
	}
	return errs, nil
}

// BatchCustomID is the custom_id of a request in an OpenAI Batch API
// input file: "finrepro-s<sample>-<key hex>", which ParseBatchCustomID
// reads back.
func BatchCustomID(sample int, key cache.Key) string {
	return batchIDPrefix + strconv.Itoa(sample) + "-" + key.String()
}

// ParseBatchCustomID reads the sample index and the key digits of a
// BatchCustomID; ok is false for any other custom_id.
func ParseBatchCustomID(id string) (sample int, key string, ok bool) {
	rest, ok := strings.CutPrefix(id, batchIDPrefix)
	if !ok {
		return 0, "", false
	}
	num, key, ok := strings.Cut(rest, "-")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return 0, "", false
	}
	return n, key, true
}

// RetryAfter reads a response's Retry-After (seconds or an HTTP date
// relative to now) or retry-after-ms header; 0 when it has none.
func RetryAfter(h http.Header, now time.Time) time.Duration { return parseRetryAfter(h, now) }
