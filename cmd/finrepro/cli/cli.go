// Package cli is the finrepro command line: Main takes the arguments and
// the standard streams and returns the exit code, so that tests run the
// command in-process.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
	"github.com/spf13/pflag"
)

// Exit codes. exitCode is the one place that maps errors to them.
const (
	ExitOK        = 0 // success
	ExitFailure   = 1 // any other failure
	ExitUsage     = 2 // bad command line
	ExitMiss      = 3 // a request missing from the cache in offline mode
	ExitIntegrity = 4 // an integrity or verification failure
)

const exitCodesHelp = `Exit codes:
  0  ok
  1  failure
  2  usage error
  3  cache miss in offline mode (the missing requests are listed)
  4  integrity or verification failure
`

// Env is what a command sees of its process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads an environment variable; os.Getenv in the real command.
	Getenv func(string) string
	// Clock is the wall clock: the recorded_at of real recordings and the
	// durations of progress lines on a terminal, never an output file;
	// time.Now when nil.
	Clock func() time.Time
}

// clock returns env's wall clock.
func (env *Env) clock() func() time.Time {
	if env.Clock == nil {
		return time.Now
	}
	return env.Clock
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

// commands lists the subcommands in the order --help shows them.
var commands []command

func init() {
	commands = []command{
		{"reproduce", "replay a bundle offline and write every table, workbook and the site", runReproduce},
		{"demo", "build the synthetic demo bundle through the sim provider", runDemo},
		{"sweep", "sensitivity sweeps over scoring knobs, from the cache alone", runSweep},
		{"site", "write the static leaderboard site of a bundle", runSite},
		{"record", "record requests through a provider into a cache", runRecord},
		{"replay", "answer requests from a cache, offline", runReplay},
		{"proxy", "record and replay unmodified OpenAI, Anthropic and Gemini clients, streams included", runProxy},
		{"batch", "record through the providers' batch APIs (submit, status, collect, cancel)", runBatch},
		{"cache", "inspect and maintain an exchange cache (stats, verify, gc, load, dump, export, import, explain)", runCache},
		{"bundle", "make, seal, verify, pack and compare bundles (create, seal, verify, pack, diff)", runBundle},
		{"system", "add, list and remove a bundle's evaluated systems", runSystem},
		{"requests", "write the requests reproduce would send for a benchmark, as JSONL or Batch API input", runRequests},
		{"scores", "leaderboard with clustered intervals, paired tests and tie groups from a released per-task score matrix", runScores},
		{"version", "print the finrepro version", runVersion},
	}
}

// Version is finrepro's version, printed by "finrepro version" and written
// into every output's provenance.
const Version = "0.1.0"

// Main runs the finrepro command with args (without the program name) and
// returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv, Clock: time.Now}
	return env.main(ctx, args)
}

func (env *Env) main(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := env.Stdout
		if len(args) == 0 {
			w = env.Stderr
		}
		usage(w)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	for _, c := range commands {
		if c.name == args[0] {
			err := c.run(ctx, env, args[1:])
			code := exitCode(err)
			if err != nil && !errors.Is(err, pflag.ErrHelp) {
				sayf(env.Stderr, "finrepro %s: %v", c.name, err)
			}
			return code
		}
	}
	fmt.Fprintf(env.Stderr, "finrepro: unknown command %q\n\n", args[0])
	usage(env.Stderr)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "finrepro reproduces LLM-judged financial deep-research benchmarks offline.\n\nUsage:\n  finrepro <command> [flags] [args]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun \"finrepro <command> --help\" for a command's flags.\n\n%s", exitCodesHelp)
}

// A usageError is a bad command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usageErr returns a usage error (exit 2).
func usageErr(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// A missesError is requests missing from the cache in offline mode, already
// listed (exit 3).
type missesError struct{ n int }

func (e *missesError) Error() string { return fmt.Sprintf("%d requests are not in the cache", e.n) }

// A problemsError is a check that listed n problems of what (exit 4).
type problemsError struct {
	what string
	n    int
}

func (e *problemsError) Error() string { return fmt.Sprintf("%s: %d problems", e.what, e.n) }

// exitCode maps an error to the exit code, by its type: this is the one
// place that does. Corruption anywhere (cache.ErrCorrupt, a bundle that
// does not match its manifest or whose manifest cannot be read, an
// archive that does not match its sums) is an integrity failure in every
// command.
func exitCode(err error) int {
	var (
		ue *usageError
		me *missesError
		rm *replay.MissError
		pe *problemsError
		ie *results.IntegrityError
		nb *results.NotBundleError
	)
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &nb) && nb.Missing:
		return ExitFailure // nothing there: not an integrity failure
	case errors.As(err, &nb), errors.Is(err, cache.ErrCorrupt), errors.As(err, &ie), errors.As(err, &pe):
		return ExitIntegrity
	case errors.As(err, &me), errors.As(err, &rm):
		return ExitMiss
	}
	return ExitFailure
}

// sayf prints one line that may hold strings from a bundle, a cache or a
// provider: through results.Printable, so that none reaches the terminal
// as a control sequence.
func sayf(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, results.Printable(fmt.Sprintf(format, args...)))
}

// sayWrapped is sayf with the line broken at spaces into lines no wider
// than width; a word wider than width (a path) stands on its own line.
func sayWrapped(w io.Writer, width int, format string, args ...any) {
	line, n := "", 0
	for _, word := range strings.Fields(results.Printable(fmt.Sprintf(format, args...))) {
		wl := utf8.RuneCountInString(word)
		if n > 0 && n+1+wl > width {
			fmt.Fprintln(w, line)
			line, n = "", 0
		}
		if n > 0 {
			line += " "
			n++
		}
		line += word
		n += wl
	}
	fmt.Fprintln(w, line)
}

// newFlags returns a flag set for a subcommand whose --help prints the
// summary, the usage line, the flags and the exit codes to env.Stdout.
func (env *Env) newFlags(name, usageLine, doc string) *pflag.FlagSet {
	fs := pflag.NewFlagSet("finrepro "+name, pflag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	fs.SortFlags = false
	fs.Usage = func() {
		w := env.Stdout
		fmt.Fprintf(w, "Usage: finrepro %s\n\n%s\n\nFlags:\n", usageLine, strings.TrimSpace(doc))
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(env.Stderr)
		fmt.Fprintf(w, "\n%s", exitCodesHelp)
	}
	return fs
}

// parse parses args into fs and maps a parse failure to a usage error.
func parse(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageErr("%v", err)
	}
	return nil
}

func runVersion(ctx context.Context, env *Env, args []string) error {
	fs := env.newFlags("version", "version", "Print the finrepro version.")
	if err := parse(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "finrepro", Version)
	return nil
}
