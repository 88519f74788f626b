package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/replay"
)

// costEstimate describes what recording misses would cost: the sum over
// the calls whose model has a price, what the estimate assumes (the
// tokens per call, estimated from each request's size and its output
// limit), and the calls whose model has no price, whose cost is unknown
// rather than zero.
func costEstimate(misses []replay.Miss) string {
	var cost float64
	var in, out, priced int
	var unpriced []string
	nUnpriced := 0
	for _, m := range misses {
		if !m.Priced {
			nUnpriced++
			if name := m.Provider + "/" + m.Model; !slices.Contains(unpriced, name) {
				unpriced = append(unpriced, name)
			}
			continue
		}
		priced++
		cost += m.CostUSD
		in += m.InputTokens
		out += m.OutputTokens
	}
	slices.Sort(unpriced)
	var b strings.Builder
	switch {
	case priced == 0:
		fmt.Fprintf(&b, "cost unknown")
	default:
		fmt.Fprintf(&b, "about $%.2f for %d calls (assuming ~%d input and ~%d output tokens per call, estimated from the requests, at the price table's list prices)",
			cost, priced, in/priced, out/priced)
	}
	if nUnpriced > 0 {
		fmt.Fprintf(&b, "; %d calls to models without a price (%s): cost unknown, not counted", nUnpriced, strings.Join(unpriced, ", "))
	}
	return b.String()
}

// recordedSummary says what a recording run did: the calls made and
// their cost, the cost of calls to models without a price as unknown.
func recordedSummary(c replay.Counts, spent float64, misses []replay.Miss) string {
	if c.Recorded == 0 {
		return "no API call was recorded"
	}
	s := fmt.Sprintf("recorded %d API calls for $%.2f", c.Recorded, spent)
	var unpriced []string
	for _, m := range misses {
		if name := m.Provider + "/" + m.Model; !m.Priced && !slices.Contains(unpriced, name) {
			unpriced = append(unpriced, name)
		}
	}
	if len(unpriced) > 0 {
		slices.Sort(unpriced)
		s += fmt.Sprintf(" (calls to %s have no price: their cost is unknown, not included)", strings.Join(unpriced, ", "))
	}
	if c.Failed > 0 {
		s += fmt.Sprintf("; %d calls failed", c.Failed)
	}
	return s
}

// countCause counts the failures of cause c.
func countCause(fs []replay.Failure, c replay.Cause) int {
	n := 0
	for _, f := range fs {
		if f.Cause == c {
			n++
		}
	}
	return n
}
