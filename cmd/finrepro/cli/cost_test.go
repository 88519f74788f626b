package cli

import (
	"strings"
	"testing"

	"github.com/finrepro/finrepro/replay"
)

// TestCostEstimate: an estimate says what it assumes and never shows the
// cost of calls to models without a price as $0.00. By hand: two priced
// calls of $0.50 and $1.50 with 100+300 input and 200+400 output tokens
// are $2.00 at ~200 input and ~300 output tokens per call.
func TestCostEstimate(t *testing.T) {
	priced := []replay.Miss{
		{Provider: "openai", Model: "a", InputTokens: 100, OutputTokens: 200, CostUSD: 0.5, Priced: true},
		{Provider: "openai", Model: "a", InputTokens: 300, OutputTokens: 400, CostUSD: 1.5, Priced: true},
	}
	unpriced := replay.Miss{Provider: "vllm", Model: "local", InputTokens: 10, OutputTokens: 10}
	for _, tc := range []struct {
		misses  []replay.Miss
		want    []string
		notWant string
	}{
		{priced, []string{"about $2.00 for 2 calls", "~200 input and ~300 output tokens per call"}, "unknown"},
		{append(priced, unpriced), []string{"about $2.00 for 2 calls", "1 calls to models without a price (vllm/local): cost unknown"}, "$0.00"},
		{[]replay.Miss{unpriced}, []string{"cost unknown", "vllm/local"}, "$"},
	} {
		got := costEstimate(tc.misses)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("costEstimate = %q, want %q in it", got, w)
			}
		}
		if strings.Contains(got, tc.notWant) {
			t.Errorf("costEstimate = %q, has %q", got, tc.notWant)
		}
	}
	if got := recordedSummary(replay.Counts{}, 0, nil); got != "no API call was recorded" {
		t.Errorf("nothing recorded: %q", got)
	}
	got := recordedSummary(replay.Counts{Recorded: 3, Failed: 1}, 1.25, []replay.Miss{unpriced})
	for _, w := range []string{"recorded 3 API calls for $1.25", "vllm/local have no price", "1 calls failed"} {
		if !strings.Contains(got, w) {
			t.Errorf("recordedSummary = %q, want %q in it", got, w)
		}
	}
}
