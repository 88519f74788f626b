// Command finrepro reproduces the tables of LLM-judged financial
// deep-research benchmarks offline, from recorded exchanges.
//
// Run "finrepro --help" for its manual.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/finrepro/finrepro/cmd/finrepro/cli"
)

// interruptGrace is how long finrepro waits, after Ctrl-C, for the
// command to stop by itself (removing its temporary files) before it
// exits anyway: every interrupt ends the process within about a second.
const interruptGrace = time.Second

// exitInterrupted is the exit code after Ctrl-C when the command did not
// stop in time (128 + SIGINT, as shells report it).
const exitInterrupted = 130

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }()
	select {
	case code := <-done:
		stop()
		os.Exit(code)
	case <-ctx.Done():
	}
	select {
	case code := <-done:
		os.Exit(code)
	case <-time.After(interruptGrace):
		fmt.Fprintln(os.Stderr, "finrepro: interrupted")
		os.Exit(exitInterrupted)
	}
}
