package forecast

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/finrepro/finrepro/results"
)

// ConfigFormat is the format line of config.json this version reads.
const ConfigFormat = "findeepforecast-config/1"

// A Config is the benchmark's configuration (config.json).
type Config struct {
	Format string `json:"format"`
	// EvaluatedAt is the time of the evaluation (RFC 3339): tasks not
	// resolved by then are pending, or void once their validity window
	// has passed.
	EvaluatedAt string   `json:"evaluated_at"`
	Systems     []System `json:"systems"`

	asOf time.Time
}

// A System is one evaluated method and how to call it.
type System struct {
	Name string `json:"name"`
	// Group is the paradigm the paper groups it under ("thinking",
	// "thinking+search", "deep-research").
	Group    string         `json:"group"`
	Provider string         `json:"provider"`
	Model    string         `json:"model"`
	Params   map[string]any `json:"params,omitempty"`
}

// ReadConfig reads and checks config.json.
func ReadConfig(r io.Reader, file string) (*Config, error) {
	var c Config
	if err := results.ReadJSON(r, file, &c); err != nil {
		return nil, err
	}
	if c.Format != ConfigFormat {
		return nil, results.Errorf(file, 0, "format", "got %q, want %q", c.Format, ConfigFormat)
	}
	var err error
	if c.asOf, err = parseTime(c.EvaluatedAt); err != nil {
		return nil, results.Errorf(file, 0, "evaluated_at", "%v", err)
	}
	if len(c.Systems) == 0 {
		return nil, results.Errorf(file, 0, "systems", "none")
	}
	seen := map[string]bool{}
	for i, s := range c.Systems {
		field := func(f string) string { return "systems[" + strconv.Itoa(i) + "]." + f }
		switch {
		case s.Name == "":
			return nil, results.Errorf(file, 0, field("name"), "empty")
		case seen[s.Name]:
			return nil, results.Errorf(file, 0, field("name"), "%q repeated", s.Name)
		case s.Provider == "":
			return nil, results.Errorf(file, 0, field("provider"), "empty")
		case s.Model == "":
			return nil, results.Errorf(file, 0, field("model"), "empty")
		}
		seen[s.Name] = true
	}
	return &c, nil
}

// A LogEntry records when a system's prediction for a task was made.
type LogEntry struct {
	System     string `json:"system"`
	Task       string `json:"task"`
	RecordedAt string `json:"recorded_at"`
}

// logKey indexes the prediction log.
type logKey struct{ system, task string }

// ReadLog reads a prediction log (JSONL of LogEntry), checking that every
// entry names a known system and task, has an RFC 3339 time, and is not
// repeated.
func ReadLog(r io.Reader, file string, systems map[string]bool, tasks map[string]bool) (map[logKey]time.Time, error) {
	return readLogInto(map[logKey]time.Time{}, r, file, systems, tasks)
}

// readLogInto is ReadLog adding the entries to out.
func readLogInto(out map[logKey]time.Time, r io.Reader, file string, systems map[string]bool, tasks map[string]bool) (map[logKey]time.Time, error) {
	err := eachLogEntry(r, file, func(line int, e *LogEntry) error {
		if !systems[e.System] {
			return results.Errorf(file, line, "system", "unknown system %q", e.System)
		}
		if !tasks[e.Task] {
			return results.Errorf(file, line, "task", "unknown task %q", e.Task)
		}
		t, err := parseTime(e.RecordedAt)
		if err != nil {
			return results.Errorf(file, line, "recorded_at", "%v", err)
		}
		k := logKey{e.System, e.Task}
		if _, ok := out[k]; ok {
			return results.Errorf(file, line, "task", "system %q task %q repeated", e.System, e.Task)
		}
		out[k] = t
		return nil
	})
	return out, err
}

func readLog(b []byte, systems, tasks map[string]bool) (map[logKey]time.Time, error) {
	if b == nil {
		return map[logKey]time.Time{}, nil
	}
	out := make(map[logKey]time.Time, bytes.Count(b, []byte{'\n'})+1) // an entry a line
	return readLogInto(out, bytes.NewReader(b), "prediction_log.jsonl", systems, tasks)
}

// eachLogEntry is results.EachJSONL for log entries, with a fast path for
// the lines a log holds: {"system":"...","task":"...","recorded_at":"..."}
// with plain strings (valid UTF-8, no escapes). Any other line is decoded
// by results.DecodeStrict.
func eachLogEntry(r io.Reader, file string, fn func(line int, e *LogEntry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), results.MaxLine)
	n := 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		e, ok := plainLogEntry(b)
		if !ok {
			e = &LogEntry{}
			if err := results.DecodeStrict(b, e); err != nil {
				return lineError(b, file, n)
			}
		}
		if err := fn(n, e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return results.Errorf(file, n+1, "", "%v", err)
	}
	return nil
}

// lineError is the error results.EachJSONL reports for the bad JSON line
// b, line n of file.
func lineError(b []byte, file string, n int) error {
	err := results.EachJSONL(bytes.NewReader(b), file, func(int, *LogEntry) error { return nil })
	var ie *results.InputError
	if errors.As(err, &ie) {
		at := *ie
		at.Line = n
		return &at
	}
	return err
}

// plainLogEntry decodes b when it is {"system":"S","task":"T",
// "recorded_at":"R"} (JSON white space allowed between tokens) with
// plain strings; ok is false for anything else.
func plainLogEntry(b []byte) (e *LogEntry, ok bool) {
	e = &LogEntry{}
	i := skipWS(b, 0)
	for k, f := range []struct {
		key string
		dst *string
	}{{"system", &e.System}, {"task", &e.Task}, {"recorded_at", &e.RecordedAt}} {
		open := byte(',')
		if k == 0 {
			open = '{'
		}
		if i >= len(b) || b[i] != open {
			return nil, false
		}
		key, j, ok := plainString(b, skipWS(b, i+1))
		if !ok || key != f.key {
			return nil, false
		}
		j = skipWS(b, j)
		if j >= len(b) || b[j] != ':' {
			return nil, false
		}
		v, j, ok := plainString(b, skipWS(b, j+1))
		if !ok {
			return nil, false
		}
		*f.dst = v
		i = skipWS(b, j)
	}
	if i != len(b)-1 || b[i] != '}' {
		return nil, false
	}
	return e, true
}

// skipWS skips JSON white space from b[i].
func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string at b[i] made of valid UTF-8 without
// escapes or control characters; it returns its contents and the index
// after it.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			v := b[i+1 : j]
			return string(v), j + 1, utf8.Valid(v)
		case c == '\\', c < 0x20:
			return "", j, false
		}
	}
	return "", len(b), false
}
