// Command gensynth writes synthetic exchanges as JSONL to standard output,
// for the cache benchmarks against other stores (see bench/).
//
//	go run ./cache/internal/synth/gensynth -n 20000 -seed 1 > exchanges.jsonl
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
	flag.Parse()
	w := bufio.NewWriter(os.Stdout)
	if err := synth.Write(w, *n, *seed); err == nil {
		err = w.Flush()
	} else {
		fmt.Fprintln(os.Stderr, "gensynth:", err)
		os.Exit(1)
	}
}
