package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReproduce reproduces the built-in demo bundle end to end:
// verify, replay every benchmark, compare, sweep and write every output.
// bench/reproduce.sh measures the full-scale bundle against a store dump;
// FINREPRO_BENCH_BUNDLE=DIR runs this benchmark on another bundle (for
// profiling a full-scale one). Like bench/reproduce.sh it measures reruns
// into one output folder: a first, untimed run creates it.
func BenchmarkReproduce(b *testing.B) {
	bundle := os.Getenv("FINREPRO_BENCH_BUNDLE")
	for _, sweep := range []bool{true, false} {
		name, args := "sweeps", []string{}
		if !sweep {
			name, args = "no-sweep", []string{"--no-sweep"}
		}
		b.Run(name, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out")
			argv := append([]string{"reproduce", "--out", out, "--quiet"}, args...)
			if bundle != "" {
				argv = append(argv, bundle)
			}
			reproduce := func() {
				if code, stderr := runB(argv...); code != 0 {
					b.Fatalf("reproduce exit %d: %s", code, stderr)
				}
			}
			reproduce()
			b.ReportAllocs()
			for b.Loop() {
				reproduce()
			}
		})
	}
}

// runB runs finrepro in-process, discarding standard output.
func runB(args ...string) (code int, stderr string) {
	var e bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &e, Getenv: func(string) string { return "" }}
	return env.main(context.Background(), args), e.String()
}
