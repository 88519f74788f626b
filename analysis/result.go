package analysis

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// A Result is everything one benchmark's analysis produced.
type Result struct {
	// Benchmark is the machine name ("finresearchbench2"); Title the
	// display name ("FinResearchBench II").
	Benchmark string
	Title     string
	// Tables are the named tables, in display order.
	Tables []*Table
	// Headline names the table reproduce prints on the terminal.
	Headline string
	// Ranking is the headline ranking, best first, by system name; sweeps
	// compare rankings.
	Ranking []string
	// Scores are the headline scores by system, for sweeps.
	Scores map[string]float64
	// Details are per-task drill-downs for the site, sorted by task and
	// system.
	Details []Detail
	// LazyDetails, when not nil, yields the details in place of Details
	// (which is then nil), in the same order, generated from the
	// collection as they are asked for: a benchmark whose details are
	// large (FinDeepResearch: every item's answer, truth and verdict for
	// every report) sets it, so that a run can write them out one task
	// at a time and a sweep's variants never make them. See AllDetails.
	LazyDetails iter.Seq[Detail] `json:"-"`
	// Problems are non-fatal findings (unparsable judge responses,
	// inconsistent rubrics, late predictions), sorted.
	Problems []string
	// Synthetic is true when any reply came from the simulator.
	Synthetic bool
	// Missing counts calls that had no reply (cache misses or failures).
	Missing int
	// Items are the per-item records behind the tables, when the
	// benchmark lists them (see ItemLister); nil otherwise. Golden
	// files of results leave them out: they are checked on their own.
	Items *Items `json:"-"`
}

// EachDetail yields r's details: those of Details, or those LazyDetails
// yields when Details is nil.
func (r *Result) EachDetail() iter.Seq[Detail] {
	if r.Details != nil || r.LazyDetails == nil {
		return slices.Values(r.Details)
	}
	return r.LazyDetails
}

// AllDetails returns r's details: Details, or all that LazyDetails
// yields when Details is nil.
func (r *Result) AllDetails() []Detail {
	if r.Details != nil || r.LazyDetails == nil {
		return r.Details
	}
	return slices.Collect(r.LazyDetails)
}

// Table returns the named table, or nil.
func (r *Result) Table(name string) *Table {
	for _, t := range r.Tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// A Detail is one system's output on one task with every judge's verdict.
type Detail struct {
	Task   string
	System string
	// Question is the task text shown above the output.
	Question string
	// Output is the system's output (markdown or plain text, shown
	// escaped, never as raw HTML).
	Output string
	// Score is a short summary of the task score ("correct", "58.0/100").
	Score    string
	Verdicts []Verdict
	// Call is the recorded exchange that produced Output, when the
	// benchmark asked the system for it (nil when the output came with
	// the bundle). It is where the output came from, not part of the
	// result: a run answered without a cache has none, and results
	// compare (and encode) without it.
	Call *Call `json:"-"`
}

// A Verdict is one judge's grade of one output.
type Verdict struct {
	Judge     string
	Verdict   string
	Reasoning string
	// Call is the judge exchange the verdict was read from; nil for a
	// verdict no model gave (a rule, a structure check, an extraction).
	// The verdicts read from one exchange share one Call: a task's
	// details can hold a million verdicts. Like Detail.Call, it is left
	// out of the result's encoding.
	Call *Call `json:"-"`
}

// A Call names the recorded exchange behind an output or a verdict: the
// cache key with what the reply said about the record, so that a page can
// show the exchange as stored and how it was obtained. It holds no cache
// type: results and analysis stay free of the cache.
type Call struct {
	// Key is the hex cache key of the exchange.
	Key string
	// Sample is the index of the repeated draw (results.Prompt.Sample).
	Sample int
	// Model is the model the provider reported; Source how the exchange
	// was obtained (results.SourceAPI, SourceBatch, SourceImport,
	// SourceSim).
	Model  string
	Source string
}

// CallOf returns the Call of reply rep to a prompt of sample index
// sample; nil when rep has no answer.
func CallOf(rep results.Reply, sample int) *Call {
	if rep.Err != nil || rep.Key == "" {
		return nil
	}
	return &Call{Key: rep.Key, Sample: sample, Model: rep.Model, Source: rep.Source}
}

// A Knob is a setting a sensitivity sweep can vary.
type Knob struct {
	Name    string // "judges", "consistency", "tolerance_scale", ...
	Default string
	Doc     string
	// Sweep lists the values reproduce sweeps by default (besides Default);
	// empty for a knob that is only swept on request.
	Sweep []string
	// Calls is true when the knob changes which calls Collect makes, so a
	// sweep must collect again for each of its values; false when only
	// Score reads it.
	Calls bool
	// Resamples is true for a bootstrap resample count: it changes
	// intervals, never a ranking, so a sweep's variants (which keep only
	// rankings) set it to 0 and skip the resampling, unless it is the knob
	// being swept.
	Resamples bool
}

// A SettingError is a knob value a benchmark does not accept. Commands
// report it as a usage error, with the benchmark's name and, when Want is
// empty, the knob's Doc.
type SettingError struct {
	Knob, Value string
	// Want says what the knob accepts; empty when its Doc says it.
	Want string
}

func (e *SettingError) Error() string {
	s := fmt.Sprintf("knob %s: value %q not accepted", e.Knob, e.Value)
	if e.Want != "" {
		s += "; want " + e.Want
	}
	return s
}

// BadSetting returns a SettingError.
func BadSetting(knob, value, want string) error {
	return &SettingError{Knob: knob, Value: value, Want: want}
}

// Settings map knob names to values; a knob that is absent has its default.
type Settings map[string]string

// An Input is what a benchmark's Run reads.
type Input struct {
	Bundle   *results.Bundle
	Answer   results.Answerer
	Settings Settings
	// Texts keeps the texts a collection needs only for details and
	// audits (see TextStore); nil keeps them in memory.
	Texts TextStore
}

// A Benchmark is one paper's protocol, in two steps. Collect loads the
// inputs, answers every call and parses the replies: it is the only step
// that reads the cache. Score computes the result from what Collect
// gathered under some settings. A sensitivity sweep collects once and
// scores every variant.
type Benchmark interface {
	// Name is the machine name, also the bundle folder name.
	Name() string
	// Title is the display name.
	Title() string
	// Knobs are the settings Collect and Score understand.
	Knobs() []Knob
	// Collect loads the benchmark's inputs from in.Bundle, answers its
	// calls through in.Answer and parses the replies. It reads only the
	// knobs marked Calls from in.Settings. Bad input is an error naming
	// file, line and field. Calls without a reply are counted (see
	// Result.Missing), never scored as right or wrong, and never an
	// error.
	Collect(ctx context.Context, in Input) (Collection, error)
	// Score scores a collection of this benchmark under settings s, which
	// differ from the collection's only in knobs not marked Calls. It must
	// not modify c: a sweep scores one collection under many settings at
	// once.
	Score(ctx context.Context, c Collection, s Settings) (*Result, error)
}

// A Collection is what a benchmark's Collect gathered; only the same
// benchmark's Score reads it.
type Collection any

// Run collects and scores b under in.Settings.
func Run(ctx context.Context, b Benchmark, in Input) (*Result, error) {
	c, err := b.Collect(ctx, in)
	if err != nil {
		return nil, err
	}
	return b.Score(ctx, c, in.Settings)
}

// Get returns the value of knob name in s, or def.
func (s Settings) Get(name, def string) string {
	if v, ok := s[name]; ok {
		return v
	}
	return def
}

// Validate reports the settings that name no knob of b.
func (s Settings) Validate(b Benchmark) error {
	var unknown []string
	for name := range s {
		if !slices.ContainsFunc(b.Knobs(), func(k Knob) bool { return k.Name == name }) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	var names []string
	for _, k := range b.Knobs() {
		names = append(names, k.Name)
	}
	return fmt.Errorf("%s: unknown knob %s (knobs: %s)", b.Name(), strings.Join(unknown, ", "), strings.Join(names, ", "))
}
