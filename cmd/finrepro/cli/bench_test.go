package cli

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReproduce reproduces the built-in demo bundle end to end:
// verify, replay every benchmark, compare, sweep and write every output.
// bench/reproduce.sh measures the full-scale bundle against a store dump.
func BenchmarkReproduce(b *testing.B) {
	for _, sweep := range []bool{true, false} {
		name, args := "sweeps", []string{}
		if !sweep {
			name, args = "no-sweep", []string{"--no-sweep"}
		}
		b.Run(name, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out")
			b.ReportAllocs()
			for b.Loop() {
				if code, stderr := runB(append([]string{"reproduce", "--out", out, "--quiet"}, args...)...); code != 0 {
					b.Fatalf("reproduce exit %d: %s", code, stderr)
				}
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
