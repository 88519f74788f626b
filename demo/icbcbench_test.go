package demo

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// icbcOracleAnswerer answers calls by asking the oracle directly, marking
// every reply synthetic.
type icbcOracleAnswerer struct{ o replay.Oracle }

func (a icbcOracleAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		text, err := a.o.Respond(c.Prompt)
		out[i] = results.Reply{Text: text, Model: c.Prompt.Model, Source: results.SourceSim, Err: err}
	}
	return out
}

// icbcRun generates the inputs at scale into a temp dir and runs the
// benchmark over the oracle's answers.
func icbcRun(t testing.TB, scale Scale, calls *int) *analysis.Result {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, results.InputsDir, icbc.Name)
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	o, err := ICBCBench().Generate(in, Options{Scale: scale, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ans := results.Answerer(icbcOracleAnswerer{o})
	if calls != nil {
		ans = countingAnswerer{ans, calls}
	}
	res, err := icbc.Benchmark{}.Run(context.Background(), analysis.Input{Bundle: &results.Bundle{Dir: dir}, Answer: ans})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

type countingAnswerer struct {
	a results.Answerer
	n *int
}

func (c countingAnswerer) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	*c.n += len(calls)
	return c.a.Answer(ctx, calls)
}
