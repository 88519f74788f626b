package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
)

// anthropicID is the custom_id of a request in a Message Batch, which
// allows 64 characters of [a-zA-Z0-9_-]: "s<sample>-" and as much of the
// key as fits (at least 43 of its 64 hex digits, whatever the sample;
// create refuses two requests of a batch with one custom_id, and the
// state maps it back to the whole key).
func anthropicID(sample int, key cache.Key) string {
	p := "s" + strconv.Itoa(sample) + "-"
	return p + key.String()[:64-len(p)]
}

// anthropicRequest is one request of a Message Batch create body.
type anthropicRequest struct {
	CustomID string          `json:"custom_id"`
	Params   json.RawMessage `json:"params"`
}

// anthropicBatch is the part of a Message Batch object finrepro reads.
type anthropicBatch struct {
	ID     string `json:"id"`
	Status string `json:"processing_status"`
	Counts struct {
		Processing int `json:"processing"`
		Succeeded  int `json:"succeeded"`
		Errored    int `json:"errored"`
		Canceled   int `json:"canceled"`
		Expired    int `json:"expired"`
	} `json:"request_counts"`
}

func (e *endpoint) anthropicCreate(ctx context.Context, b *Batch, lines []line) error {
	reqs := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		reqs[i] = l.wire
	}
	body, err := json.Marshal(map[string]any{"requests": reqs})
	if err != nil {
		return fmt.Errorf("batch: create body: %w", err)
	}
	var ab anthropicBatch
	if err := e.call(ctx, "POST", "/messages/batches", "application/json", body, &ab); err != nil {
		return err
	}
	if ab.ID == "" {
		return fmt.Errorf("batch: POST /messages/batches: answer has no batch id")
	}
	b.ID = ab.ID
	anthropicUpdate(b, &ab)
	return nil
}

func anthropicUpdate(b *Batch, ab *anthropicBatch) {
	c := ab.Counts
	b.Status = ab.Status
	b.Counts = Counts{
		Total:      c.Processing + c.Succeeded + c.Errored + c.Canceled + c.Expired,
		Processing: c.Processing, Succeeded: c.Succeeded, Errored: c.Errored, Canceled: c.Canceled, Expired: c.Expired,
	}
}

func (e *endpoint) anthropicRetrieve(ctx context.Context, b *Batch) error {
	var ab anthropicBatch
	if err := e.call(ctx, "GET", "/messages/batches/"+url.PathEscape(b.ID), "", nil, &ab); err != nil {
		return err
	}
	anthropicUpdate(b, &ab)
	return nil
}

func (e *endpoint) anthropicCancel(ctx context.Context, b *Batch) error {
	var ab anthropicBatch
	if err := e.call(ctx, "POST", "/messages/batches/"+url.PathEscape(b.ID)+"/cancel", "", nil, &ab); err != nil {
		return err
	}
	anthropicUpdate(b, &ab)
	return nil
}

// anthropicLine is one line of a Message Batch's results.
type anthropicLine struct {
	CustomID string `json:"custom_id"`
	Result   struct {
		Type    string          `json:"type"`
		Message json.RawMessage `json:"message"`
		Error   json.RawMessage `json:"error"`
	} `json:"result"`
}

// parseAnthropicLine reads one results line.
func parseAnthropicLine(b []byte) (result, error) {
	var l anthropicLine
	if err := decodeLenient(b, &l); err != nil {
		return result{}, err
	}
	if l.CustomID == "" {
		return result{}, fmt.Errorf("custom_id: missing")
	}
	r := result{id: l.CustomID}
	switch l.Result.Type {
	case "succeeded":
		if len(l.Result.Message) == 0 {
			return result{}, fmt.Errorf("result.message: missing")
		}
		r.body = l.Result.Message
	case "errored":
		r.err = &replay.CallError{Cause: replay.CauseAPIError, Msg: replay.Snippet(l.Result.Error)}
	case "canceled":
		r.err = &replay.CallError{Cause: CauseCanceled, Msg: "the batch was canceled before this request ran"}
	case "expired":
		r.err = &replay.CallError{Cause: CauseExpired, Msg: "the batch expired before this request ran"}
	default:
		return result{}, fmt.Errorf("result.type: %q, want succeeded, errored, canceled or expired", l.Result.Type)
	}
	return r, nil
}
