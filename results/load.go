package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// MaxLine caps the length of one JSONL line, so that a hostile file
// cannot make a loader allocate without bound.
const MaxLine = 64 << 20

// ReadJSONL decodes one JSON object per line of r into values of type T,
// rejecting unknown fields. Blank lines are skipped. The first bad line
// stops the read with an *InputError naming file, line and (where the
// decoder knows it) field.
func ReadJSONL[T any](r io.Reader, file string) ([]T, error) {
	var out []T
	err := EachJSONL(r, file, func(line int, v *T) error {
		out = append(out, *v)
		return nil
	})
	return out, err
}

// EachJSONL decodes line after line of r into a fresh T and calls fn with
// its line number. An error from fn stops the read and is returned as is.
func EachJSONL[T any](r io.Reader, file string, fn func(line int, v *T) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		v := new(T)
		if err := DecodeStrict(b, v); err != nil {
			return jsonError(file, n, err)
		}
		if err := fn(n, v); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return Errorf(file, n+1, "", "%v", err)
	}
	return nil
}

// ReadJSON decodes the whole of r into v, rejecting unknown fields and
// trailing data.
func ReadJSON(r io.Reader, file string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, MaxLine+1))
	if err != nil {
		return Errorf(file, 0, "", "%v", err)
	}
	if len(b) > MaxLine {
		return Errorf(file, 0, "", "file larger than %d bytes", MaxLine)
	}
	if err := DecodeStrict(b, v); err != nil {
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		}
		return jsonError(file, line, err)
	}
	return nil
}

// DecodeStrict decodes b into v, rejecting unknown fields and trailing data.
func DecodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func jsonError(file string, line int, err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return Errorf(file, line, te.Field, "got JSON %s, want %s", te.Value, te.Type)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return Errorf(file, line, strings.Trim(f, `"`), "unknown field")
	}
	return Errorf(file, line, "", "%s", strings.TrimPrefix(msg, "json: "))
}

// A CSVTable is a CSV file read with its header: '#' lines before the
// header are kept as comments.
type CSVTable struct {
	File     string
	Comments []string
	Header   []string
	// Rows hold the records after the header; Lines[i] is the file line of
	// Rows[i].
	Rows  [][]string
	Lines []int
}

// ReadCSV reads a CSV file whose leading '#' lines are comments and whose
// first other line is the header. Every record must have the header's
// number of fields.
func ReadCSV(r io.Reader, file string) (*CSVTable, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxLine+1))
	if err != nil {
		return nil, Errorf(file, 0, "", "%v", err)
	}
	if len(b) > MaxLine {
		return nil, Errorf(file, 0, "", "file larger than %d bytes", MaxLine)
	}
	t := &CSVTable{File: file}
	skipped := 0
	for len(b) > 0 && b[0] == '#' {
		line, rest, _ := bytes.Cut(b, []byte("\n"))
		t.Comments = append(t.Comments, strings.TrimSpace(strings.TrimPrefix(string(line), "#")))
		b = rest
		skipped++
	}
	cr := csv.NewReader(bytes.NewReader(b))
	cr.FieldsPerRecord = 0
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, Errorf(file, skipped+pe.Line, fmt.Sprintf("column %d", pe.Column), "%v", pe.Err)
			}
			return nil, Errorf(file, 0, "", "%v", err)
		}
		line, _ := cr.FieldPos(0)
		if t.Header == nil {
			t.Header = rec
			continue
		}
		t.Rows = append(t.Rows, rec)
		t.Lines = append(t.Lines, skipped+line)
	}
	if t.Header == nil {
		return nil, Errorf(file, 0, "", "no header line")
	}
	return t, nil
}

// Col returns the index of the named header column, or -1.
func (t *CSVTable) Col(name string) int { return slices.Index(t.Header, name) }
