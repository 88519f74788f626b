package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/internal/golden"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// TestSweepWidth runs a sweep for 80 and 120 columns: no line is wider,
// and the output is the golden file's.
func TestSweepWidth(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			var o, e bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
				if k == "COLUMNS" {
					return strconv.Itoa(width)
				}
				return ""
			}}
			if code := env.main(context.Background(), []string{"sweep", "--knob", "finresearchbench2.judges=gpt-5.4,claude-opus-4-7;gemini-3-pro-preview"}); code != ExitOK {
				t.Fatalf("exit %d\n%s", code, e.String())
			}
			for i, line := range strings.Split(o.String(), "\n") {
				if w := twwidth.WidthWithOptions(line, twwidth.Options{}); w > width {
					t.Errorf("line %d is %d wide: %q", i+1, w, line)
				}
			}
			golden.Check(t, filepath.Join("testdata", "sweep."+strconv.Itoa(width)+".txt"), o.Bytes())
		})
	}
}

// TestReproduceWidth runs reproduce on the demo for a terminal of 80 and
// of 120 columns (COLUMNS): no line is wider, and the output is the
// golden file's.
func TestReproduceWidth(t *testing.T) {
	for _, width := range []string{"80", "120"} {
		t.Run(width, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			var o, e bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &o, Stderr: &e, Getenv: func(k string) string {
				if k == "COLUMNS" {
					return width
				}
				return ""
			}}
			if code := env.main(context.Background(), []string{"reproduce", "--no-sweep", "--out", out}); code != ExitOK {
				t.Fatalf("exit %d\n%s", code, e.String())
			}
			text := strings.ReplaceAll(o.String(), out, "OUT")
			limit := map[string]int{"80": 80, "120": 120}[width]
			for i, line := range strings.Split(text, "\n") {
				if w := twwidth.WidthWithOptions(line, twwidth.Options{}); w > limit && !strings.Contains(line, "OUT") {
					t.Errorf("line %d is %d wide: %q", i+1, w, line)
				}
			}
			golden.Check(t, filepath.Join("testdata", "reproduce."+width+".txt"), []byte(text))
		})
	}
}
