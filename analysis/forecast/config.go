package forecast

import (
	"io"
	"strconv"
	"time"

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

// A logTimes holds the prediction log densely, one time per (task,
// system) at task*systems+system in the order of Inputs.Tasks and
// Config.Systems: a map keyed by the two names held 22 MB at 8x the full
// demo (161,504 entries), this 2 MB. The times are kept as Unix seconds
// and nanoseconds, the nanoseconds -1 where the log has no entry.
type logTimes struct {
	sec  []int64
	nsec []int32
}

// at returns the logged time of entry i and whether there is one.
func (l logTimes) at(i int) (time.Time, bool) {
	if i >= len(l.nsec) || l.nsec[i] < 0 {
		return time.Time{}, false
	}
	return time.Unix(l.sec[i], int64(l.nsec[i])).UTC(), true
}

// readLog reads the prediction log from r (JSONL of LogEntry), checking that every entry names a known system and task, has an
// RFC 3339 time, and is not repeated. systems and tasks map the names to
// their indexes.
func readLog(r io.Reader, systems, tasks map[string]int) (logTimes, error) {
	n := len(systems) * len(tasks)
	out := logTimes{sec: make([]int64, n), nsec: make([]int32, n)}
	for i := range out.nsec {
		out.nsec[i] = -1
	}
	file := LogFile
	err := results.EachJSONL(r, file, func(line int, e *LogEntry) error {
		s, ok := systems[e.System]
		if !ok {
			return results.Errorf(file, line, "system", "unknown system %q", e.System)
		}
		ti, ok := tasks[e.Task]
		if !ok {
			return results.Errorf(file, line, "task", "unknown task %q", e.Task)
		}
		t, err := parseTime(e.RecordedAt)
		if err != nil {
			return results.Errorf(file, line, "recorded_at", "%v", err)
		}
		i := ti*len(systems) + s
		if out.nsec[i] >= 0 {
			return results.Errorf(file, line, "task", "system %q task %q repeated", e.System, e.Task)
		}
		out.sec[i], out.nsec[i] = t.Unix(), int32(t.Nanosecond())
		return nil
	})
	return out, err
}
