// Command gensynth writes synthetic exchanges as JSONL to standard output,
// for the cache benchmarks against other stores (see bench/).
//
//	go run ./cache/internal/synth/gensynth -n 20000 -seed 1 > exchanges.jsonl
//	go run ./cache/internal/synth/gensynth -corpus judge -n 20000 > judge.jsonl
//
// The "random" corpus (the default) is agent and judge calls of unrelated
// prose; the "judge" corpus is repetitive judge traffic, reports graded
// against a shared rubric item by item by three judges.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	"github.com/finrepro/finrepro/cache/internal/synth"
)

func main() {
	n := flag.Int("n", 20000, "number of exchanges")
	seed := flag.Uint64("seed", 1, "random seed")
	corpus := flag.String("corpus", "random", "random or judge")
	flag.Parse()
	write := synth.Write
	switch *corpus {
	case "random":
	case "judge":
		write = synth.WriteJudge
	default:
		fmt.Fprintf(os.Stderr, "gensynth: -corpus %q: want random or judge\n", *corpus)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	if err := write(w, *n, *seed); err == nil {
		err = w.Flush()
	} else {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
}
