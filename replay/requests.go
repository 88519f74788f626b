package replay

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/cache/reqkey"
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
	Provider string         `json:"provider"`
	Endpoint string         `json:"endpoint"`
	Body     jsontext.Value `json:"body"`
	Sample   *int           `json:"sample"`
}

// requestLineOptions decode a request line as encoding/json reads it
// (cache.DecodeOptions), refusing unknown members. go-json-experiment
// reads the body once where encoding/json scanned it twice before keying
// read it again: 35 % of the CPU of "finrepro replay" of the full-scale
// demo's 33,282 requests went to decoding the file.
var requestLineOptions = jsonv2.JoinOptions(cache.DecodeOptions, jsonv2.RejectUnknownMembers(true))

// jsonKinds name the kinds of JSON value in messages.
var jsonKinds = map[jsontext.Kind]string{'n': "null", 'f': "bool", 't': "bool", '"': "string", '0': "number", '{': "object", '[': "array"}

// decodeRequestLine decodes one line of a requests file; its error names
// the line's member at fault.
func decodeRequestLine(file string, line int, b []byte) (*requestLine, error) {
	var l requestLine
	err := jsonv2.Unmarshal(b, &l, requestLineOptions)
	if err == nil {
		return &l, nil
	}
	field := ""
	var se *jsonv2.SemanticError
	var sx *jsontext.SyntacticError
	switch {
	case errors.As(err, &se):
		field, _, _ = strings.Cut(strings.TrimPrefix(string(se.JSONPointer), "/"), "/")
		if errors.Is(err, jsonv2.ErrUnknownName) {
			return nil, results.Errorf(file, line, field, "unknown field")
		}
		if se.GoType != nil && se.JSONKind != 0 {
			return nil, results.Errorf(file, line, field, "got JSON %s, want %s", jsonKinds[se.JSONKind], se.GoType)
		}
	case errors.As(err, &sx):
		field, _, _ = strings.Cut(strings.TrimPrefix(string(sx.JSONPointer), "/"), "/")
	}
	return nil, results.Errorf(file, line, field, "%s", reqkey.DecodeErrorText(err))
}

// ParseRequests reads a requests file: one request object per line,
// {"provider": ..., "endpoint": ..., "body": {...}, "sample": N}, where
// provider may be omitted when defaultProvider is set, endpoint may be
// omitted for the provider's default and sample defaults to 0. Each
// request is labelled with its file and line. Errors name file, line and
// field.
func ParseRequests(r io.Reader, file, defaultProvider string) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), results.MaxLine)
	line := 0
	each := func(line int, b []byte) error {
		l, err := decodeRequestLine(file, line, b)
		if err != nil {
			return err
		}
		q := Request{Provider: l.Provider, Endpoint: l.Endpoint, Body: json.RawMessage(l.Body)}
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
	}
	for sc.Scan() {
		line++
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			if err := each(line, b); err != nil {
				return out, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return out, results.Errorf(file, line+1, "", "%v", err)
	}
	return out, nil
}
