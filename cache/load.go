package cache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLineBytes caps one line of a JSONL exchange file.
const MaxLineBytes = 2*MaxRequestBytes + 1<<20

// A LineError is a bad line of a JSONL exchange file. Field is the JSON
// path of the offending value, empty when the whole line is at fault.
type LineError struct {
	Line  int
	Field string
	Msg   string
}

func (e *LineError) Error() string {
	s := fmt.Sprintf("line %d", e.Line)
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// line is the JSONL form of an exchange.
type line struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	Meta     *Meta           `json:"meta"`
}

// ParseLine decodes one JSONL line {"request": ..., "response": ...,
// "meta": ...} (meta optional: source "import", provider and model taken
// from the request). It checks that the request has a canonical form and
// that the meta is valid; errors are *LineError with Line 0.
func ParseLine(b []byte) (*Exchange, error) {
	var l line
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, jsonLineError(err)
	}
	if dec.More() {
		return nil, &LineError{Msg: "trailing data after JSON value"}
	}
	switch {
	case l.Request == nil || string(l.Request) == "null":
		return nil, &LineError{Field: "request", Msg: "missing"}
	case l.Response == nil:
		return nil, &LineError{Field: "response", Msg: "missing"}
	}
	x := &Exchange{Request: l.Request, Response: l.Response}
	if l.Meta != nil {
		x.Meta = *l.Meta
	} else {
		x.Meta.Source = SourceImport
	}
	c, err := Canonical(x.Request)
	if err != nil {
		var re *RequestError
		if errors.As(err, &re) {
			return nil, &LineError{Field: joinField("request", re.Field), Msg: re.Msg}
		}
		return nil, &LineError{Field: "request", Msg: err.Error()}
	}
	if _, err := metaJSON(x, c); err != nil {
		f, msg, _ := strings.Cut(err.Error(), ": ")
		return nil, &LineError{Field: f, Msg: msg}
	}
	return x, nil
}

func joinField(a, b string) string {
	if b == "" {
		return a
	}
	if strings.HasPrefix(b, "[") {
		return a + b
	}
	return a + "." + b
}

func jsonLineError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &LineError{Field: te.Field, Msg: fmt.Sprintf("got JSON %s, want %s", te.Value, te.Type)}
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return &LineError{Field: strings.Trim(f, `"`), Msg: "unknown field"}
	}
	return &LineError{Msg: msg}
}

// LoadOptions control Load.
type LoadOptions struct {
	// Strict stops the load at the first bad line (lines before it stay
	// stored). Otherwise bad lines are reported and skipped.
	Strict bool
	// Report is called with each bad line's *LineError (and conflicts in
	// verify mode); nil discards them.
	Report func(error)
}

// LoadStats count what Load did.
type LoadStats struct {
	Lines   int `json:"lines"`   // non-blank lines read
	Added   int `json:"added"`   // exchanges newly stored
	Present int `json:"present"` // already stored (or repeated in the input)
	Bad     int `json:"bad"`     // lines skipped
}

// Load adds the exchanges of a JSONL stream (one ParseLine object per
// line) in batches. A bad line never harms what is stored. The returned
// error is a *LineError in strict mode, or an I/O or store error.
func (s *Store) Load(r io.Reader, opt LoadOptions) (*LoadStats, error) {
	st := &LoadStats{}
	b := s.NewBatch()
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	for n := 1; ; n++ {
		l, tooLong, err := readLine(br, &buf)
		if err == io.EOF && len(l) == 0 && !tooLong {
			break
		}
		if err != nil && err != io.EOF {
			return st, fmt.Errorf("cache: load: line %d: %w", n, err)
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 && !tooLong {
			if err == io.EOF {
				break
			}
			continue
		}
		st.Lines++
		var x *Exchange
		var lerr error
		if tooLong {
			lerr = &LineError{Msg: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
		} else {
			x, lerr = ParseLine(l)
		}
		if lerr == nil {
			var added bool
			_, added, lerr = b.add(x)
			var ce *ConflictError
			switch {
			case errors.As(lerr, &ce):
				lerr = &LineError{Field: "response", Msg: lerr.Error()}
			case lerr != nil:
				return st, fmt.Errorf("cache: load: line %d: %w", n, lerr)
			case added:
				st.Added++
			default:
				st.Present++
			}
		}
		if lerr != nil {
			var le *LineError
			if errors.As(lerr, &le) {
				le.Line = n
			}
			st.Bad++
			if opt.Strict {
				if ferr := b.Flush(); ferr != nil {
					return st, ferr
				}
				return st, lerr
			}
			if opt.Report != nil {
				opt.Report(lerr)
			}
		}
		if err == io.EOF {
			break
		}
	}
	return st, b.Flush()
}

// readLine reads one line into *buf, without its newline. A line longer
// than MaxLineBytes is consumed and reported by tooLong.
func readLine(br *bufio.Reader, buf *[]byte) (l []byte, tooLong bool, err error) {
	*buf = (*buf)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(*buf)+len(chunk) > MaxLineBytes {
				tooLong = true
				*buf = (*buf)[:0]
			} else {
				*buf = append(*buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(*buf, []byte("\n")), tooLong, err
	}
}
