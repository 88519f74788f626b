package proxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/finrepro/finrepro/replay"
)

// StreamVersion is the version of the stored stream format.
const StreamVersion = 1

// A Stream is a streamed response as stored: its Content-Type and its
// frames, byte for byte, in order. docs/proxy.md specifies the format:
//
//	{"finrepro_stream":1,"content_type":"text/event-stream","frames":[{"at_us":0,"data":"data: {...}\n\n"},...]}
//
// A frame is one server-sent event with the blank line that ends it;
// at_us is its arrival time in microseconds after the response headers.
// A frame that is not valid UTF-8 is stored as "b64" (standard base64)
// instead of "data", so that every byte survives.
type Stream struct {
	Version     int     `json:"finrepro_stream"`
	ContentType string  `json:"content_type"`
	Frames      []Frame `json:"frames"`
}

// A Frame is one event of a stream and its arrival offset.
type Frame struct {
	AtUS  int64  `json:"at_us"`
	Bytes []byte `json:"-"`
}

type frameJSON struct {
	AtUS int64   `json:"at_us"`
	Data *string `json:"data,omitempty"`
	B64  *string `json:"b64,omitempty"`
}

// MarshalJSON writes the frame's bytes as "data" when they are UTF-8 and
// as "b64" otherwise.
func (f Frame) MarshalJSON() ([]byte, error) {
	j := frameJSON{AtUS: f.AtUS}
	if utf8.Valid(f.Bytes) {
		s := string(f.Bytes)
		j.Data = &s
	} else {
		s := base64.StdEncoding.EncodeToString(f.Bytes)
		j.B64 = &s
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads a stored stream as ParseStream does, so that
// decoding a Stream with encoding/json applies the format's rules.
func (s *Stream) UnmarshalJSON(b []byte) error {
	p, err := ParseStream(b)
	if err != nil {
		return err
	}
	*s = *p
	return nil
}

// streamMarker starts every stored stream: a non-streamed JSON response
// never starts with it (provider bodies begin with their own members).
var streamMarker = []byte(`{"finrepro_stream":`)

// isStream reports whether a stored response is a Stream.
func isStream(resp []byte) bool { return bytes.HasPrefix(resp, streamMarker) }

// Limits on what a stream reader accepts: a hostile upstream costs
// bounded memory.
const (
	MaxFrame  = 16 << 20 // bytes of one event
	MaxFrames = 1 << 20  // events of one stream
)

// A frameReader splits a server-sent event stream into events, each with
// the blank line that ends it, exactly as the bytes arrived.
type frameReader struct {
	r *bufio.Reader
	// total is the bytes read so far, capped by max.
	total, max int
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// errCut is a stream that ended inside an event.
var errCut = errors.New("stream ended inside an event")

// next returns the next event's bytes; io.EOF after the last whole event,
// errCut when the stream ends inside one. Lines end with LF or CRLF; an
// event ends with an empty line.
func (fr *frameReader) next() ([]byte, error) {
	var ev []byte
	for {
		line, err := fr.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			err = nil // a long line: keep reading it
		}
		ev = append(ev, line...)
		fr.total += len(line)
		if len(ev) > MaxFrame || fr.total > fr.max {
			return nil, fmt.Errorf("stream larger than its limit (%d bytes an event, %d in all)", MaxFrame, fr.max)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if len(ev) == 0 {
					return nil, io.EOF
				}
				if len(bytes.TrimSpace(ev)) == 0 {
					// Blank lines after the last event end nothing.
					return nil, io.EOF
				}
				return nil, errCut
			}
			return nil, err
		}
		if n := len(line); n > 0 && line[n-1] == '\n' && (n == 1 || n == 2 && line[0] == '\r') {
			if len(ev) == n {
				// A blank line before any field: keep-alive padding,
				// part of the next event's bytes.
				continue
			}
			return ev, nil
		}
	}
}

// An event is a frame's SSE fields.
type event struct {
	name string // the event: field
	data []byte // the data: lines joined by LF
}

// parseEvent reads the event: and data: fields of an event.
func parseEvent(b []byte) event {
	var e event
	var data [][]byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimRight(line, "\r\n")
		name, val, _ := bytes.Cut(line, []byte(":"))
		val = bytes.TrimPrefix(val, []byte(" "))
		switch string(name) {
		case "event":
			e.name = string(val)
		case "data":
			data = append(data, val)
		}
	}
	e.data = bytes.Join(data, []byte("\n"))
	return e
}

// A grammar follows a stream of one family and says whether it ended
// with its terminal event and whether it carried an error.
type grammar struct {
	family family
	done   bool
	err    string
	// model, in and out are the reported model and usage, when the
	// stream says.
	model   string
	in, out int
	// responseID is a Responses stream's response id.
	responseID string
}

// streamError marks a failed stream in messages.
func (g *grammar) fail(format string, args ...any) {
	if g.err == "" {
		g.err = fmt.Sprintf(format, args...)
	}
}

// add reads one event.
func (g *grammar) add(frame []byte) {
	e := parseEvent(frame)
	if len(e.data) == 0 {
		return // comments (": keep-alive") and empty events
	}
	if g.done && g.family != gemini {
		g.fail("data after the terminal event")
		return
	}
	switch g.family {
	case openAI:
		if string(e.data) == "[DONE]" {
			g.done = true
			return
		}
		var v struct {
			Type     string          `json:"type"`
			Model    string          `json:"model"`
			Error    json.RawMessage `json:"error"`
			Response *struct {
				ID    string          `json:"id"`
				Model string          `json:"model"`
				Error json.RawMessage `json:"error"`
				Usage *struct {
					In  int `json:"input_tokens"`
					Out int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"response"`
			Usage *struct {
				In  int `json:"prompt_tokens"`
				Out int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(e.data, &v); err != nil {
			g.fail("event is not JSON: %v", err)
			return
		}
		if v.Type == "" && len(v.Error) > 0 && string(v.Error) != "null" {
			g.fail("error event: %s", replay.Snippet(v.Error))
			return
		}
		if v.Model != "" {
			g.model = v.Model
		}
		if v.Usage != nil {
			g.in, g.out = v.Usage.In, v.Usage.Out
		}
		// Responses API: typed events, no [DONE].
		switch v.Type {
		case "error", "response.failed":
			g.fail("%s event: %s", v.Type, replay.Snippet(e.data))
		case "response.completed", "response.incomplete":
			g.done = true
		}
		if r := v.Response; r != nil {
			if r.ID != "" {
				g.responseID = r.ID
			}
			if r.Model != "" {
				g.model = r.Model
			}
			if r.Usage != nil {
				g.in, g.out = r.Usage.In, r.Usage.Out
			}
		}
	case anthropic:
		var v struct {
			Type    string `json:"type"`
			Message struct {
				Model string `json:"model"`
				Usage struct {
					In int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			Usage struct {
				Out int `json:"output_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal(e.data, &v); err != nil {
			g.fail("event is not JSON: %v", err)
			return
		}
		switch {
		case e.name == "error" || v.Type == "error":
			g.fail("error event: %s", replay.Snippet(e.data))
		case v.Type == "message_start":
			g.model, g.in = v.Message.Model, v.Message.Usage.In
		case v.Type == "message_delta":
			g.out = v.Usage.Out
		case v.Type == "message_stop":
			g.done = true
		}
	case gemini:
		var v struct {
			Error      json.RawMessage `json:"error"`
			Candidates []struct {
				FinishReason string `json:"finishReason"`
			} `json:"candidates"`
			PromptFeedback struct {
				BlockReason string `json:"blockReason"`
			} `json:"promptFeedback"`
			ModelVersion string `json:"modelVersion"`
			Usage        struct {
				In  int `json:"promptTokenCount"`
				Out int `json:"candidatesTokenCount"`
			} `json:"usageMetadata"`
		}
		if err := json.Unmarshal(e.data, &v); err != nil {
			g.fail("event is not JSON: %v", err)
			return
		}
		if len(v.Error) > 0 && string(v.Error) != "null" {
			g.fail("error event: %s", replay.Snippet(v.Error))
			return
		}
		if v.ModelVersion != "" {
			g.model = v.ModelVersion
		}
		if v.Usage.In+v.Usage.Out > 0 {
			g.in, g.out = v.Usage.In, v.Usage.Out
		}
		// Gemini has no terminal event: the last chunk carries the
		// finish reason.
		for _, c := range v.Candidates {
			if c.FinishReason != "" {
				g.done = true
			}
		}
		if v.PromptFeedback.BlockReason != "" {
			g.done = true
		}
	}
}
