package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// WriteLaTeX writes t as a LaTeX table for the booktabs package: caption
// (title, then caption) above, \toprule/\midrule/\bottomrule, numbers
// right-aligned with the column's decimals and a math minus, undefined
// cells as "--", best values in \textbf and second-best in \underline, an
// arrow in each marked column's header for its direction, and notes
// under the tabular. All text passes through LaTeXText, so the file
// compiles with pdflatex and \usepackage[T1]{fontenc}; characters pdflatex
// cannot print, CJK included, are written as code points.
//
// A table fits the page (see latexLayout): one whose cells would be
// wider than latexLineChars is a tabularx of width \linewidth whose text
// columns wrap (package tabularx), or, when its numbers alone are too
// wide for that, a tabular scaled down to \linewidth by \resizebox
// (package graphicx). The first comment line names the packages needed.
func WriteLaTeX(w io.Writer, t *analysis.Table) error {
	return writeLaTeX(w, t, false)
}

// writeLaTeX is WriteLaTeX; when synthetic, a comment line under the
// first says the data is synthetic.
func writeLaTeX(w io.Writer, t *analysis.Table, synthetic bool) error {
	if err := check(t); err != nil {
		return fmt.Errorf("report: latex: %w", err)
	}
	// Writes to bw keep their first error, which Flush returns.
	bw := bufio.NewWriter(w)
	m, anyMark := marks(t)
	layout := latexLayout(t)
	spec := ""
	for j := range t.Columns {
		switch {
		case numeric(t, j):
			spec += "r"
		case layout == latexWrap:
			spec += `>{\raggedright\arraybackslash}X`
		default:
			spec += "l"
		}
	}
	pkgs := map[int]string{latexPlain: "booktabs", latexWrap: "booktabs,tabularx", latexScale: "booktabs,graphicx"}[layout]
	fmt.Fprintf(bw, "%% %s/%s: requires \\usepackage[T1]{fontenc} \\usepackage{%s}\n", oneLine(t.Benchmark), oneLine(t.Name), pkgs)
	if synthetic {
		fmt.Fprintf(bw, "%% %s\n", SyntheticNote)
	}
	bw.WriteString("\\begin{table}[t]\n\\centering\n")
	caption := LaTeXText(t.Title)
	if t.Caption != "" {
		if caption != "" && !strings.ContainsAny(caption[len(caption)-1:], ".:;!?") {
			caption += "."
		}
		if caption != "" {
			caption += " "
		}
		caption += LaTeXText(t.Caption)
	}
	if anyMark {
		caption += " Best in bold, second best underlined."
	}
	if caption = strings.TrimSpace(caption); caption != "" {
		fmt.Fprintf(bw, "\\caption{%s}\n", caption)
	}
	fmt.Fprintf(bw, "\\label{tab:%s}\n", label(t.Benchmark+":"+t.Name))
	switch layout {
	case latexWrap:
		fmt.Fprintf(bw, "\\begin{tabularx}{\\linewidth}{%s}\n\\toprule\n", spec)
	case latexScale:
		fmt.Fprintf(bw, "\\resizebox{\\linewidth}{!}{%%\n\\begin{tabular}{%s}\n\\toprule\n", spec)
	default:
		fmt.Fprintf(bw, "\\begin{tabular}{%s}\n\\toprule\n", spec)
	}
	for j, c := range t.Columns {
		if j > 0 {
			bw.WriteString(" & ")
		}
		bw.WriteString(LaTeXText(header(c)))
		if hasMarks(m[j]) {
			switch c.Better {
			case analysis.Higher:
				bw.WriteString(" $\\uparrow$")
			case analysis.Lower:
				bw.WriteString(" $\\downarrow$")
			}
		}
	}
	bw.WriteString(" \\\\\n\\midrule\n")
	for i, r := range t.Rows {
		for j, c := range r {
			if j > 0 {
				bw.WriteString(" & ")
			}
			var s string
			switch {
			case c.Undef:
				s = "--"
			case c.IsNum:
				s = c.Format(c.DecimalsIn(t.Columns[j]))
				if strings.HasPrefix(s, "-") {
					s = "$-$" + s[1:]
				}
			default:
				s = LaTeXText(c.Text)
			}
			switch m[j][i] {
			case analysis.Best:
				s = "\\textbf{" + s + "}"
			case analysis.Second:
				s = "\\underline{" + s + "}"
			}
			bw.WriteString(s)
		}
		bw.WriteString(" \\\\\n")
	}
	switch layout {
	case latexWrap:
		bw.WriteString("\\bottomrule\n\\end{tabularx}\n")
	case latexScale:
		bw.WriteString("\\bottomrule\n\\end{tabular}%\n}\n")
	default:
		bw.WriteString("\\bottomrule\n\\end{tabular}\n")
	}
	for i, n := range t.Notes {
		fmt.Fprintf(bw, "\\par\\smallskip{\\footnotesize (%d) %s}\n", i+1, LaTeXText(n))
	}
	bw.WriteString("\\end{table}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: latex: table %s: %w", t.Name, err)
	}
	return nil
}

// Layouts of a LaTeX table.
const (
	latexPlain = iota // a tabular at its natural width
	latexWrap         // a tabularx of \linewidth, text columns wrapping
	latexScale        // a tabular scaled to \linewidth
)

// latexLineChars is the number of characters, in the table's font, taken
// to fit the text width of a one-column page (an article's 345 pt at
// 10 pt is about 70 characters of ordinary text; table cells are set
// with 6 pt of padding each side, which latexWidth counts as two
// characters per column). minWrapChars is the narrowest a wrapping
// text column is taken to be.
const (
	latexLineChars = 70
	minWrapChars   = 12
)

// latexLayout chooses how t fits the page: plain when its widest cells
// (header words included) fit latexLineChars, wrap when its numeric
// columns and its text columns at minWrapChars do, else scale.
func latexLayout(t *analysis.Table) int {
	total, fixed, text := 0, 0, 0
	for j, c := range t.Columns {
		w := 0
		for _, word := range strings.Fields(header(c)) {
			w = max(w, latexChars(word))
		}
		w = max(w, latexChars(header(c)))
		for _, r := range t.Rows {
			w = max(w, latexChars(r[j].Format(r[j].DecimalsIn(c))))
		}
		total += w + 2
		if numeric(t, j) {
			fixed += w + 2
		} else {
			text++
			fixed += min(w, minWrapChars) + 2
		}
	}
	switch {
	case total <= latexLineChars:
		return latexPlain
	case text > 0 && fixed <= latexLineChars:
		return latexWrap
	}
	return latexScale
}

// latexEscapes maps the characters LaTeX treats specially in text mode
// (and those the OT1 font encoding prints as other glyphs) to commands
// that print them, and a few symbols outside the T1 and TS1 encodings to
// their math-mode forms.
var latexEscapes = map[rune]string{
	'\\':     `\textbackslash{}`,
	'{':      `\{`,
	'}':      `\}`,
	'$':      `\$`,
	'&':      `\&`,
	'#':      `\#`,
	'^':      `\textasciicircum{}`,
	'_':      `\_`,
	'~':      `\textasciitilde{}`,
	'%':      `\%`,
	'<':      `\textless{}`,
	'>':      `\textgreater{}`,
	'|':      `\textbar{}`,
	'"':      `\textquotedbl{}`,
	'\u03b1': `$\alpha$`,
	'\u03b2': `$\beta$`,
	'\u03b3': `$\gamma$`,
	'\u03b4': `$\delta$`,
	'\u03b5': `$\varepsilon$`,
	'\u03bc': `$\mu$`,
	'\u03c3': `$\sigma$`,
	'\u03c7': `$\chi$`,
	'\u2212': `$-$`,
	'\u221a': `$\surd$`,
	'\u221e': `$\infty$`,
	'\u2248': `$\approx$`,
	'\u2260': `$\neq$`,
	'\u2264': `$\leq$`,
	'\u2265': `$\geq$`,
}

// latexTypeset reports whether pdflatex, with the T1 font encoding and
// UTF-8 input, prints r as it is: printable ASCII, Latin-1 and Latin
// Extended-A (except the few letters T1 lacks), and common punctuation.
func latexTypeset(r rune) bool {
	switch {
	case r >= 0x20 && r < 0x7f, r >= 0xa0 && r <= 0xff:
		return true
	case r >= 0x100 && r <= 0x17f:
		return !strings.ContainsRune("\u0126\u0127\u0138\u013f\u0140\u0149\u0166\u0167\u017f", r)
	}
	return strings.ContainsRune("\u2013\u2014\u2018\u2019\u201a\u201c\u201d\u201e\u2020\u2021\u2022\u2026\u2030\u2039\u203a\u20ac", r)
}

// latexCodePoint is the visible escape of a character pdflatex cannot
// print: its code point in typewriter type, such as \texttt{U+FFFD}.
func latexCodePoint(r rune) string {
	return fmt.Sprintf(`\texttt{U+%04X}`, r)
}

// LaTeXText escapes s for LaTeX text mode so that pdflatex compiles it
// with \usepackage[T1]{fontenc}: the special characters \ { } $ & # ^ _
// ~ % (and < > | ") become commands, a few Greek letters and math symbols
// become math, control characters and invalid UTF-8 become spaces, a
// hyphen before another hyphen is followed by {} so that "--" stays two
// hyphens instead of a dash, and every other character that pdflatex
// cannot print (CJK, U+FFFD, emoji) is written as its code point,
// \texttt{U+4E1A}.
func LaTeXText(s string) string {
	s = oneLine(s)
	var b strings.Builder
	for i, r := range s {
		if e, ok := latexEscapes[r]; ok {
			b.WriteString(e)
			continue
		}
		if !latexTypeset(r) {
			b.WriteString(latexCodePoint(r))
			continue
		}
		b.WriteRune(r)
		if r == '-' && i+1 < len(s) && s[i+1] == '-' {
			b.WriteString("{}")
		}
	}
	return b.String()
}

// latexChars is the number of characters s takes once escaped: one per
// character, and the length of the code point for one written as such.
func latexChars(s string) int {
	n := 0
	for _, r := range oneLine(s) {
		if _, ok := latexEscapes[r]; !ok && !latexTypeset(r) {
			n += len(latexCodePoint(r)) - len(`\texttt{}`)
			continue
		}
		n++
	}
	return n
}

// label makes s a safe \label key: letters, digits, ':', '-' and '_'
// pass, anything else becomes '-'.
func label(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ':', r == '_', r == '-':
			return r
		}
		return '-'
	}, s)
}
