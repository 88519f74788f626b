// Package demo builds finrepro's synthetic demo bundle: each benchmark's
// generator writes simulated inputs, then the benchmark runs against the
// "sim" provider through the recorder, so the demo takes the same code
// path as a real recording. Everything it makes is synthetic and says so.
package demo

import (
	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/replay"
)

// A Scale is the size of a demo bundle.
type Scale string

// Scales.
const (
	Small Scale = "small" // the built-in default: a few MB, reproduces in seconds
	Full  Scale = "full"  // the papers' full sizes, for benchmarks
)

// Options control a demo build.
type Options struct {
	Scale Scale
	Seed  uint64
	// Factor multiplies the task-like dimension of every benchmark at Full
	// scale (queries, forecasting tasks, companies per market, repeated
	// ICBCBench tasks), for measuring how costs grow; 0 or 1 is the
	// papers' size. It is ignored at Small scale.
	Factor int
	// Secrets are values (API keys of the environment) that must not
	// appear anywhere in the bundle; Build refuses to seal one that holds
	// any of them or anything shaped like a key.
	Secrets []string
}

// A Generator makes one benchmark's part of the demo bundle.
type Generator interface {
	// Benchmark is the benchmark the generated inputs are for.
	Benchmark() analysis.Benchmark
	// Generate writes the benchmark's inputs into dir (the bundle's
	// inputs/<benchmark> folder) and returns the oracle that answers the
	// benchmark's calls to the sim provider. Everything is derived from
	// opt.Seed: two builds with the same options are byte-identical.
	Generate(dir string, opt Options) (replay.Oracle, error)
}

// factor is the multiplier of the task-like dimensions: Factor at Full
// scale when above 1, otherwise 1.
func (o Options) factor() int {
	if o.Scale != Full || o.Factor < 1 {
		return 1
	}
	return o.Factor
}
