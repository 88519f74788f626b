package forecast

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/results"
)

// Name is the benchmark's machine name; Title its display name.
const (
	Name  = "findeepforecast"
	Title = "FinDeepForecast"
)

// Input file names inside inputs/findeepforecast.
const (
	ConfigFile     = "config.json"
	TasksJSONLFile = "tasks.jsonl"
	TasksCSVFile   = "tasks.csv"
	LogFile        = "prediction_log.jsonl"
	ToleranceFile  = "tolerances.csv"
)

// Knob names.
const (
	KnobToleranceScale = "tolerance_scale"
	KnobLatePolicy     = "late_policy"
	KnobZeroRule       = "zero_rule"
	KnobValidityWeeks  = "validity_weeks"
	KnobCluster        = "cluster"
)

// A Benchmark is FinDeepForecast; it implements analysis.Benchmark.
type Benchmark struct{}

var _ analysis.Benchmark = Benchmark{}

// Name returns "findeepforecast".
func (Benchmark) Name() string { return Name }

// Title returns "FinDeepForecast".
func (Benchmark) Title() string { return Title }

// Knobs lists the settings Score reads; none changes the calls.
func (Benchmark) Knobs() []analysis.Knob {
	return []analysis.Knob{
		{Name: KnobToleranceScale, Default: "1", Doc: "multiplies every tolerance eps_k (positive number)"},
		{Name: KnobLatePolicy, Default: LateWrong, Doc: "predictions the isolation audit flags: wrong (counted incorrect, so accuracy = correct / resolved tasks) or exclude (left out of the system's scores)"},
		{Name: KnobZeroRule, Default: ZeroAbsolute, Doc: "recurrent tasks with ground truth 0: absolute (|yhat| < eps_k), exact (yhat = 0) or exclude"},
		{Name: KnobValidityWeeks, Default: "2", Doc: "weeks after t_e a task may stay pending before it is void (whole number >= 0)"},
		{Name: KnobCluster, Default: ClusterTask, Doc: "unit the clustered statistics of the overall table resample: task, company (the task's entity: company or economy), indicator (metric) or week (of release)"},
		uncertainty.Knob(),
		uncertainty.PairsKnob(),
	}
}

// ParseOptions reads the knobs from s.
func ParseOptions(s analysis.Settings) (Options, error) {
	o := DefaultOptions()
	v := s.Get(KnobToleranceScale, "1")
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !(x > 0) || math.IsInf(x, 0) {
		return o, analysis.BadSetting(KnobToleranceScale, v, "a positive number")
	}
	o.Scale = x
	switch o.LatePolicy = s.Get(KnobLatePolicy, LateWrong); o.LatePolicy {
	case LateExclude, LateWrong:
	default:
		return o, analysis.BadSetting(KnobLatePolicy, o.LatePolicy, LateWrong+" or "+LateExclude)
	}
	switch o.ZeroRule = s.Get(KnobZeroRule, ZeroAbsolute); o.ZeroRule {
	case ZeroAbsolute, ZeroExact, ZeroExclude:
	default:
		return o, analysis.BadSetting(KnobZeroRule, o.ZeroRule, ZeroAbsolute+", "+ZeroExact+" or "+ZeroExclude)
	}
	v = s.Get(KnobValidityWeeks, "2")
	if o.ValidityWeeks, err = strconv.Atoi(v); err != nil || o.ValidityWeeks < 0 || o.ValidityWeeks > 520 {
		return o, analysis.BadSetting(KnobValidityWeeks, v, "a whole number of weeks from 0 to 520")
	}
	switch o.Cluster = s.Get(KnobCluster, ClusterTask); o.Cluster {
	case ClusterTask, ClusterCompany, ClusterIndicator, ClusterWeek:
	default:
		return o, fmt.Errorf("%s: %s: want %s, %s, %s or %s, got %q", Name, KnobCluster, ClusterTask, ClusterCompany, ClusterIndicator, ClusterWeek, o.Cluster)
	}
	if o.ClusterReps, err = uncertainty.Reps(Name, s); err != nil {
		return o, err
	}
	if o.Pairs, err = uncertainty.ParsePairs(Name, s); err != nil {
		return o, err
	}
	return o, nil
}

// Inputs are the benchmark's loaded inputs.
type Inputs struct {
	Config     *Config
	Tasks      []*Task // sorted by ID
	Tolerances []Tolerance
	log        logTimes // dropped by Collect once its predictions are parsed
}

// LoadInputs reads the inputs from fsys (a bundle's inputs/findeepforecast).
func LoadInputs(fsys fs.FS) (*Inputs, error) {
	read := func(name string, required bool) ([]byte, error) {
		b, err := fs.ReadFile(fsys, name)
		if errors.Is(err, fs.ErrNotExist) && !required {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read inputs: %w", Name, err)
		}
		return b, nil
	}
	in := &Inputs{Tolerances: DefaultTolerances()}
	b, err := read(ConfigFile, true)
	if err != nil {
		return nil, err
	}
	if in.Config, err = ReadConfig(bytes.NewReader(b), ConfigFile); err != nil {
		return nil, err
	}
	if b, err = read(ToleranceFile, false); err != nil {
		return nil, err
	} else if b != nil {
		if in.Tolerances, err = ReadTolerances(bytes.NewReader(b), ToleranceFile); err != nil {
			return nil, err
		}
	}
	// The tasks and the log, the large files (20 MB at 8x the full demo),
	// are read as they are parsed, not whole first.
	open := func(name string, required bool) (fs.File, error) {
		f, err := fsys.Open(name)
		if errors.Is(err, fs.ErrNotExist) && !required {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: read inputs: %w", Name, err)
		}
		return f, nil
	}
	f, err := open(TasksJSONLFile, false)
	if err != nil {
		return nil, err
	}
	csv := f == nil
	if csv {
		if f, err = open(TasksCSVFile, true); err != nil {
			return nil, err
		}
	}
	in.Tasks, err = readTasks(f, csv, in.Tolerances)
	f.Close() // read only: nothing is lost
	if err != nil {
		return nil, err
	}
	if len(in.Tasks) == 0 {
		return nil, results.Errorf(TasksJSONLFile, 0, "", "no tasks")
	}
	slices.SortFunc(in.Tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	systems, tasks := map[string]int{}, make(map[string]int, len(in.Tasks))
	for i, s := range in.Config.Systems {
		systems[s.Name] = i
	}
	for i, t := range in.Tasks {
		tasks[t.ID] = i
	}
	if f, err = open(LogFile, false); err != nil {
		return nil, err
	}
	var log io.Reader = strings.NewReader("")
	if f != nil {
		defer f.Close() // read only: nothing is lost
		log = f
	}
	if in.log, err = readLog(log, systems, tasks); err != nil {
		return nil, err
	}
	return in, nil
}

// SystemPrompt is the system message of every forecasting call.
const SystemPrompt = "You are a financial forecaster. Answer the forecasting question using only information published before the forecast deadline."

// UserPrompt is the user message asking for task t's forecast.
func UserPrompt(t *Task) string {
	format := "Yes or No"
	if t.Kind == Recurrent {
		format = "a single number"
		if t.Unit != "" {
			format += " in " + t.Unit
		}
	}
	return "Task ID: " + t.ID + "\n" +
		"Question: " + t.Question + "\n" +
		"Forecast deadline: " + t.Deadline + "\n" +
		"Answer format: " + format + "\n" +
		"Reply with your reasoning, then one line \"Final answer: <value>\", then a section \"Evidence:\" " +
		"with one line per source you used: \"- <URL> (published <RFC 3339 time>)\".\n"
}

// Calls returns the forecasting calls, task by task (sorted by ID), each
// task's systems in configuration order.
func (in *Inputs) Calls() []results.Call { return in.calls(0, len(in.Tasks)) }

// calls returns the calls of tasks lo to hi-1, as Calls orders them.
func (in *Inputs) calls(lo, hi int) []results.Call {
	calls := make([]results.Call, 0, (hi-lo)*len(in.Config.Systems))
	for _, t := range in.Tasks[lo:hi] {
		user := UserPrompt(t)
		for _, s := range in.Config.Systems {
			calls = append(calls, results.Call{
				Prompt: results.Prompt{Provider: s.Provider, Model: s.Model, System: SystemPrompt, User: user, Params: s.Params},
				Label:  results.Label{Benchmark: Name, Task: t.ID, Role: results.RoleSystem, Name: s.Name},
			})
		}
	}
	return calls
}

// window is how many calls Collect answers at once, in whole tasks (at
// least one task): a window's calls and replies are all a collection
// holds of them at a time. The replay client builds, keys and looks up
// 512 calls at a time in parallel, and each Answer call has a fixed cost
// besides. Collect alone at 8x the full demo (161,504 calls, 3 rounds on
// a loaded 2-core machine): 7.8-8.9 CPU-s and 6.4-13.5 s with windows of
// 4,096 calls, 8.0-8.9 CPU-s and 7.7-9.9 s in one window, 7.8-8.1 CPU-s
// but 11.7-15.2 s with windows of 512.
const window = 4096

// A collection is what Collect gathered: the inputs and every reply
// parsed and audited. Score only reads it.
type collection struct {
	in        *Inputs
	preds     []Prediction // task ti's systems from ti*len(systems)
	synthetic bool
	missing   int
	// vias are the distinct (Model, Source) pairs of the replies, which
	// the predictions name by index; keys are the cache keys that are not
	// 64 lower-case hex digits, by prediction.
	vias []analysis.Call
	via  map[[2]string]int32
	keys map[int]string
	// leaks are the post-deadline sources of the predictions that cite
	// some (Prediction.Leaked), by prediction.
	leaks map[int][]Evidence
	texts analysis.TextStore
	// outputs[ti] keeps the texts the drill-downs show of task ti: its
	// systems' outputs, in system order, then its question. The replies
	// are most of what a collection would hold, and only the details show
	// them.
	outputs []analysis.TextRef
}

// newCollection returns an empty collection of in's tasks.
func newCollection(in *Inputs, texts analysis.TextStore) *collection {
	return &collection{in: in, preds: make([]Prediction, len(in.Tasks)*len(in.Config.Systems)),
		via: map[[2]string]int32{}, keys: map[int]string{}, leaks: map[int][]Evidence{}, texts: texts, outputs: make([]analysis.TextRef, len(in.Tasks))}
}

// pred returns the prediction of system s for task ti.
func (c *collection) pred(ti, s int) *Prediction { return &c.preds[ti*len(c.in.Config.Systems)+s] }

// add parses and audits replies, one per call of in.calls(lo, hi), in
// order, and puts the texts the details show in c.texts.
func (c *collection) add(lo, hi int, replies []results.Reply) {
	in := c.in
	ns := len(in.Config.Systems)
	texts := make([]string, ns+1)
	for ti := lo; ti < hi; ti++ {
		t := in.Tasks[ti]
		for s := range in.Config.Systems {
			i := ti*ns + s
			r := replies[i-lo*ns]
			c.synthetic = c.synthetic || r.Synthetic()
			logged, has := in.log.at(i)
			p := &c.preds[i]
			if leaks := p.parse(t, r, logged, has); leaks != nil {
				c.leaks[i] = leaks
			}
			c.setCall(i, r)
			if p.Missing {
				c.missing++
			}
			texts[s] = detailOutput(r)
		}
		texts[ns] = t.Question
		c.outputs[ti] = c.texts.Put(texts)
	}
}

// setCall keeps what CallOf(r, 0) would give for prediction i: its key as
// bytes and its (Model, Source) pair once for all predictions.
func (c *collection) setCall(i int, r results.Reply) {
	p := &c.preds[i]
	if r.Err != nil || r.Key == "" {
		return
	}
	p.hasCall = true
	if !keyBytes(p.key[:], r.Key) {
		c.keys[i] = r.Key
	}
	v := [2]string{r.Model, r.Source}
	k, ok := c.via[v]
	if !ok {
		k = int32(len(c.vias))
		c.via[v] = k
		c.vias = append(c.vias, analysis.Call{Model: strings.Clone(r.Model), Source: strings.Clone(r.Source)})
	}
	p.via = k
}

// keyBytes decodes key, when it is written as len(dst) bytes in
// lower-case hex, into dst and reports whether it was.
func keyBytes(dst []byte, key string) bool {
	if len(key) != hex.EncodedLen(len(dst)) {
		return false // hex.Decode would write past dst
	}
	_, err := hex.Decode(dst, []byte(key))
	return err == nil && hex.EncodeToString(dst) == key
}

// call returns the Call of prediction i, as CallOf gave it from its reply;
// nil when the reply had no answer.
func (c *collection) call(i int) *analysis.Call {
	p := &c.preds[i]
	if !p.hasCall {
		return nil
	}
	call := c.vias[p.via]
	if k, ok := c.keys[i]; ok {
		call.Key = k
	} else {
		call.Key = hex.EncodeToString(p.key[:])
	}
	return &call
}

// detailOutput is the output a drill-down shows of reply r: its text, cut
// at maxDetailOutput bytes; "" for a missing reply.
func detailOutput(r results.Reply) string {
	if r.Err != nil {
		return ""
	}
	out := r.Text
	if len(out) > maxDetailOutput {
		out = clip(out, maxDetailOutput) + "\n[output truncated: " + strconv.Itoa(len(r.Text)) + " bytes in all]"
	}
	return out
}

// release drops what scoring does not read of tasks lo to hi-1 once
// their calls are made and their questions are in c.texts.
func (c *collection) release(lo, hi int) {
	for _, t := range c.in.Tasks[lo:hi] {
		t.Question, t.Generated, t.Evaluated, t.Index, t.Unit, t.UnitType, t.Category = "", "", "", "", "", "", ""
	}
}

// Collect loads the inputs, asks every system for every task's forecast,
// a window of calls at a time, and parses and audits each window's
// replies before it makes the next window's calls. It reads no setting.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if in.Bundle == nil || in.Answer == nil {
		return nil, fmt.Errorf("%s: run: no bundle or answerer", Name)
	}
	// Settings are checked before any call is made, although Collect
	// uses none: a bad value must not cost a recording.
	if _, err := ParseOptions(in.Settings); err != nil {
		return nil, err
	}
	inputs, err := LoadInputs(in.Bundle.Inputs(Name))
	if err != nil {
		return nil, err
	}
	return collect(ctx, inputs, in.Answer, analysis.TextsOf(in), window)
}

// collect answers in's calls through a, windowCalls calls (whole tasks,
// at least one) in each Answer call, and gathers the collection. What
// scoring does not read of the inputs is dropped as it goes: each task's
// question and the fields only its calls read once they are answered,
// the prediction log at the end.
func collect(ctx context.Context, in *Inputs, a results.Answerer, texts analysis.TextStore, windowCalls int) (*collection, error) {
	c := newCollection(in, texts)
	ns := len(in.Config.Systems)
	per := max(1, windowCalls/ns)
	for lo := 0; lo < len(in.Tasks); lo += per {
		hi := min(len(in.Tasks), lo+per)
		calls := in.calls(lo, hi)
		replies := a.Answer(ctx, calls)
		if len(replies) != len(calls) {
			return nil, fmt.Errorf("%s: run: %d replies to %d calls", Name, len(replies), len(calls))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.add(lo, hi, replies)
		c.release(lo, hi)
	}
	in.log = logTimes{}
	return c, nil
}

// Score scores a collection under s and builds the tables.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: score: not a %s collection", Name, Name)
	}
	opt, err := ParseOptions(s)
	if err != nil {
		return nil, err
	}
	return col.score(opt), nil
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}
