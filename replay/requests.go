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

// plainRequestLine reads a request line read in one pass by the key's
// rule (reqkey.Members), and returns it with its body's canonical
// encoding, when it is plain: members named exactly provider, endpoint,
// body and sample, strings without escapes, the sample in digits alone,
// the body an object. decodeRequestLine reads such a line into the same
// values; it reads every other line (nil here), and names what is wrong
// in it. The body is a slice of b. Reading each line twice, here and again to key it, was 60 % of
// the CPU of "finrepro replay" of 1,000 judge requests (bench/compare.sh).
func plainRequestLine(b []byte) (*requestLine, []byte) {
	ms, err := reqkey.Members(b)
	if err != nil {
		return nil, nil
	}
	var l requestLine
	var keyed []byte
	for _, m := range ms {
		switch v := m.Raw; m.Name {
		case "provider", "endpoint":
			if v[0] != '"' || bytes.IndexByte(v, '\\') >= 0 {
				return nil, nil
			}
			if m.Name == "provider" {
				l.Provider = string(v[1 : len(v)-1])
			} else {
				l.Endpoint = string(v[1 : len(v)-1])
			}
		case "body":
			if v[0] != '{' {
				return nil, nil
			}
			l.Body, keyed = v, m.Canonical
			if bytes.Equal(keyed, v) {
				keyed = v // the body is canonical already: held once
			}
		case "sample":
			n, err := strconv.Atoi(string(v))
			if err != nil || len(v) > 9 || v[0] < '0' || v[0] > '9' {
				return nil, nil
			}
			l.Sample = &n
		default:
			return nil, nil
		}
	}
	return &l, keyed
}

// ParseRequests reads a requests file: one request object per line,
// {"provider": ..., "endpoint": ..., "body": {...}, "sample": N}, where
// provider may be omitted when defaultProvider is set, endpoint may be
// omitted for the provider's default and sample defaults to 0. Each
// request is labelled with its file and line. Errors name file, line and
// field.
//
// The lines are read first, then decoded GOMAXPROCS at a time: decoding
// and keying them in one pass (plainRequestLine) is most of the CPU a
// replay of long requests spends outside its reads.
func ParseRequests(r io.Reader, file, defaultProvider string) ([]Request, error) {
	type numbered struct {
		line int
		b    []byte
	}
	var lines []numbered
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), results.MaxLine)
	line := 0
	for sc.Scan() {
		line++
		if b := bytes.TrimSpace(sc.Bytes()); len(b) > 0 {
			lines = append(lines, numbered{line, bytes.Clone(b)})
		}
	}
	out := make([]Request, len(lines))
	errs := make([]error, len(lines))
	parallel(len(lines), func(i int) { out[i], errs[i] = parseRequestLine(file, lines[i].line, lines[i].b, defaultProvider) })
	for i, err := range errs {
		if err != nil {
			return out[:i], err
		}
	}
	if err := sc.Err(); err != nil {
		return out, results.Errorf(file, line+1, "", "%v", err)
	}
	return out, nil
}

// parseRequestLine reads line number line of a requests file, b, which
// the request may keep.
func parseRequestLine(file string, line int, b []byte, defaultProvider string) (Request, error) {
	l, keyed := plainRequestLine(b)
	if l == nil {
		var err error
		if l, err = decodeRequestLine(file, line, b); err != nil {
			return Request{}, err
		}
	}
	q := Request{Provider: l.Provider, Endpoint: l.Endpoint, Body: json.RawMessage(l.Body), keyedBody: keyed}
	if q.Provider == "" {
		q.Provider = defaultProvider
	}
	if q.Provider == "" {
		return Request{}, results.Errorf(file, line, "provider", "missing and no --provider given")
	}
	if b := bytes.TrimSpace(l.Body); len(b) == 0 || b[0] != '{' {
		return Request{}, results.Errorf(file, line, "body", "missing or not a JSON object")
	}
	if q.Endpoint != "" {
		if err := checkEndpoint(q.Endpoint); err != nil {
			return Request{}, results.Errorf(file, line, "endpoint", "%v", err)
		}
	}
	if l.Sample != nil {
		if *l.Sample < 0 {
			return Request{}, results.Errorf(file, line, "sample", "negative")
		}
		q.Sample = *l.Sample
	}
	q.Label = results.Label{Benchmark: file, Task: strconv.Itoa(line), Role: RoleRequest, Name: q.Provider}
	return q, nil
}
