package replay

import "github.com/finrepro/finrepro/results"

// An Oracle writes the simulated output of the "sim" provider: the demo's
// stand-in for a model. It must be deterministic: the same prompt (model,
// messages, parameters and sample) always gives the same text, whatever
// the order or concurrency of calls. Per-model faults (refusals, malformed
// output, latency) are applied by the simulator around it.
type Oracle interface {
	Respond(p results.Prompt) (string, error)
}

// OracleFunc adapts a function to Oracle.
type OracleFunc func(p results.Prompt) (string, error)

// Respond calls f.
func (f OracleFunc) Respond(p results.Prompt) (string, error) { return f(p) }
