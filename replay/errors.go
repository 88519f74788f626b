package replay

import (
	"encoding/json"
	"fmt"

	"github.com/finrepro/finrepro/results"
)

// A Miss is a request that is not stored, in offline mode.
type Miss struct {
	// Label is the first call that asked for it.
	Label    results.Label
	Key      string
	Provider string
	Model    string
	// InputTokens and OutputTokens estimate the request's size.
	InputTokens, OutputTokens int
	// CostUSD estimates recording it; Priced is false when the model has
	// no price.
	CostUSD float64
	Priced  bool
	// Request is the request object.
	Request json.RawMessage
}

// String formats m as "label: provider model key KEY8, ~IN in + ~OUT out
// tokens, $COST".
func (m Miss) String() string {
	price := "no price"
	if m.Priced {
		price = fmt.Sprintf("$%.4f", m.CostUSD)
	}
	return fmt.Sprintf("%s: %s %s key %.8s, ~%d in + ~%d out tokens, %s",
		LabelText(m.Label), m.Provider, m.Model, m.Key, m.InputTokens, m.OutputTokens, price)
}

// A MissError is the error of a reply whose request is not stored, in
// offline mode.
type MissError struct {
	Key   string
	Label results.Label
}

// Error names the key and the label of the missing request.
func (e *MissError) Error() string {
	return fmt.Sprintf("replay: not in the cache: %.8s (%s)", e.Key, LabelText(e.Label))
}

// A Cause classifies why a request could not be answered.
type Cause string

// Causes of failures. Those marked transient are retried.
const (
	CauseRateLimited Cause = "rate_limited"       // HTTP 429; transient
	CauseServer      Cause = "server_error"       // HTTP 5xx; transient
	CauseTimeout     Cause = "timeout"            // attempt timed out or HTTP 408; transient
	CauseConnection  Cause = "connection"         // refused, reset or closed; transient
	CauseTruncated   Cause = "truncated_body"     // body ended early; transient
	CauseMalformed   Cause = "malformed_json"     // not the provider's JSON shape; transient
	CauseHTTP        Cause = "http_error"         // other HTTP status: permanent
	CauseAPIError    Cause = "api_error"          // an error object in a 200 body: permanent
	CauseEmpty       Cause = "empty_completion"   // no output text: permanent
	CauseRefusal     Cause = "refusal"            // the model refused: permanent
	CauseNoKey       Cause = "missing_api_key"    // the key variable is unset
	CauseSecret      Cause = "secret_in_exchange" // the exchange contains an API key
	CauseRequest     Cause = "bad_request"        // the request object is invalid
	CauseStore       Cause = "store_error"        // the cache refused the exchange
	CauseCanceled    Cause = "canceled"           // the run was interrupted
	CauseSim         Cause = "sim_error"          // the simulator could not answer
)

// transient reports whether a cause is worth another attempt.
func (c Cause) transient() bool {
	switch c {
	case CauseRateLimited, CauseServer, CauseTimeout, CauseConnection, CauseTruncated, CauseMalformed:
		return true
	}
	return false
}

// A Failure is a request that could not be recorded.
type Failure struct {
	Label    results.Label
	Key      string
	Provider string
	Model    string
	Cause    Cause
	// Status is the last HTTP status, 0 when none.
	Status   int
	Attempts int
	// Msg describes the last error, with secrets removed.
	Msg string
}

// String formats f as "label: provider model key KEY8: cause (HTTP n),
// attempts n: message".
func (f Failure) String() string {
	st := ""
	if f.Status != 0 {
		st = fmt.Sprintf(" (HTTP %d)", f.Status)
	}
	return fmt.Sprintf("%s: %s %s key %.8s: %s%s, attempts %d: %s",
		LabelText(f.Label), f.Provider, f.Model, f.Key, f.Cause, st, f.Attempts, f.Msg)
}

// A CallError is the error of a reply whose recording failed.
type CallError struct {
	Cause  Cause
	Status int
	Msg    string
}

// Error gives the cause, the HTTP status when there is one and the
// message.
func (e *CallError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("replay: %s (HTTP %d): %s", e.Cause, e.Status, e.Msg)
	}
	return fmt.Sprintf("replay: %s: %s", e.Cause, e.Msg)
}

// A CauseCount is the number of failures with one cause.
type CauseCount struct {
	Cause Cause
	Count int
}

// A Drift is a provider reporting another model than the requested one.
type Drift struct {
	Provider, Requested, Reported string
}
