package forecast

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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
	log        map[logKey]time.Time
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
	jl, err := read(TasksJSONLFile, false)
	if err != nil {
		return nil, err
	}
	var cs []byte
	if jl == nil {
		if cs, err = read(TasksCSVFile, true); err != nil {
			return nil, err
		}
	}
	if in.Tasks, err = readTasks(jl, cs, in.Tolerances); err != nil {
		return nil, err
	}
	if len(in.Tasks) == 0 {
		return nil, results.Errorf(TasksJSONLFile, 0, "", "no tasks")
	}
	slices.SortFunc(in.Tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	systems, tasks := map[string]bool{}, map[string]bool{}
	for _, s := range in.Config.Systems {
		systems[s.Name] = true
	}
	for _, t := range in.Tasks {
		tasks[t.ID] = true
	}
	if b, err = read(LogFile, false); err != nil {
		return nil, err
	}
	if in.log, err = readLog(b, systems, tasks); err != nil {
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
func (in *Inputs) Calls() []results.Call {
	calls := make([]results.Call, 0, len(in.Tasks)*len(in.Config.Systems))
	for _, t := range in.Tasks {
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

// A collection is what Collect gathered: the inputs and every reply
// parsed and audited. Score only reads it.
type collection struct {
	in        *Inputs
	preds     [][]*Prediction // [task][system]
	synthetic bool
	missing   int
	// texts keeps the drill-downs' outputs, those of task ti's systems,
	// in system order, at outputs[ti]: the replies are most of what a
	// collection would hold, and only the details show them.
	texts   analysis.TextStore
	outputs []analysis.TextRef
}

// newCollection parses and audits replies, one per call of in.Calls, in
// order, and puts the outputs the details show in texts.
func newCollection(in *Inputs, replies []results.Reply, texts analysis.TextStore) *collection {
	ns := len(in.Config.Systems)
	c := &collection{in: in, preds: make([][]*Prediction, len(in.Tasks)), texts: texts, outputs: make([]analysis.TextRef, len(in.Tasks))}
	all := make([]Prediction, len(in.Tasks)*ns)
	outs := make([]string, ns)
	for ti, t := range in.Tasks {
		c.preds[ti] = make([]*Prediction, ns)
		for s, sys := range in.Config.Systems {
			r := replies[ti*ns+s]
			c.synthetic = c.synthetic || r.Synthetic()
			logged, has := in.log[logKey{sys.Name, t.ID}]
			p := &all[ti*ns+s]
			p.parse(t, s, r, logged, has)
			p.call = analysis.CallOf(r, 0)
			if p.Missing {
				c.missing++
			}
			c.preds[ti][s] = p
			outs[s] = detailOutput(r)
		}
		c.outputs[ti] = texts.Put(outs)
	}
	return c
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

// Collect loads the inputs, asks every system for every task's forecast
// in one batch and parses the replies. It reads no setting.
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
	calls := inputs.Calls()
	replies := in.Answer.Answer(ctx, calls)
	if len(replies) != len(calls) {
		return nil, fmt.Errorf("%s: run: %d replies to %d calls", Name, len(replies), len(calls))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return newCollection(inputs, replies, analysis.TextsOf(in)), nil
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
