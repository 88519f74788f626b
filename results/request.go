package results

import (
	"context"
	"fmt"
)

// A Prompt is one provider-neutral model request. The replay package turns
// it into the provider's request body; the cache key is derived from that
// body, so two equal prompts always map to the same recorded exchange.
type Prompt struct {
	// Provider names a configured provider ("openai", "anthropic",
	// "gemini", "sim", ...).
	Provider string `json:"provider"`
	// Model is the model name sent to the provider.
	Model string `json:"model"`
	// System is the system message; empty for none.
	System string `json:"system,omitempty"`
	// User is the user message.
	User string `json:"user"`
	// Params are generation parameters copied into the request body
	// (temperature, max_tokens, seed, ...). Values must be JSON-encodable.
	Params map[string]any `json:"params,omitempty"`
	// Sample is the index of repeated draws of the same request.
	Sample int `json:"sample,omitempty"`
}

// A Role says whether a call is made to an evaluated system or to a judge.
type Role string

// The roles of a call.
const (
	RoleSystem Role = "system"
	RoleJudge  Role = "judge"
)

// A Label says what a call is for. It never reaches the cache key; it
// exists so that a cache miss can be reported in the user's terms.
type Label struct {
	Benchmark string `json:"benchmark"`
	Task      string `json:"task"`
	Role      Role   `json:"role"`
	// Name is the system or judge name as the benchmark knows it.
	Name string `json:"name"`
}

// String formats l as "benchmark task role name".
func (l Label) String() string {
	return fmt.Sprintf("%s task %s %s %s", l.Benchmark, l.Task, l.Role, l.Name)
}

// A Call is a prompt with its label.
type Call struct {
	Prompt Prompt
	Label  Label
}

// Sources of an exchange.
const (
	SourceAPI    = "api"    // recorded from a provider's API
	SourceBatch  = "batch"  // recorded through a provider's batch API
	SourceImport = "import" // imported from results produced elsewhere
	SourceSim    = "sim"    // produced by the built-in simulator: synthetic
)

// A Reply is the answer to one Call.
type Reply struct {
	// Text is the model's output text.
	Text string
	// Model is the model name the provider reported.
	Model string
	// Source is SourceAPI, SourceBatch, SourceImport or SourceSim.
	Source string
	// Key is the hex cache key of the exchange.
	Key string
	// RecordedAt is when the exchange was recorded (RFC 3339, UTC), as
	// stored in the cache; empty when unknown.
	RecordedAt string
	// Err is non-nil when there is no answer: a cache miss in offline
	// mode or a failed recording. Text is then empty.
	Err error
}

// Synthetic reports whether the reply was produced by the simulator.
func (r Reply) Synthetic() bool { return r.Source == SourceSim }

// An Answerer answers calls, in order: reply i answers call i. It never
// returns fewer replies than calls; a call it cannot answer gets a Reply
// with Err set. The replay package's client is the Answerer every
// benchmark uses.
type Answerer interface {
	Answer(ctx context.Context, calls []Call) []Reply
}
