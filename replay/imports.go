package replay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/finrepro/finrepro/results"
)

// BatchDiscount is the share of the list price the OpenAI Batch API and
// Anthropic's Message Batches charge (both document 50 %).
const BatchDiscount = 0.5

// batchIDPrefix starts the custom_id of exported batch lines:
// "finrepro-s<sample>-<key hex>".
const batchIDPrefix = "finrepro-s"

// A batchInput is one line of an OpenAI Batch API input file.
type batchInput struct {
	CustomID string          `json:"custom_id"`
	Method   string          `json:"method"`
	URL      string          `json:"url"`
	Body     json.RawMessage `json:"body"`
}

// A batchOutput is one line of an OpenAI Batch API output file.
type batchOutput struct {
	ID       string `json:"id"`
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		RequestID  string          `json:"request_id"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error json.RawMessage `json:"error"`
}

// BatchLine is the OpenAI Batch API input line (without its newline) of
// request r of key: its BatchCustomID, POST, its endpoint and body.
func BatchLine(r *Request, key cache.Key) ([]byte, error) {
	return json.Marshal(batchInput{CustomID: BatchCustomID(r.Sample, key), Method: "POST", URL: "/v1/" + r.Endpoint, Body: r.Body})
}

// WriteBatch writes the misses whose provider speaks Chat Completions or
// Responses as OpenAI Batch API input lines, in order, and returns how
// many it wrote and skipped (other kinds have no batch API here).
func WriteBatch(w io.Writer, misses []Miss, providers ...map[string]ProviderConfig) (written, skipped int, err error) {
	pcs := mergeProviders(providers...)
	bw := bufio.NewWriter(w)
	for _, m := range misses {
		var r Request
		if err := json.Unmarshal(m.Request, &r); err != nil {
			return written, skipped, fmt.Errorf("replay: batch: request %.8s: %w", m.Key, err)
		}
		k := pcs[r.Provider].Kind
		if k != KindChat && k != KindResponses {
			skipped++
			continue
		}
		key, err := reqkey.Parse(m.Key)
		if err != nil {
			return written, skipped, fmt.Errorf("replay: batch: request %.8s: %w", m.Key, err)
		}
		line, err := BatchLine(&r, key)
		if err != nil {
			return written, skipped, fmt.Errorf("replay: batch: %w", err)
		}
		bw.Write(line)
		bw.WriteByte('\n')
		written++
	}
	return written, skipped, bw.Flush()
}

// ImportBatch stores the successful results of an OpenAI Batch API run:
// input holds the request lines (as WriteBatch writes them, or the user's
// own), output the result lines. Requests are keyed under provider, with
// the sample index read from a finrepro custom_id (0 otherwise). Failed
// or unusable results are counted in Failures; lines that do not parse are
// an *results.InputError. It returns the number of exchanges stored.
func (c *Client) ImportBatch(input io.Reader, inputName string, output io.Reader, outputName, provider string) (int, error) {
	pc, ok := c.providers[provider]
	if !ok {
		return 0, fmt.Errorf("replay: batch import: unknown provider %q", provider)
	}
	if pc.Kind != KindChat && pc.Kind != KindResponses {
		return 0, fmt.Errorf("replay: batch import: provider %q speaks %s, not an OpenAI API", provider, pc.Kind)
	}
	reqs := map[string]Request{}
	err := results.EachJSONL(input, inputName, func(line int, b *batchInput) error {
		if b.CustomID == "" {
			return results.Errorf(inputName, line, "custom_id", "empty")
		}
		if _, dup := reqs[b.CustomID]; dup {
			return results.Errorf(inputName, line, "custom_id", "%q repeated", b.CustomID)
		}
		ep, ok := strings.CutPrefix(b.URL, "/v1/")
		if !ok {
			return results.Errorf(inputName, line, "url", "%q does not start with /v1/", b.URL)
		}
		r := Request{Provider: provider, Endpoint: ep, Body: b.Body, Sample: sampleOfID(b.CustomID)}
		r.Label = results.Label{Benchmark: inputName, Task: strconv.Itoa(line), Role: RoleRequest, Name: b.CustomID}
		if _, err := c.newJob(r); err != nil {
			return results.Errorf(inputName, line, "", "%v", err)
		}
		reqs[b.CustomID] = r
		return nil
	})
	if err != nil {
		return 0, err
	}
	// Results are stored a chunk at a time, so that memory holds a chunk
	// of responses, not the whole output file.
	var rs []Result
	n := 0
	store := func() error {
		errs, err := c.StoreResults(rs)
		for _, e := range errs {
			if e == nil && err == nil {
				n++
			}
		}
		rs = rs[:0]
		return err
	}
	err = results.EachJSONL(output, outputName, func(line int, b *batchOutput) error {
		r, ok := reqs[b.CustomID]
		if !ok {
			return results.Errorf(outputName, line, "custom_id", "%q is not in %s", b.CustomID, inputName)
		}
		res := Result{Request: r, Source: results.SourceImport, CostFactor: BatchDiscount}
		switch {
		case b.Response == nil:
			res.Err = &CallError{Cause: CauseAPIError, Msg: "batch error: " + Snippet(b.Error)}
		case b.Response.StatusCode != 200:
			res.Err = &CallError{Cause: StatusCause(b.Response.StatusCode), Status: b.Response.StatusCode, Msg: Snippet(b.Response.Body)}
		default:
			res.Body = b.Response.Body
		}
		rs = append(rs, res)
		if len(rs) == importChunk {
			return store()
		}
		return nil
	})
	if err == nil {
		err = store()
	}
	return n, err
}

// importChunk is how many results ImportBatch stores per pack.
const importChunk = 500

// StatusCause classifies the HTTP status of a failed response.
func StatusCause(st int) Cause {
	switch {
	case st == 429:
		return CauseRateLimited
	case st == 408:
		return CauseTimeout
	case st >= 500:
		return CauseServer
	}
	return CauseHTTP
}

// sampleOfID is the sample index of a BatchCustomID, 0 for another
// custom_id.
func sampleOfID(id string) int {
	n, _, _ := ParseBatchCustomID(id)
	return n
}

// put stores an exchange after the secret check, recording a failure on
// error.
func (c *Client) put(j *job, response []byte, meta cache.Meta) error {
	if c.findSecret(j.raw, response, []byte(meta.Headers)) {
		ce := &CallError{Cause: CauseSecret, Msg: "an API key appears in the exchange; not stored"}
		c.fail(j, ce, meta.Attempts)
		return ce
	}
	x := &cache.Exchange{Request: j.raw, Response: response, Meta: meta}
	if j.stream != nil {
		j.stream.hold(j, x) // stored in key order with the batch's other simulated exchanges
		return nil
	}
	k, err := c.store.Put(x)
	if err != nil {
		c.setStoreErr(err)
		ce := &CallError{Cause: CauseStore, Msg: err.Error()}
		c.fail(j, ce, meta.Attempts)
		return ce
	}
	return c.checkStoredKey(j, k, meta.Attempts)
}

// checkStoredKey fails j when the store keyed its request as k, another
// key than the one j was looked up by (which would be a fault of the
// keys built from a prompt's values): the exchange would never replay.
func (c *Client) checkStoredKey(j *job, k cache.Key, attempts int) error {
	if k == j.key {
		return nil
	}
	ce := &CallError{Cause: CauseRequest, Msg: fmt.Sprintf("the store keyed the request %s, not %s as computed from its prompt", k.Str(), j.key.Str())}
	c.fail(j, ce, attempts)
	return ce
}

// A Provenance says where a hand-collected report came from.
type Provenance struct {
	// Where is the product or web interface ("chatgpt.com deep research").
	Where string `json:"where"`
	// When is the collection date or time (RFC 3339 or YYYY-MM-DD).
	When string `json:"when"`
	// ProductVersion is the product or model version shown to the user.
	ProductVersion string `json:"product_version"`
	// File is the report's file name as collected.
	File string `json:"file,omitempty"`
}

// ImportReport stores text, a report collected by hand for prompt p, as the
// answer to p (source "import"), so that a benchmark asking p replays it.
// The response is written in p's provider shape with the provenance under
// "finrepro_import". An existing exchange for p is left alone and reported
// as an error.
func (c *Client) ImportReport(p results.Prompt, text string, prov Provenance) (cache.Key, error) {
	pc, ok := c.providers[p.Provider]
	if !ok {
		return cache.Key{}, fmt.Errorf("replay: import report: unknown provider %q", p.Provider)
	}
	if strings.TrimSpace(text) == "" {
		return cache.Key{}, fmt.Errorf("replay: import report %s: empty report", prov.File)
	}
	if prov.Where == "" || prov.When == "" || prov.ProductVersion == "" {
		return cache.Key{}, fmt.Errorf("replay: import report %s: provenance needs where, when and product_version", prov.File)
	}
	r, err := requestOf(p, pc.Kind)
	if err != nil {
		return cache.Key{}, err
	}
	j, err := c.newJob(*r)
	if err != nil {
		return cache.Key{}, err
	}
	if has, err := c.store.Has(j.key); err != nil {
		return j.key, fmt.Errorf("replay: import report %s: %w", j.key.Str(), err)
	} else if has {
		return j.key, fmt.Errorf("replay: import report %s: already stored", j.key.Str())
	}
	body, err := syntheticResponse(pc.Kind, p.Model, text, prov)
	if err != nil {
		return j.key, err
	}
	meta := cache.Meta{Provider: p.Provider, Model: p.Model, ReportedModel: prov.ProductVersion, Source: results.SourceImport, RecordedAt: prov.When}
	if err := c.put(j, body, meta); err != nil {
		return j.key, err
	}
	return j.key, nil
}

// syntheticResponse writes text as a response body of the given kind.
func syntheticResponse(kind Kind, model, text string, prov Provenance) ([]byte, error) {
	var v map[string]any
	switch kind {
	case KindChat, KindSim:
		v = map[string]any{"object": "chat.completion", "model": model, "choices": []any{map[string]any{
			"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": "stop"}}}
	case KindResponses:
		v = map[string]any{"object": "response", "status": "completed", "model": model, "output": []any{map[string]any{
			"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "output_text", "text": text}}}}}
	case KindAnthropic:
		v = map[string]any{"type": "message", "role": "assistant", "model": model, "stop_reason": "end_turn",
			"content": []any{map[string]any{"type": "text", "text": text}}}
	case KindGemini:
		v = map[string]any{"modelVersion": model, "candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}, "finishReason": "STOP"}}}
	default:
		return nil, fmt.Errorf("replay: import: unknown provider kind %q", kind)
	}
	v["finrepro_import"] = prov
	return json.Marshal(v)
}
