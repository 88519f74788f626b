// Command finrepro reproduces the tables of LLM-judged financial
// deep-research benchmarks offline, from recorded exchanges.
//
// Run "finrepro --help" for its manual.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/finrepro/finrepro/cmd/finrepro/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
