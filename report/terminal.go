package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/finrepro/finrepro/analysis"
)

// Terminal marks: suffixes of best and second-best values, and the
// padding of unmarked cells in a marked column so that right-aligned
// numbers stay aligned on the digit.
const (
	bestSuffix   = "**"
	secondSuffix = "_ "
	noSuffix     = "  "
	// minTermWidth is the narrowest a text column is squeezed to when
	// the table is too wide for the terminal.
	minTermWidth = 10
)

// WriteTerminal writes t as a plain ASCII table for a terminal of the
// given width (no limit when width <= 0): the title above; the caption,
// notes and a legend of the marks below. Long text cells wrap to fit.
// Text is made printable (control characters become spaces) and widths
// are measured with East-Asian ambiguous characters as narrow, whatever
// the locale, so the output depends on nothing but t and width.
func WriteTerminal(w io.Writer, t *analysis.Table, width int) error {
	if err := check(t); err != nil {
		return fmt.Errorf("report: terminal: %w", err)
	}
	// Writes to bw keep their first error, which Flush returns.
	bw := bufio.NewWriter(w)
	if t.Title != "" {
		writeWrapped(bw, oneLine(t.Title), width)
	}
	m, anyMark := marks(t)
	heads := make([]string, len(t.Columns))
	align := make([]tw.Align, len(t.Columns))
	cells := make([][]string, len(t.Rows))
	natural := make([]int, len(t.Columns))
	least := make([]int, len(t.Columns))
	for j, c := range t.Columns {
		heads[j] = strings.TrimSpace(oneLine(header(c)))
		natural[j] = textWidth(heads[j])
		align[j] = tw.AlignLeft
		if numeric(t, j) {
			align[j] = tw.AlignRight
		}
	}
	marked := make([]bool, len(t.Columns))
	for j := range marked {
		marked[j] = hasMarks(m[j])
	}
	for i, r := range t.Rows {
		cells[i] = make([]string, len(r))
		for j, c := range r {
			s := strings.TrimSpace(oneLine(c.Format(t.Columns[j].Decimals)))
			if marked[j] {
				switch m[j][i] {
				case analysis.Best:
					s += bestSuffix
				case analysis.Second:
					s += secondSuffix
				default:
					s += noSuffix
				}
			}
			cells[i][j] = s
			natural[j] = max(natural[j], textWidth(s))
			if c.IsNum || c.Undef {
				// Numbers never wrap.
				least[j] = max(least[j], textWidth(s))
			}
		}
	}
	for j := range least {
		least[j] = max(least[j], min(natural[j], minTermWidth))
	}
	widths := fit(natural, least, width-3*len(t.Columns)-1)
	for j := range heads {
		heads[j] = wrap(heads[j], widths[j])
	}
	tab := tablewriter.NewTable(bw,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithEastAsian(tw.Off),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	tab.Header(heads)
	for i, row := range cells {
		for j := range row {
			row[j] = wrap(row[j], widths[j])
		}
		if err := tab.Append(cells[i]); err != nil {
			return fmt.Errorf("report: terminal: table %s: %w", t.Name, err)
		}
	}
	if err := tab.Render(); err != nil {
		return fmt.Errorf("report: terminal: table %s: %w", t.Name, err)
	}
	if t.Caption != "" {
		writeWrapped(bw, oneLine(t.Caption), width)
	}
	for i, n := range t.Notes {
		writeWrapped(bw, fmt.Sprintf("(%d) %s", i+1, oneLine(n)), width)
	}
	if anyMark {
		writeWrapped(bw, "** best, _ second best in each marked column.", width)
	}
	return bw.Flush()
}

func hasMarks(m []analysis.Mark) bool {
	for _, k := range m {
		if k != analysis.NoMark {
			return true
		}
	}
	return false
}

// writeWrapped writes s followed by a newline, broken at spaces into lines
// no wider than width (when width > 0); a word wider than width stands on
// a line of its own.
func writeWrapped(w *bufio.Writer, s string, width int) {
	words := strings.Fields(s)
	if width <= 0 || len(words) == 0 {
		w.WriteString(strings.Join(words, " "))
		w.WriteByte('\n')
		return
	}
	opts := twwidth.Options{}
	line, lw := "", 0
	for _, word := range words {
		ww := twwidth.WidthWithOptions(word, opts)
		if lw > 0 && lw+1+ww > width {
			w.WriteString(line)
			w.WriteByte('\n')
			line, lw = "", 0
		}
		if lw > 0 {
			line += " "
			lw++
		}
		line += word
		lw += ww
	}
	w.WriteString(line)
	w.WriteByte('\n')
}

// fit returns column widths that sum to at most budget: every column at
// its natural width when they fit, else the widest columns cut to a
// common cap, none below its least width (so a table may still overflow
// when even the least widths do not fit). budget <= 0 means no limit.
func fit(natural, least []int, budget int) []int {
	widths := slices.Clone(natural)
	sum := func(limit int) int {
		n := 0
		for j := range natural {
			n += max(least[j], min(natural[j], limit))
		}
		return n
	}
	top := slices.Max(natural)
	if budget <= 0 || sum(top) <= budget {
		return widths
	}
	limit := top
	for limit > 1 && sum(limit) > budget {
		limit--
	}
	for j := range widths {
		widths[j] = max(least[j], min(natural[j], limit))
	}
	return widths
}

// wrap breaks s into lines no wider than width, at spaces where it can
// and inside a word that is wider than width on its own.
func wrap(s string, width int) string {
	if width <= 0 || textWidth(s) <= width {
		return s
	}
	opts := twwidth.Options{}
	var lines []string
	line, lw := "", 0
	flush := func() {
		lines = append(lines, line)
		line, lw = "", 0
	}
	for _, word := range strings.Fields(s) {
		ww := twwidth.WidthWithOptions(word, opts)
		if lw > 0 && lw+1+ww > width {
			flush()
		}
		if lw > 0 {
			line += " "
			lw++
		}
		for ww > width-lw {
			// Break the word at the last rune that fits.
			cut, cw := 0, 0
			for i, r := range word {
				rw := twwidth.WidthWithOptions(string(r), opts)
				if lw+cw+rw > width && (cut > 0 || lw > 0) {
					break
				}
				cut, cw = i+len(string(r)), cw+rw
			}
			line += word[:cut]
			lw += cw
			word, ww = word[cut:], ww-cw
			flush()
		}
		line += word
		lw += ww
	}
	if lw > 0 || len(lines) == 0 {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
