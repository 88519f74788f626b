package replay

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"

	"github.com/finrepro/finrepro/results"
)

// RoleRequest is the label role of a request read from a requests file:
// the label's Benchmark is the file and its Task the line number.
const RoleRequest results.Role = "request"

// LabelText formats a label for messages: "file:line" for a request from
// a requests file, the label's String otherwise.
func LabelText(l results.Label) string {
	if l.Role == RoleRequest {
		return l.Benchmark + ":" + l.Task
	}
	return l.String()
}

// A requestLine is one line of a requests file.
type requestLine struct {
	Provider string          `json:"provider"`
	Endpoint string          `json:"endpoint"`
	Body     json.RawMessage `json:"body"`
	Sample   *int            `json:"sample"`
}

// ParseRequests reads a requests file: one request object per line,
// {"provider": ..., "endpoint": ..., "body": {...}, "sample": N}, where
// provider may be omitted when defaultProvider is set, endpoint may be
// omitted for the provider's default and sample defaults to 0. Each
// request is labelled with its file and line. Errors name file, line and
// field.
func ParseRequests(r io.Reader, file, defaultProvider string) ([]Request, error) {
	var out []Request
	err := results.EachJSONL(r, file, func(line int, l *requestLine) error {
		q := Request{Provider: l.Provider, Endpoint: l.Endpoint, Body: l.Body}
		if q.Provider == "" {
			q.Provider = defaultProvider
		}
		if q.Provider == "" {
			return results.Errorf(file, line, "provider", "missing and no --provider given")
		}
		if b := bytes.TrimSpace(l.Body); len(b) == 0 || b[0] != '{' {
			return results.Errorf(file, line, "body", "missing or not a JSON object")
		}
		if q.Endpoint != "" {
			if err := checkEndpoint(q.Endpoint); err != nil {
				return results.Errorf(file, line, "endpoint", "%v", err)
			}
		}
		if l.Sample != nil {
			if *l.Sample < 0 {
				return results.Errorf(file, line, "sample", "negative")
			}
			q.Sample = *l.Sample
		}
		q.Label = results.Label{Benchmark: file, Task: strconv.Itoa(line), Role: RoleRequest, Name: q.Provider}
		out = append(out, q)
		return nil
	})
	return out, err
}
