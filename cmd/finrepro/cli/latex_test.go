package cli

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// latexRequires matches the first line of a LaTeX table finrepro
// writes, which names the packages the table needs.
var latexRequires = regexp.MustCompile(`^% [^\n]*: requires ((?:\\usepackage(?:\[[^\]]*\])?\{[^}]*\} ?)+)\n`)

// TestDemoLaTeXCompiles compiles every .tex file that reproduce writes
// for the embedded demo with pdflatex, each in the smallest article that
// loads what its first line names, and fails on any error or overfull
// box (a table wider than the text width). Without pdflatex it only
// checks that every file names its packages.
func TestDemoLaTeXCompiles(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := run(t, "reproduce", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("reproduce: exit %d\n%s", code, stderr)
	}
	var files []string
	filepath.WalkDir(filepath.Join(out, "latex"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".tex") {
			files = append(files, p)
		}
		return err
	})
	if len(files) < 40 {
		t.Fatalf("%d .tex files under %s, want the demo's 50 or so", len(files), out)
	}
	pdflatex, lookErr := exec.LookPath("pdflatex")
	if lookErr != nil {
		t.Log("pdflatex not installed: the .tex files are not compiled, only their first lines checked")
	}
	work := t.TempDir()
	for _, f := range files {
		name, _ := filepath.Rel(out, f)
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m := latexRequires.FindSubmatch(src)
		if m == nil {
			t.Errorf("%s: first line names no packages: %.80q", name, src)
			continue
		}
		if lookErr != nil {
			continue
		}
		doc := "\\documentclass{article}\n" + strings.ReplaceAll(strings.TrimSpace(string(m[1])), " ", "\n") +
			"\n\\begin{document}\n\\input{table}\n\\end{document}\n"
		os.WriteFile(filepath.Join(work, "doc.tex"), []byte(doc), 0o644)
		os.WriteFile(filepath.Join(work, "table.tex"), src, 0o644)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
		cmd.Dir = work
		stdout, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("%s: pdflatex: %v\n%s", name, err, latexErrors(stdout))
			continue
		}
		log, _ := os.ReadFile(filepath.Join(work, "doc.log"))
		if i := bytes.Index(log, []byte("Overfull \\hbox")); i >= 0 {
			t.Errorf("%s: table wider than the page: %s", name, log[i:min(len(log), i+300)])
		}
	}
}

// latexErrors is the part of pdflatex's output from its first error on.
func latexErrors(out []byte) []byte {
	if i := bytes.Index(out, []byte("\n! ")); i >= 0 {
		return out[i:min(len(out), i+600)]
	}
	return out
}
