package icbc

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// TestScoreShared scores one collection under every swept setting at once
// (run it with -race) and checks each result against a fresh collection
// scored alone: Score neither changes the collection nor depends on what
// scored it before.
func TestScoreShared(t *testing.T) {
	var settings []analysis.Settings
	for _, k := range knobs {
		for _, v := range k.Sweep {
			settings = append(settings, analysis.Settings{k.Name: v})
		}
	}
	settings = append(settings, nil, analysis.Settings{KnobBinning: "hle", KnobECEBins: "4", KnobTie: "5", KnobBootstrap: "20", KnobSeed: "3"})
	encode := func(res *analysis.Result, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		all := *res
		all.Details, all.LazyDetails = res.AllDetails(), nil // which the encoding leaves out
		b, err := json.Marshal(&all)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	in := fixtureInputs()
	in.PrivateObjectives, in.PrivateSubjectives = in.Objectives, in.Subjectives
	c := collect(context.Background(), in, privateAnswerer{fixtureAnswerer{new([]results.Call)}}, &analysis.MemoryTexts{})
	got := make([]string, len(settings))
	var wg sync.WaitGroup
	for i, s := range settings {
		wg.Go(func() { got[i] = encode(score(c, s)) })
	}
	wg.Wait()
	for i, s := range settings {
		in := fixtureInputs()
		in.PrivateObjectives, in.PrivateSubjectives = in.Objectives, in.Subjectives
		want := encode(analyze(context.Background(), in, privateAnswerer{fixtureAnswerer{new([]results.Call)}}, s))
		if got[i] != want {
			t.Errorf("settings %v: the shared collection scores differently", s)
		}
	}
}
