package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"

	"github.com/finrepro/finrepro/replay"
)

// openaiBatch is the part of an OpenAI batch object finrepro reads.
type openaiBatch struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	OutputFileID string `json:"output_file_id"`
	ErrorFileID  string `json:"error_file_id"`
	Counts       struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"request_counts"`
	Errors *struct {
		Data []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"data"`
	} `json:"errors"`
}

// openaiCreate uploads the input file and creates the batch.
func (e *endpoint) openaiCreate(ctx context.Context, b *Batch, lines []line) error {
	var file bytes.Buffer
	for _, l := range lines {
		file.Write(l.wire)
		file.WriteByte('\n')
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("purpose", "batch") // writes to a buffer: cannot fail
	fw, _ := mw.CreateFormFile("file", "finrepro-"+b.Local+".jsonl")
	fw.Write(file.Bytes())
	mw.Close()
	var f struct {
		ID string `json:"id"`
	}
	if err := e.call(ctx, "POST", "/files", mw.FormDataContentType(), form.Bytes(), &f); err != nil {
		return err
	}
	if f.ID == "" {
		return fmt.Errorf("batch: POST /files: answer has no file id")
	}
	b.InputFile = f.ID
	req, _ := json.Marshal(map[string]any{
		"input_file_id": f.ID, "endpoint": "/v1/" + lines[0].endpoint, "completion_window": "24h",
		"metadata": map[string]string{"finrepro_local": b.Local},
	})
	var ob openaiBatch
	if err := e.call(ctx, "POST", "/batches", "application/json", req, &ob); err != nil {
		return err
	}
	if ob.ID == "" {
		return fmt.Errorf("batch: POST /batches: answer has no batch id")
	}
	b.ID = ob.ID
	e.openaiUpdate(b, &ob)
	return nil
}

func (e *endpoint) openaiUpdate(b *Batch, ob *openaiBatch) {
	b.Status = ob.Status
	b.OutputFile, b.ErrorFile = ob.OutputFileID, ob.ErrorFileID
	c := ob.Counts
	b.Counts = Counts{Total: c.Total, Succeeded: c.Completed, Errored: c.Failed}
	if !OpenAI.ended(ob.Status) {
		b.Counts.Processing = max(0, c.Total-c.Completed-c.Failed)
	}
}

// openaiFailure describes why an OpenAI batch failed as a whole.
func openaiFailure(ob *openaiBatch) string {
	if ob.Errors == nil {
		return ""
	}
	var parts []string
	for _, d := range ob.Errors.Data {
		parts = append(parts, d.Code+": "+d.Message)
	}
	return strings.Join(parts, "; ")
}

func (e *endpoint) openaiRetrieve(ctx context.Context, b *Batch) (string, error) {
	var ob openaiBatch
	if err := e.call(ctx, "GET", "/batches/"+url.PathEscape(b.ID), "", nil, &ob); err != nil {
		return "", err
	}
	e.openaiUpdate(b, &ob)
	return openaiFailure(&ob), nil
}

func (e *endpoint) openaiCancel(ctx context.Context, b *Batch) error {
	var ob openaiBatch
	if err := e.call(ctx, "POST", "/batches/"+url.PathEscape(b.ID)+"/cancel", "", nil, &ob); err != nil {
		return err
	}
	e.openaiUpdate(b, &ob)
	return nil
}

// openaiFiles are the result files of an ended batch.
func openaiFiles(b *Batch) []string {
	var out []string
	for _, f := range []string{b.OutputFile, b.ErrorFile} {
		if f != "" {
			out = append(out, "/files/"+url.PathEscape(f)+"/content")
		}
	}
	return out
}

// openaiLine is one line of an OpenAI output or error file.
type openaiLine struct {
	CustomID string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// parseOpenAILine reads one output or error file line.
func parseOpenAILine(b []byte) (result, error) {
	var l openaiLine
	if err := decodeLenient(b, &l); err != nil {
		return result{}, err
	}
	if l.CustomID == "" {
		return result{}, fmt.Errorf("custom_id: missing")
	}
	r := result{id: l.CustomID}
	switch {
	case l.Error != nil && (l.Error.Code != "" || l.Error.Message != ""):
		cause := replay.CauseAPIError
		switch l.Error.Code {
		case "batch_expired":
			cause = CauseExpired
		case "batch_cancelled":
			cause = CauseCanceled
		}
		r.err = &replay.CallError{Cause: cause, Msg: strings.TrimSpace(l.Error.Code + ": " + l.Error.Message)}
	case l.Response == nil:
		r.err = &replay.CallError{Cause: replay.CauseMalformed, Msg: "neither response nor error"}
	case l.Response.StatusCode != 200:
		st := l.Response.StatusCode
		r.err = &replay.CallError{Cause: replay.StatusCause(st), Status: st, Msg: replay.Snippet(l.Response.Body)}
	case len(l.Response.Body) == 0:
		r.err = &replay.CallError{Cause: replay.CauseMalformed, Status: 200, Msg: "response without a body"}
	default:
		r.body = l.Response.Body
	}
	return r, nil
}
