package demo

import (
	"fmt"
	"testing"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/results"
)

func TestICBCProbe2(t *testing.T) {
	dir := t.TempDir()
	o, err := ICBCBench().Generate(dir, Options{Scale: Small, Seed: 1})
	if err != nil { t.Fatal(err) }
	w := o.(*icbcWorld)
	ob := w.in.Objectives[0]
	ans, _ := w.Respond(results.Prompt{Model: "sim-openai-o3-deep-research", User: icbc.SolverPrompt(&ob, &w.in.Prompts)})
	fmt.Printf("%q\n", ans)
	jp := icbc.JudgePrompt(&ob, &w.in.Prompts, ans)
	fmt.Printf("%q\n", jp[len(jp)-300:])
	j, _ := w.Respond(results.Prompt{Model: "sim-objective-judge", User: jp})
	fmt.Printf("%q\n", j)
	fmt.Println(w.correct, w.conf)
}
