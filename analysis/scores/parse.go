package scores

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Limits on a score matrix, so that hostile input costs bounded memory
// and time (the statistics cost about reps × clusters × systems).
const (
	MaxBytes   = 256 << 20 // the whole file
	MaxSystems = 1000
	MaxCells   = 1 << 22 // tasks × systems, and records of a long file
	maxLine    = 16 << 20
)

// A Matrix is a per-task score matrix: Scores[s][t] is system s's score on
// task t, NaN where s has no score for t.
type Matrix struct {
	// File names the source in errors and captions.
	File string
	// Tasks are the task identifiers in the order of the file; Systems
	// are sorted.
	Tasks   []string
	Systems []string
	Scores  [][]float64
	// Cluster is each task's cluster label: the cluster column's value,
	// or the task itself when there is no cluster column.
	Cluster []string
	// Groups are the group columns, in the order asked for.
	Groups []Group
}

// A Group is a group column: each task's value.
type Group struct {
	Name   string
	Values []string
}

// Options name the columns of a score matrix.
type Options struct {
	// TaskCol is the task identifier column ("task" when empty).
	TaskCol string
	// GroupCols are columns that group tasks (language, theme).
	GroupCols []string
	// ClusterCol is the column whose value is a task's cluster (company,
	// query); every task is its own cluster when empty.
	ClusterCol string
}

func (o Options) taskCol() string {
	if o.TaskCol == "" {
		return "task"
	}
	return o.TaskCol
}

// A ParseError is a problem in a score matrix file, at a line (1-based)
// and, where there is one, a field.
type ParseError struct {
	File  string
	Line  int
	Field string
	Err   string
}

func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s:%d: field %q: %s", e.File, e.Line, e.Field, e.Err)
}

// Parse reads a score matrix from r. A name ending in .jsonl or .ndjson
// is read as JSON Lines, anything else as CSV (RFC 4180, a header row
// first). Either holds one task per row with the systems as columns
// ("wide"), or one score per row with columns system and score ("long").
// A score is a finite number; an empty cell, NA or null is a missing
// score. Errors are *ParseError values naming the file, line and field.
func Parse(name string, r io.Reader, opt Options) (*Matrix, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scores: read %s: %w", name, err)
	}
	if len(data) > MaxBytes {
		return nil, &ParseError{name, 1, "", fmt.Sprintf("file larger than %d bytes", MaxBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	b := newBuilder(name, opt)
	if ext := strings.ToLower(name); strings.HasSuffix(ext, ".jsonl") || strings.HasSuffix(ext, ".ndjson") {
		err = b.readJSONL(data)
	} else {
		err = b.readCSV(data)
	}
	if err != nil {
		return nil, err
	}
	return b.matrix()
}

// A builder collects the records of a matrix file.
type builder struct {
	file string
	opt  Options
	long bool
	// task index by id, and per task its line, cluster and groups
	taskIdx map[string]int
	tasks   []string
	lines   []int
	cluster []string
	groups  [][]string // [group][task]
	// scores by system, then by task, and their number
	sys     map[string]map[int]float64
	records int
}

func newBuilder(file string, opt Options) *builder {
	return &builder{file: file, opt: opt, taskIdx: map[string]int{}, groups: make([][]string, len(opt.GroupCols)),
		sys: map[string]map[int]float64{}}
}

func (b *builder) errf(line int, field, format string, args ...any) error {
	return &ParseError{b.file, line, field, fmt.Sprintf(format, args...)}
}

// meta says whether a column is the task, cluster or a group column.
func (b *builder) meta(col string) bool {
	return col == b.opt.taskCol() || col == b.opt.ClusterCol && col != "" || slices.Contains(b.opt.GroupCols, col)
}

// task registers the task of a record and its cluster and groups (which,
// in long format, every record of the task must repeat) and returns its
// index.
func (b *builder) task(line int, id string, get func(col string) (string, bool)) (int, error) {
	if id == "" {
		return 0, b.errf(line, b.opt.taskCol(), "empty task identifier")
	}
	cl := id
	if b.opt.ClusterCol != "" {
		v, _ := get(b.opt.ClusterCol)
		if v == "" {
			return 0, b.errf(line, b.opt.ClusterCol, "empty cluster for task %q", id)
		}
		cl = v
	}
	gv := make([]string, len(b.opt.GroupCols))
	for g, c := range b.opt.GroupCols {
		gv[g], _ = get(c)
	}
	if t, ok := b.taskIdx[id]; ok {
		if !b.long {
			return 0, b.errf(line, b.opt.taskCol(), "task %q repeats line %d", id, b.lines[t])
		}
		if b.cluster[t] != cl {
			return 0, b.errf(line, b.opt.ClusterCol, "task %q has cluster %q here and %q on line %d", id, cl, b.cluster[t], b.lines[t])
		}
		for g, c := range b.opt.GroupCols {
			if b.groups[g][t] != gv[g] {
				return 0, b.errf(line, c, "task %q has %q here and %q on line %d", id, gv[g], b.groups[g][t], b.lines[t])
			}
		}
		return t, nil
	}
	t := len(b.tasks)
	b.taskIdx[id] = t
	b.tasks = append(b.tasks, id)
	b.lines = append(b.lines, line)
	b.cluster = append(b.cluster, cl)
	for g := range gv {
		b.groups[g] = append(b.groups[g], gv[g])
	}
	return t, nil
}

// score records system's score on task t; missing scores are recorded as
// NaN so that a repeat is still caught.
func (b *builder) score(line int, system string, t int, v float64, field string) error {
	m, ok := b.sys[system]
	if !ok {
		if len(b.sys) >= MaxSystems {
			return b.errf(line, field, "more than %d systems", MaxSystems)
		}
		m = map[int]float64{}
		b.sys[system] = m
	}
	if _, dup := m[t]; dup {
		return b.errf(line, field, "second score of system %q on task %q", clip(system), clip(b.tasks[t]))
	}
	if b.records++; b.records > MaxCells {
		return b.errf(line, field, "more than %d scores", MaxCells)
	}
	m[t] = v
	return nil
}

// number parses a score: a finite decimal number, or missing.
func (b *builder) number(line int, field, s string) (float64, error) {
	switch strings.TrimSpace(s) {
	case "", "NA":
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, b.errf(line, field, "score %q is not a finite number", clip(s))
	}
	return v, nil
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (b *builder) readCSV(data []byte) error {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return b.csvErr(err)
	}
	col := map[string]int{}
	for i, h := range header {
		if h == "" {
			return b.errf(1, fmt.Sprintf("column %d", i+1), "empty column name")
		}
		if _, dup := col[h]; dup {
			return b.errf(1, h, "column name repeats")
		}
		col[h] = i
	}
	for _, c := range append([]string{b.opt.taskCol(), b.opt.ClusterCol}, b.opt.GroupCols...) {
		if _, ok := col[c]; !ok && c != "" {
			return b.errf(1, c, "no such column in the header")
		}
	}
	_, hasSys := col["system"]
	_, hasScore := col["score"]
	b.long = hasSys && hasScore
	var systems []string
	for _, h := range header {
		if b.meta(h) {
			continue
		}
		if b.long && h != "system" && h != "score" {
			return b.errf(1, h, "unexpected column in long format (task, system, score, group and cluster columns)")
		}
		if !b.long {
			systems = append(systems, h)
		}
	}
	if !b.long && len(systems) > MaxSystems {
		return b.errf(1, "", "more than %d systems", MaxSystems)
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.csvErr(err)
		}
		line, _ := cr.FieldPos(0)
		get := func(c string) (string, bool) {
			i, ok := col[c]
			if !ok {
				return "", false
			}
			return rec[i], true
		}
		t, err := b.task(line, rec[col[b.opt.taskCol()]], get)
		if err != nil {
			return err
		}
		if b.long {
			sys := rec[col["system"]]
			if sys == "" {
				return b.errf(line, "system", "empty system name")
			}
			v, err := b.number(line, "score", rec[col["score"]])
			if err != nil {
				return err
			}
			if err := b.score(line, sys, t, v, "score"); err != nil {
				return err
			}
			continue
		}
		for _, s := range systems {
			v, err := b.number(line, s, rec[col[s]])
			if err != nil {
				return err
			}
			if err := b.score(line, s, t, v, s); err != nil {
				return err
			}
		}
		if len(b.tasks)*max(1, len(systems)) > MaxCells {
			return b.errf(line, "", "more than %d cells", MaxCells)
		}
	}
	if len(b.tasks) == 0 {
		return b.errf(1, "", "no task rows after the header")
	}
	return nil
}

func (b *builder) csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return b.errf(pe.Line, fmt.Sprintf("column %d", pe.Column), "%v", pe.Err)
	}
	if err == io.EOF {
		return b.errf(1, "", "empty file")
	}
	return fmt.Errorf("scores: read %s: %w", b.file, err)
}

// eachObject calls fn with each non-blank line of data, a JSON object
// whose numbers are json.Numbers, and its line number.
func (b *builder) eachObject(data []byte, fn func(line int, obj map[string]any) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			return b.errf(line, "", "not a JSON object: %v", err)
		}
		if obj == nil {
			return b.errf(line, "", "not a JSON object: null")
		}
		if dec.More() {
			return b.errf(line, "", "more than one JSON value on the line")
		}
		if err := fn(line, obj); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return b.errf(line+1, "", "%v", err)
	}
	return nil
}

// objectTask reads the task, cluster and group columns of obj, a record
// on line line, and returns the index of its task.
func (b *builder) objectTask(line int, obj map[string]any) (int, error) {
	fields := map[string]string{}
	for _, c := range append([]string{b.opt.taskCol(), b.opt.ClusterCol}, b.opt.GroupCols...) {
		if c == "" {
			continue
		}
		v, ok := obj[c]
		if !ok {
			return 0, b.errf(line, c, "missing")
		}
		s, err := b.label(line, c, v)
		if err != nil {
			return 0, err
		}
		fields[c] = s
	}
	get := func(c string) (string, bool) { s, ok := fields[c]; return s, ok }
	return b.task(line, fields[b.opt.taskCol()], get)
}

func (b *builder) readJSONL(data []byte) error {
	err := b.eachObject(data, func(line int, obj map[string]any) error {
		if len(b.tasks) == 0 {
			_, b.long = obj["system"]
		}
		t, err := b.objectTask(line, obj)
		if err != nil {
			return err
		}
		if b.long {
			sys, ok := obj["system"].(string)
			if !ok || sys == "" {
				return b.errf(line, "system", "want a non-empty string")
			}
			for k := range obj {
				if !b.meta(k) && k != "system" && k != "score" {
					return b.errf(line, k, "unexpected field in long format")
				}
			}
			v, err := b.jsonScore(line, "score", obj["score"])
			if err != nil {
				return err
			}
			return b.score(line, sys, t, v, "score")
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			if !b.meta(k) {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys) // the first error does not depend on map order
		for _, k := range keys {
			v, err := b.jsonScore(line, k, obj[k])
			if err != nil {
				return err
			}
			if err := b.score(line, k, t, v, k); err != nil {
				return err
			}
		}
		if len(b.tasks)*max(1, len(b.sys)) > MaxCells {
			return b.errf(line, "", "more than %d cells", MaxCells)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(b.tasks) == 0 {
		return b.errf(1, "", "no task lines")
	}
	return nil
}

// label turns a JSON task, cluster or group value into text: a string, or
// a number as written.
func (b *builder) label(line int, field string, v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", b.errf(line, field, "want a string or a number")
}

func (b *builder) jsonScore(line int, field string, v any) (float64, error) {
	switch x := v.(type) {
	case nil:
		return math.NaN(), nil
	case json.Number:
		f, err := strconv.ParseFloat(x.String(), 64)
		if err != nil || math.IsInf(f, 0) {
			return 0, b.errf(line, field, "score %s is not a finite number", clip(x.String()))
		}
		return f, nil
	}
	return 0, b.errf(line, field, "score is not a number or null")
}

// matrix assembles the parsed records: systems sorted, a score NaN where
// a system has none for a task.
func (b *builder) matrix() (*Matrix, error) {
	m := &Matrix{File: b.file, Tasks: b.tasks, Cluster: b.cluster}
	m.Systems = slices.Sorted(maps.Keys(b.sys))
	if len(m.Systems) == 0 {
		return nil, b.errf(1, "", "no system columns")
	}
	if len(m.Systems)*len(m.Tasks) > MaxCells {
		return nil, b.errf(1, "", "more than %d cells", MaxCells)
	}
	for _, s := range m.Systems {
		row := make([]float64, len(m.Tasks))
		for t := range row {
			row[t] = math.NaN()
		}
		for t, v := range b.sys[s] {
			row[t] = v
		}
		m.Scores = append(m.Scores, row)
	}
	for g, c := range b.opt.GroupCols {
		m.Groups = append(m.Groups, Group{Name: c, Values: b.groups[g]})
	}
	return m, nil
}

// ParsePublished reads published means from CSV: a header row, then one
// row per system with the system's name in the first column and its
// published mean in the second, as printed (its last digit sets the
// tolerance of the comparison). Other columns are ignored.
func ParsePublished(name string, r io.Reader) ([]Published, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scores: read %s: %w", name, err)
	}
	if len(data) > MaxBytes {
		return nil, &ParseError{name, 1, "", fmt.Sprintf("file larger than %d bytes", MaxBytes)}
	}
	b := newBuilder(name, Options{})
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\uFEFF"))))
	header, err := cr.Read()
	if err != nil {
		return nil, b.csvErr(err)
	}
	if len(header) < 2 {
		return nil, b.errf(1, "", "want a system column and a published mean column")
	}
	var out []Published
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, b.csvErr(err)
		}
		line, _ := cr.FieldPos(0)
		if rec[0] == "" {
			return nil, b.errf(line, header[0], "empty system name")
		}
		if l, dup := seen[rec[0]]; dup {
			return nil, b.errf(line, header[0], "system %q repeats line %d", clip(rec[0]), l)
		}
		seen[rec[0]] = line
		v, err := b.number(line, header[1], rec[1])
		if err != nil {
			return nil, err
		}
		if math.IsNaN(v) {
			continue // no published value
		}
		out = append(out, Published{System: rec[0], Value: v, Tolerance: tolerance(rec[1])})
	}
	return out, nil
}
