package cache

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache/reqkey"
	"github.com/go-json-experiment/json/jsontext"
)

// MaxLineBytes caps one line of a JSONL exchange file.
const MaxLineBytes = 2*reqkey.MaxRequestBytes + 1<<20

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

// ParseLine decodes one JSONL line {"request": ..., "response": ...,
// "meta": ...} (meta optional: source "import", provider and model taken
// from the request). It checks that the request has a canonical form,
// that the response is valid JSON and that the meta is valid; errors are
// *LineError with Line 0.
func ParseLine(b []byte) (*Exchange, error) {
	x, _, err := parseLine(bytes.Clone(b))
	return x, err
}

// parseLine is ParseLine that also returns the request's canonical form;
// the exchange's request, response and meta are slices of b, which it
// does not change.
func parseLine(b []byte) (*Exchange, []byte, error) {
	if len(b) > MaxLineBytes {
		return nil, nil, &LineError{Msg: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
	}
	if x, canon, ok := parseLineFast(b); ok {
		return x, canon, nil
	}
	return parseLineTokens(b)
}

// parseLineTokens is parseLine by the token decoder, which names the
// fault of a bad line.
func parseLineTokens(b []byte) (*Exchange, []byte, error) {
	// The line is read leniently: lone surrogate escapes are allowed in a
	// response or meta, as encoding/json allows them; the request is
	// tokenized again, strictly, by the key rule; raw invalid UTF-8 is
	// refused everywhere.
	// (A bytes.Buffer is read in place, a bytes.Reader copied.)
	dec := jsontext.NewDecoder(bytes.NewBuffer(b), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	lerr := func(err error) error {
		var re *reqkey.RequestError
		if errors.As(err, &re) {
			return &LineError{Field: re.Field, Msg: re.Msg}
		}
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			field, _, _ := strings.Cut(strings.TrimPrefix(string(se.JSONPointer), "/"), "/")
			return &LineError{Field: field, Msg: reqkey.DecodeErrorText(err)}
		}
		return &LineError{Msg: reqkey.DecodeErrorText(err)}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, &LineError{Msg: "not a JSON object"}
	}
	var x Exchange
	var canon, meta []byte
	seen := map[string]bool{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, lerr(err)
		}
		k := tok.String()
		if seen[k] {
			return nil, nil, &LineError{Field: k, Msg: "repeated"}
		}
		seen[k] = true
		switch k {
		case "request", "response", "meta":
			v, err := dec.ReadValue()
			if err != nil {
				return nil, nil, lerr(err)
			}
			raw := []byte(v[:len(v):len(v)]) // a slice of b: the decoder reads b in place
			// The key rule refuses invalid UTF-8 in a request: a request
			// is checked for it only when refused, to name the cause.
			if k != "request" && !utf8.Valid(raw) {
				return nil, nil, &LineError{Field: k, Msg: "invalid UTF-8"}
			}
			switch k {
			case "request":
				if canon, err = reqkey.CanonicalField("request", raw); err != nil {
					if !utf8.Valid(raw) {
						return nil, nil, &LineError{Field: k, Msg: "invalid UTF-8"}
					}
					return nil, nil, lerr(err)
				}
				x.Request = raw
			case "response":
				x.Response = raw
			default:
				meta = raw
			}
		default:
			return nil, nil, &LineError{Field: k, Msg: "unknown field"}
		}
	}
	if _, err := dec.ReadToken(); err != nil { // '}'
		return nil, nil, lerr(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, nil, &LineError{Msg: "trailing data after JSON value"}
	}
	switch {
	case canon == nil:
		return nil, nil, &LineError{Field: "request", Msg: "missing"}
	case x.Response == nil:
		return nil, nil, &LineError{Field: "response", Msg: "missing"}
	}
	if err := finishLine(&x, canon, meta); err != nil {
		return nil, nil, err
	}
	return &x, canon, nil
}

// finishLine decodes a line's meta (nil: none) into x and checks that it
// can be stored with the request's canonical form canon.
func finishLine(x *Exchange, canon, meta []byte) error {
	if meta == nil || string(meta) == "null" {
		x.Meta.Source = SourceImport
	} else {
		dec := json.NewDecoder(bytes.NewReader(meta))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&x.Meta); err != nil {
			le := jsonLineError(err).(*LineError)
			le.Field = reqkey.JoinField("meta", le.Field)
			return le
		}
	}
	if _, err := metaJSON(x, canon); err != nil {
		return metaLineError(err)
	}
	return nil
}

// metaLineError turns metaJSON's error into a *LineError.
func metaLineError(err error) error {
	var me *MetaError
	if errors.As(err, &me) {
		return &LineError{Field: me.Field, Msg: me.Msg}
	}
	return &LineError{Msg: err.Error()}
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
// line) in batches. A bad line never harms what is stored. LoadStats.Added
// counts only exchanges whose pack was written, also when Load fails. The returned
// error is a *LineError in strict mode, or an I/O or store error. Lines
// are parsed, hashed and compressed in parallel and added in input order.
func (s *Store) Load(r io.Reader, opt LoadOptions) (*LoadStats, error) {
	type line struct {
		n       int
		b       []byte
		tooLong bool
		p       *prepared
	}
	type chunk struct {
		lines []line
		err   error // reading stopped here
		done  chan struct{}
	}
	workers := runtime.GOMAXPROCS(0)
	ordered := make(chan *chunk, 2*workers)
	jobs := make(chan *chunk, 2*workers)
	stop := make(chan struct{})
	go func() {
		defer close(ordered)
		defer close(jobs)
		br := bufio.NewReaderSize(r, 1<<20)
		var buf []byte
		c := &chunk{done: make(chan struct{})}
		size := 0
		send := func() bool {
			select {
			case ordered <- c:
			case <-stop:
				return false
			}
			select {
			case jobs <- c:
			case <-stop:
				return false
			}
			c, size = &chunk{done: make(chan struct{})}, 0
			return true
		}
		for n := 1; ; n++ {
			l, tooLong, err := readLine(br, &buf)
			if err != nil && err != io.EOF {
				c.err = fmt.Errorf("cache: load: line %d: %w", n, err)
				send()
				return
			}
			if l = bytes.TrimSpace(l); len(l) > 0 || tooLong {
				c.lines = append(c.lines, line{n: n, b: bytes.Clone(l), tooLong: tooLong})
				size += len(l)
			}
			if err == io.EOF {
				send()
				return
			}
			if size >= compressChunk || len(c.lines) >= 1024 {
				if !send() {
					return
				}
			}
		}
	}()
	for range workers {
		go func() {
			for c := range jobs {
				for i := range c.lines {
					l := &c.lines[i]
					if l.tooLong {
						continue
					}
					x, canon, err := parseLine(l.b)
					if err != nil {
						l.p = &prepared{err: err}
						continue
					}
					// The batch keeps the response until its pack is
					// written, not the whole line.
					x.Response = bytes.Clone(x.Response)
					l.p = s.prepare(x, canon)
				}
				close(c.done)
			}
		}()
	}
	defer func() {
		close(stop)
		for range ordered { // let the reader finish
		}
	}()
	st := &LoadStats{}
	b := s.NewBatch()
	b.loading = true
	// Exchanges count as added once their pack is written: queued counts
	// those waiting in b, writingN those of the batch being written.
	queued := 0
	// A full batch is written in the background (its delta search, its
	// blocks' compression, its fsync) while the next one fills, one at a
	// time: written in line, the parse waited for them (on the random
	// corpus with two cores, about a fifth of the load's time).
	var writing chan error // the batch being written; nil: none
	writingN := 0
	wait := func() error {
		if writing == nil {
			return nil
		}
		err := <-writing
		writing = nil
		if err == nil {
			st.Added += writingN
		}
		writingN = 0
		return err
	}
	writeFull := func() error {
		if err := wait(); err != nil {
			return err
		}
		full := b
		b = s.NewBatch()
		b.loading = true
		b.pending, b.pendingObjs = full.keys, full.objs
		full.keys, full.objs = map[Key]Digest{}, map[Digest]bool{}
		writing, writingN, queued = make(chan error, 1), queued, 0
		go func() { writing <- full.Flush() }()
		return nil
	}
	flush := func() error {
		if err := wait(); err != nil {
			return err
		}
		if err := b.Flush(); err != nil {
			return err
		}
		st.Added += queued
		queued = 0
		return nil
	}
	for c := range ordered {
		<-c.done
		for _, l := range c.lines {
			st.Lines++
			var lerr error
			switch {
			case l.tooLong:
				lerr = &LineError{Msg: fmt.Sprintf("longer than %d bytes", MaxLineBytes)}
			case l.p.err != nil && l.p.x == nil:
				lerr = l.p.err
			case l.p.err != nil:
				lerr = metaLineError(l.p.err)
			default:
				_, added, err := b.addPrepared(l.p)
				var ce *ConflictError
				switch {
				case errors.As(err, &ce):
					lerr = &LineError{Field: "response", Msg: err.Error()}
				case errors.Is(err, ErrTooLarge):
					lerr = &LineError{Msg: err.Error()}
				case err != nil:
					wait() // the error reported is this one
					return st, fmt.Errorf("cache: load: line %d: %w", l.n, err)
				case added:
					queued++
					if b.raw >= packTarget {
						if err := writeFull(); err != nil {
							return st, fmt.Errorf("cache: load: %w", err)
						}
					}
				default:
					st.Present++
				}
			}
			if lerr == nil {
				continue
			}
			var le *LineError
			if errors.As(lerr, &le) {
				le.Line = l.n
			}
			st.Bad++
			if opt.Strict {
				if ferr := flush(); ferr != nil {
					return st, ferr
				}
				return st, lerr
			}
			if opt.Report != nil {
				opt.Report(lerr)
			}
		}
		if c.err != nil {
			if ferr := flush(); ferr != nil {
				return st, ferr
			}
			return st, c.err
		}
	}
	return st, flush()
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
