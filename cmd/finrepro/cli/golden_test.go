package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"
)

// TestGoldenOutput holds the command's output to the golden files in
// testdata (go test -update rewrites them): the manual of every command,
// the knob list and a quiet reproduce of the built-in demo, with its
// output folder written as OUT.
func TestGoldenOutput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"help", []string{"--help"}, ExitOK},
		{"reproduce_help", []string{"reproduce", "--help"}, ExitOK},
		{"demo_help", []string{"demo", "--help"}, ExitOK},
		{"sweep_help", []string{"sweep", "--help"}, ExitOK},
		{"site_help", []string{"site", "--help"}, ExitOK},
		{"record_help", []string{"record", "--help"}, ExitOK},
		{"replay_help", []string{"replay", "--help"}, ExitOK},
		{"cache_help", []string{"cache", "--help"}, ExitOK},
		{"bundle_help", []string{"bundle", "--help"}, ExitOK},
		{"proxy_help", []string{"proxy", "--help"}, ExitOK},
		{"batch_help", []string{"batch", "--help"}, ExitOK},
		{"system_help", []string{"system", "--help"}, ExitOK},
		{"requests_help", []string{"requests", "--help"}, ExitOK},
		{"scores_help", []string{"scores", "--help"}, ExitOK},
		{"sweep_list", []string{"sweep", "--list"}, ExitOK},
		{"reproduce_quiet", []string{"reproduce", "--quiet", "--out", out}, ExitOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name == "reproduce_quiet" {
				t.Skip("reproduces the whole demo")
			}
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, stdout, stderr)
			}
			got := "$ finrepro " + strings.Join(tc.args, " ") + "\n" + stdout
			if stderr != "" {
				got += "--- stderr\n" + stderr
			}
			got = strings.ReplaceAll(got, out, "OUT")
			golden.Check(t, filepath.Join("testdata", tc.name+".golden"), []byte(got))
		})
	}
}
