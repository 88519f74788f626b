package forecast

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/finrepro/finrepro/results"
)

// Kinds of task.
const (
	Recurrent    = "recurrent"     // numeric forecast of a scheduled disclosure
	NonRecurrent = "non-recurrent" // Yes/No forecast of an event
)

// Levels of task.
const (
	Corporate = "corporate"
	Macro     = "macro"
)

// Markets are the paper's eight markets in the order its tables print them.
var Markets = []string{"US", "CN", "HK", "JP", "UK", "DE", "FR", "SG"}

// A Task is one forecasting problem (q, t_g, t_d, t_e, y).
type Task struct {
	ID       string `json:"id"`
	Week     int    `json:"week"` // week of release, from 1
	Question string `json:"question"`
	// Generated, Deadline and Evaluated are t_g < t_d < t_e (RFC 3339).
	Generated string `json:"t_generated"`
	Deadline  string `json:"t_deadline"`
	Evaluated string `json:"t_evaluated"`
	Kind      string `json:"kind"`   // Recurrent or NonRecurrent
	Level     string `json:"level"`  // Corporate or Macro
	Market    string `json:"market"` // "US", "CN", ...
	Index     string `json:"index,omitempty"`
	// Entity is the company (corporate) or the economy (macro).
	Entity string `json:"entity"`
	// Metric is the financial metric, macro indicator or event type.
	Metric string `json:"metric,omitempty"`
	// Unit is the display unit of a recurrent task ("USD million", "%").
	Unit string `json:"unit,omitempty"`
	// UnitType and Category are keys of the tolerance table; the category
	// wins when both are set.
	UnitType string `json:"unit_type,omitempty"`
	Category string `json:"category,omitempty"`
	// Scale is the multiplier of Unit (1e6 for "USD million"); an answer
	// with an explicit scale word ("1.2 billion", "3亿") is converted into
	// it. 0 means no conversion.
	Scale float64 `json:"scale,omitempty"`
	// Truth is the ground truth (a number, or Yes/No); empty while
	// unknown. ResolvedAt is when it became known.
	Truth      string `json:"truth,omitempty"`
	ResolvedAt string `json:"resolved_at,omitempty"`

	tg, td, te, tr time.Time
	y              float64 // recurrent truth
	yes            bool    // non-recurrent truth
	eps            float64 // tolerance before scaling
	tolRow         int     // index of the tolerance row
	file           string
	line           int
}

// Resolved reports whether the task has a ground truth with its time.
func (t *Task) Resolved() bool { return t.Truth != "" && t.ResolvedAt != "" }

// Epsilon is the task's tolerance from the table it was loaded with
// (0 for non-recurrent tasks).
func (t *Task) Epsilon() float64 { return t.eps }

var (
	idRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)
	marketRE = regexp.MustCompile(`^[A-Z]{2}$`)
)

// taskFields are the field names of a task, also the CSV header names.
var taskFields = []string{"id", "week", "question", "t_generated", "t_deadline", "t_evaluated",
	"kind", "level", "market", "index", "entity", "metric", "unit", "unit_type", "category",
	"scale", "truth", "resolved_at"}

// ReadTasksJSONL reads tasks, one JSON object a line, and validates them
// against the tolerance table.
func ReadTasksJSONL(r io.Reader, file string, tol []Tolerance) ([]*Task, error) {
	var out []*Task
	err := results.EachJSONL(r, file, func(line int, t *Task) error {
		t.file, t.line = file, line
		out = append(out, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, validateTasks(out, tol)
}

// ReadTasksCSV reads tasks from a CSV file whose header names task fields
// (id, question, t_generated, ...); absent optional columns are empty.
func ReadTasksCSV(r io.Reader, file string, tol []Tolerance) ([]*Task, error) {
	ct, err := results.ReadCSV(r, file)
	if err != nil {
		return nil, err
	}
	for i, h := range ct.Header {
		if !slices.Contains(taskFields, h) {
			return nil, results.Errorf(file, len(ct.Comments)+1, h, "unknown column")
		}
		if slices.Contains(ct.Header[:i], h) {
			return nil, results.Errorf(file, len(ct.Comments)+1, h, "repeated column")
		}
	}
	var out []*Task
	for i, rec := range ct.Rows {
		t := &Task{file: file, line: ct.Lines[i]}
		for j, h := range ct.Header {
			if err := t.set(h, rec[j]); err != nil {
				return nil, results.Errorf(file, t.line, h, "%v", err)
			}
		}
		out = append(out, t)
	}
	return out, validateTasks(out, tol)
}

func (t *Task) set(field, v string) error {
	var err error
	switch field {
	case "id":
		t.ID = v
	case "week":
		if v != "" {
			t.Week, err = strconv.Atoi(v)
		}
	case "question":
		t.Question = v
	case "t_generated":
		t.Generated = v
	case "t_deadline":
		t.Deadline = v
	case "t_evaluated":
		t.Evaluated = v
	case "kind":
		t.Kind = v
	case "level":
		t.Level = v
	case "market":
		t.Market = v
	case "index":
		t.Index = v
	case "entity":
		t.Entity = v
	case "metric":
		t.Metric = v
	case "unit":
		t.Unit = v
	case "unit_type":
		t.UnitType = v
	case "category":
		t.Category = v
	case "scale":
		if v != "" {
			t.Scale, err = strconv.ParseFloat(v, 64)
		}
	case "truth":
		t.Truth = v
	case "resolved_at":
		t.ResolvedAt = v
	}
	if err != nil {
		return fmt.Errorf("not a number: %q", v)
	}
	return nil
}

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("not an RFC 3339 time: %q", s)
	}
	return t.UTC(), nil
}

// validateTasks checks every task and fills its parsed fields; the first
// problem is returned with the task's file, line and field.
func validateTasks(ts []*Task, tol []Tolerance) error {
	seen := map[string]int{}
	for _, t := range ts {
		if err := t.validate(tol); err != nil {
			return err
		}
		if l, ok := seen[t.ID]; ok {
			return results.Errorf(t.file, t.line, "id", "%q repeats line %d", t.ID, l)
		}
		seen[t.ID] = t.line
	}
	return nil
}

func (t *Task) validate(tol []Tolerance) error {
	bad := func(field, format string, args ...any) error {
		return results.Errorf(t.file, t.line, field, format, args...)
	}
	if !idRE.MatchString(t.ID) {
		return bad("id", "want 1-128 letters, digits, '.', '_' or '-', got %q", t.ID)
	}
	if t.Week < 1 {
		return bad("week", "want a week number from 1, got %d", t.Week)
	}
	if strings.TrimSpace(t.Question) == "" {
		return bad("question", "empty")
	}
	var err error
	for _, f := range []struct {
		name string
		s    string
		dst  *time.Time
	}{{"t_generated", t.Generated, &t.tg}, {"t_deadline", t.Deadline, &t.td}, {"t_evaluated", t.Evaluated, &t.te}} {
		if *f.dst, err = parseTime(f.s); err != nil {
			return bad(f.name, "%v", err)
		}
	}
	if !t.tg.Before(t.td) {
		return bad("t_deadline", "%s is not after t_generated %s", t.Deadline, t.Generated)
	}
	if !t.td.Before(t.te) {
		return bad("t_evaluated", "%s is not after t_deadline %s", t.Evaluated, t.Deadline)
	}
	if t.Level != Corporate && t.Level != Macro {
		return bad("level", "want %q or %q, got %q", Corporate, Macro, t.Level)
	}
	if !marketRE.MatchString(t.Market) {
		return bad("market", "want a two-letter code such as US, got %q", t.Market)
	}
	if t.Scale < 0 {
		return bad("scale", "negative")
	}
	if (t.Truth == "") != (t.ResolvedAt == "") {
		return bad("resolved_at", "truth and resolved_at go together")
	}
	if t.ResolvedAt != "" {
		if t.tr, err = parseTime(t.ResolvedAt); err != nil {
			return bad("resolved_at", "%v", err)
		}
	}
	switch t.Kind {
	case Recurrent:
		row := lookupTolerance(tol, t)
		if row < 0 {
			return bad("category", "no tolerance for category %q or unit_type %q", t.Category, t.UnitType)
		}
		t.tolRow, t.eps = row, tol[row].Epsilon
		if t.Truth != "" {
			n, err := ParseNumber(t.Truth)
			if err != nil {
				return bad("truth", "%v", err)
			}
			t.y = n.In(t.Scale)
		}
	case NonRecurrent:
		t.tolRow = -1
		if t.Truth != "" {
			if t.yes, err = ParseBinary(t.Truth); err != nil {
				return bad("truth", "%v", err)
			}
		}
	default:
		return bad("kind", "want %q or %q, got %q", Recurrent, NonRecurrent, t.Kind)
	}
	return nil
}

// readTasks reads tasks.jsonl, or tasks.csv when csv is set, from r, and
// makes the tasks share their equal strings.
func readTasks(r io.Reader, csv bool, tol []Tolerance) ([]*Task, error) {
	var ts []*Task
	var err error
	if csv {
		ts, err = ReadTasksCSV(r, TasksCSVFile, tol)
	} else {
		ts, err = ReadTasksJSONL(r, TasksJSONLFile, tol)
	}
	if err != nil {
		return nil, err
	}
	share(ts)
	return ts, nil
}

// share makes the tasks' equal strings one string: their kinds, markets,
// entities, metrics, units, truths and times recur from task to task, and
// each was decoded apart (a third of the tasks' bytes at 8x the full
// demo). IDs and questions are left as they are: each is the task's own.
func share(ts []*Task) {
	seen := map[string]string{}
	one := func(s *string) {
		if v, ok := seen[*s]; ok {
			*s = v
		} else {
			seen[*s] = *s
		}
	}
	for _, t := range ts {
		for _, s := range []*string{&t.Generated, &t.Deadline, &t.Evaluated, &t.Kind, &t.Level, &t.Market, &t.Index,
			&t.Entity, &t.Metric, &t.Unit, &t.UnitType, &t.Category, &t.Truth, &t.ResolvedAt} {
			one(s)
		}
	}
}
