package report

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/finrepro/finrepro/analysis"
)

// latexTables are a narrow table, a wide one with long text (which must
// wrap), a wide one of numbers (which must be scaled) and the hostile
// fixture (every special character, quotes, CJK, control characters).
func latexTables() map[string]*analysis.Table {
	narrow := plain()
	text := &analysis.Table{Benchmark: "icbcbench", Name: "wide_text", Title: "Systems and their notes",
		Columns: []analysis.Column{{Name: "system"}, {Name: "note"}, {Name: "score", Decimals: 2}}}
	text.AddRow(analysis.Text("Gemini-deep-research"), analysis.Text("recorded through the provider's batch interface over three weeks, with every retry kept in the request log for audit"), analysis.Number(64.77))
	text.AddRow(analysis.Text("OpenAI-o3-deep-research"), analysis.Text("imported outputs collected by hand from the web interface"), analysis.Number(71.84))
	nums := &analysis.Table{Benchmark: "findeepforecast", Name: "wide_numbers", Title: "Accuracy by market"}
	nums.Columns = append(nums.Columns, analysis.Column{Name: "system"})
	for i := range 14 {
		nums.Columns = append(nums.Columns, analysis.Column{Name: fmt.Sprintf("market_%02d", i), Decimals: 2, Unit: "%"})
	}
	for _, sys := range []string{"OpenAI o3-deep-research", "Perplexity Sonar Deep Research"} {
		row := []analysis.Cell{analysis.Text(sys)}
		for i := range 14 {
			row = append(row, analysis.Number(10+float64(i)*3.25))
		}
		nums.AddRow(row...)
	}
	return map[string]*analysis.Table{"narrow": narrow, "text": text, "numbers": nums, "hostile": hostile()}
}

// TestLaTeXFitsPage: the wide tables are wrapped (tabularx) or scaled
// (\resizebox) to \linewidth, and the narrow one is a plain tabular; the
// first comment names the packages. With pdflatex installed, each table
// compiles in an article without an overfull box (a table wider than the
// text width is reported as "Overfull \hbox"); without it, only the
// structure is checked.
func TestLaTeXFitsPage(t *testing.T) {
	want := map[string][]string{
		"narrow":  {"requires \\usepackage[T1]{fontenc} \\usepackage{booktabs}\n", "\\begin{tabular}{lrr}", "\\end{tabular}\n"},
		"text":    {"requires \\usepackage[T1]{fontenc} \\usepackage{booktabs,tabularx}\n", "\\begin{tabularx}{\\linewidth}{>{\\raggedright\\arraybackslash}X>{\\raggedright\\arraybackslash}Xr}", "\\end{tabularx}\n"},
		"hostile": {"requires \\usepackage[T1]{fontenc} \\usepackage{booktabs,graphicx}\n", "\\textquotedbl{}", "\\texttt{U+6DF1}"},
		"numbers": {"requires \\usepackage[T1]{fontenc} \\usepackage{booktabs,graphicx}\n", "\\resizebox{\\linewidth}{!}{%\n\\begin{tabular}{l", "\\end{tabular}%\n}\n"},
	}
	pdflatex, lookErr := exec.LookPath("pdflatex")
	for name, tab := range latexTables() {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteLaTeX(&b, tab); err != nil {
				t.Fatal(err)
			}
			src := b.String()
			for _, w := range want[name] {
				if !strings.Contains(src, w) {
					t.Errorf("no %q in\n%s", w, src)
				}
			}
			if lookErr != nil {
				t.Log("pdflatex not installed: structure checked only")
				return
			}
			dir := t.TempDir()
			doc := "\\documentclass{article}\n" +
				// booktabs is in texlive-latex-recommended; rules of
				// the same height stand in for it without it.
				"\\IfFileExists{booktabs.sty}{\\usepackage{booktabs}}{\\let\\toprule\\hline\\let\\midrule\\hline\\let\\bottomrule\\hline}\n" +
				"\\usepackage[T1]{fontenc}\n\\usepackage{tabularx,graphicx}\n\\begin{document}\n\\input{table}\n\\end{document}\n"
			os.WriteFile(filepath.Join(dir, "doc.tex"), []byte(doc), 0o644)
			os.WriteFile(filepath.Join(dir, "table.tex"), b.Bytes(), 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, pdflatex, "-interaction=nonstopmode", "-halt-on-error", "doc.tex")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("pdflatex: %v\n%s", err, out)
			}
			log, _ := os.ReadFile(filepath.Join(dir, "doc.log"))
			if bytes.Contains(log, []byte("Overfull \\hbox")) {
				t.Errorf("table wider than the page:\n%s", log)
			}
		})
	}
}
