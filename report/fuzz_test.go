package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/xuri/excelize/v2"

	"github.com/finrepro/finrepro/analysis"
)

var fuzzSeeds = []string{
	"", "plain", "=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "'quoted", "a,b", `"q"`, "line\nbreak", "\r\n",
	`\ { } $ & # ^ _ ~ %`, "--", "---", "<>|\"", "深度研究（金融）", "\x1b[31mred", "\xff\xfe", "\u2028", "\u202eevil", "𝔁𝔂", "\\.",
	"</script><script>alert(1)</script>",
}

func textTable(s string) *analysis.Table {
	t := &analysis.Table{Name: "fuzz", Columns: []analysis.Column{
		{Name: "text"},
		{Name: "score", Decimals: 1, Better: analysis.Higher},
	}}
	t.AddRow(analysis.Text(s), analysis.Number(1))
	t.AddRow(analysis.Text("x"), analysis.Number(2))
	return t
}

// FuzzCSVText checks that any text reads back from the CSV as written,
// apart from the apostrophe before a formula, and never starts a formula.
func FuzzCSVText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		if err := WriteCSV(&b, textTable(s)); err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(&b).ReadAll()
		if err != nil {
			t.Fatalf("CSV of %q does not read back: %v", s, err)
		}
		if len(recs) != 3 || len(recs[1]) != 2 {
			t.Fatalf("CSV of %q reads back as %q", s, recs)
		}
		got := recs[1][0]
		if got != "" && strings.ContainsRune("=+-@\t\r", rune(got[0])) {
			t.Errorf("CSV field %q starts a formula", got)
		}
		// encoding/csv drops carriage returns inside quoted fields.
		want := strings.ReplaceAll(CSVText(s), "\r", "")
		if got != want {
			t.Errorf("CSV field reads back as %q, want %q", got, want)
		}
		if strings.TrimPrefix(CSVText(s), "'") != s && CSVText(s) != s {
			t.Errorf("CSVText(%q) = %q changes more than a leading apostrophe", s, CSVText(s))
		}
	})
}

// latexUnescapes maps what LaTeXText writes back to the text, longest
// first.
var latexUnescapes = []struct{ esc, text string }{
	{`\textbackslash{}`, `\`}, {`\textasciicircum{}`, "^"}, {`\textasciitilde{}`, "~"}, {`\textless{}`, "<"},
	{`\textgreater{}`, ">"}, {`\textbar{}`, "|"}, {`\textquotedbl{}`, `"`},
	{`$\varepsilon$`, "ε"}, {`$\approx$`, "≈"}, {`$\infty$`, "∞"}, {`$\alpha$`, "α"},
	{`$\gamma$`, "γ"}, {`$\delta$`, "δ"}, {`$\sigma$`, "σ"}, {`$\surd$`, "√"},
	{`$\beta$`, "β"}, {`$\neq$`, "≠"}, {`$\leq$`, "≤"}, {`$\geq$`, "≥"},
	{`$\chi$`, "χ"}, {`$\mu$`, "μ"}, {`$-$`, "−"},
	{`\{`, "{"}, {`\}`, "}"}, {`\$`, "$"}, {`\&`, "&"}, {`\#`, "#"}, {`\_`, "_"}, {`\%`, "%"}, {"-{}", "-"},
}

// latexCodePointRE matches the escape of a character pdflatex cannot
// print.
var latexCodePointRE = regexp.MustCompile(`^\\texttt\{U\+([0-9A-F]{4,6})\}`)

// FuzzLaTeXText checks that escaped text holds no active LaTeX character
// outside an escape, and no character outside printable ASCII, Latin-1,
// Latin Extended-A and the common punctuation of T1 and TS1 (the
// characters pdflatex prints with \usepackage[T1]{fontenc}), and that
// undoing the escapes gives the text back (control characters and
// invalid UTF-8 as spaces).
func FuzzLaTeXText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("\ufffd \u4e1a\u52a1 \U0001F600 \u0127 \u03b1=0.05 p \u00b1 1.96\u00b7\u221a(p) \u2013 \u201cx\u201d")
	// What pdflatex with T1 prints, found by compiling each character
	// of U+00A0-U+017F and the punctuation below: all but the nine
	// letters listed.
	printable := func(r rune) bool {
		switch {
		case r >= 0x20 && r < 0x7f, r >= 0xa0 && r <= 0xff:
			return true
		case r >= 0x100 && r <= 0x17f:
			return r != 0x126 && r != 0x127 && r != 0x138 && r != 0x13f && r != 0x140 && r != 0x149 && r != 0x166 && r != 0x167 && r != 0x17f
		}
		return strings.ContainsRune("–—‘’‚“”„†‡•…‰‹›€", r)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := LaTeXText(s)
		var back strings.Builder
	scan:
		for i := 0; i < len(out); {
			for _, u := range latexUnescapes {
				if strings.HasPrefix(out[i:], u.esc) {
					back.WriteString(u.text)
					i += len(u.esc)
					continue scan
				}
			}
			if m := latexCodePointRE.FindStringSubmatch(out[i:]); m != nil {
				cp, _ := strconv.ParseUint(m[1], 16, 32)
				if printable(rune(cp)) {
					t.Fatalf("LaTeXText(%q) = %q: printable U+%s written as a code point", s, out, m[1])
				}
				back.WriteRune(rune(cp))
				i += len(m[0])
				continue
			}
			r, n := utf8.DecodeRuneInString(out[i:])
			if strings.ContainsRune(`\{}$&#^_~%<>|"`, r) {
				t.Fatalf("LaTeXText(%q) = %q: unescaped %q at %d", s, out, r, i)
			}
			if !printable(r) {
				t.Fatalf("LaTeXText(%q) = %q: %U at %d, which pdflatex cannot print", s, out, r, i)
			}
			if r == '-' && i+1 < len(out) && out[i+1] == '-' {
				t.Fatalf("LaTeXText(%q) = %q: ligature -- at %d", s, out, i)
			}
			back.WriteRune(r)
			i += n
		}
		if want := oneLine(s); back.String() != want {
			t.Errorf("LaTeXText(%q) = %q unescapes to %q, want %q", s, out, back.String(), want)
		}
	})
}

// FuzzWriters checks every writer on any text: no error, valid JSON that
// gives the text back, and terminal lines that fit and hold no control
// character.
func FuzzWriters(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tab := textTable(s)
		var b bytes.Buffer
		if err := WriteJSON(&b, tab); err != nil {
			t.Fatal(err)
		}
		var doc struct{ Rows []map[string]any }
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatalf("JSON of %q: %v", s, err)
		}
		if got := doc.Rows[0]["text"]; utf8.ValidString(s) && got != s {
			t.Errorf("JSON text = %q, want %q", got, s)
		}
		b.Reset()
		if err := WriteLaTeX(&b, tab); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		const width = 40
		if err := WriteTerminal(&b, tab, width); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			if w := twwidth.WidthWithOptions(line, twwidth.Options{}); w > width {
				t.Errorf("terminal line %q is %d wide", line, w)
			}
			if strings.IndexFunc(line, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) }) >= 0 {
				t.Errorf("terminal line %q holds a control character", line)
			}
		}
	})
}

// FuzzWorkbookText checks that any text reads back from a workbook as
// written (what XML cannot carry as U+FFFD) and never as a formula.
func FuzzWorkbookText(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1000 {
			return // Excel truncates cells at 32767 characters; keep inputs small
		}
		var b bytes.Buffer
		if err := WriteWorkbook(&b, s, []*analysis.Table{textTable(s)}, Provenance{Bundle: s}); err != nil {
			t.Fatal(err)
		}
		wb, err := excelize.OpenReader(&b)
		if err != nil {
			t.Fatal(err)
		}
		defer wb.Close()
		sheet := wb.GetSheetList()[2]
		got, err := wb.GetCellValue(sheet, "A2", excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		if want := xmlText(s); got != want {
			t.Errorf("cell reads back as %q, want %q", got, want)
		}
		if fm, _ := wb.GetCellFormula(sheet, "A2"); fm != "" {
			t.Errorf("text %q became formula %q", s, fm)
		}
	})
}

// FuzzFormatNumber checks FormatNumber against encoding/json and that it
// reads back to Value.
func FuzzFormatNumber(f *testing.F) {
	for _, x := range []float64{0, -0.0, 1, -1.25, 58.2549, 1e-7, 1e21, 1.7976931348623157e308, 5e-324} {
		f.Add(x, uint8(1))
	}
	f.Fuzz(func(t *testing.T, x float64, d uint8) {
		c := analysis.Number(x)
		if !c.IsNum {
			return
		}
		decimals := int(d % (maxDecimals + 1))
		got := FormatNumber(c, decimals)
		want, err := json.Marshal(Value(c, decimals))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("FormatNumber(%v, %d) = %s, encoding/json gives %s", x, decimals, got, want)
		}
		if v, err := strconv.ParseFloat(got, 64); err != nil || v != Value(c, decimals) || got[0] == '-' && v == 0 {
			t.Errorf("FormatNumber(%v, %d) = %s reads back as %v (%v), want %v", x, decimals, got, v, err, Value(c, decimals))
		}
	})
}
