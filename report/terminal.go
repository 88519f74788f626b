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
	minTermWidth = 16
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
			s := strings.TrimSpace(oneLine(c.Format(c.DecimalsIn(t.Columns[j]))))
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
	word, piece := make([]int, len(t.Columns)), make([]int, len(t.Columns))
	for j := range t.Columns {
		word[j], piece[j] = longestWord(heads[j]), longestPiece(heads[j])
		for i := range cells {
			word[j] = max(word[j], longestWord(cells[i][j]))
			piece[j] = max(piece[j], longestPiece(cells[i][j]))
		}
	}
	widths, shown := columnWidths(natural, word, piece, least, width)
	if len(shown) < len(t.Columns) {
		heads, align, cells = pick(heads, shown), pick(align, shown), slices.Clone(cells)
		for i := range cells {
			cells[i] = pick(cells[i], shown)
		}
	}
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
	if len(shown) < len(t.Columns) {
		var left []string
		for j, c := range t.Columns {
			if !slices.Contains(shown, j) {
				left = append(left, strings.TrimSpace(oneLine(c.Header())))
			}
		}
		writeWrapped(bw, fmt.Sprintf("Not shown at width %d: %s (the CSV, JSON and workbook have every column).", width, strings.Join(left, ", ")), width)
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
// no wider than width (when width > 0); a word wider than width breaks as
// wrap breaks it.
func writeWrapped(w *bufio.Writer, s string, width int) {
	w.WriteString(wrap(strings.Join(strings.Fields(s), " "), width))
	w.WriteByte('\n')
}

// columnWidths returns the columns to show (indexes, in order) and their
// widths so that the rendered table is no wider than width (no limit when
// width <= 0). Columns keep their natural width when all fit; else wide
// columns are narrowed to a common cap, text wrapping at spaces (no
// column narrower than its longest word, or than least, the width of its
// numbers, which never wrap); when even that does not fit, words break
// after hyphens, underscores and slashes (no column narrower than its
// longest piece, see pieces); then words longer than minTermWidth (16) may
// break anywhere; and when that does not fit either, the last columns are
// left out, one at a time, down to the first.
func columnWidths(natural, word, piece, least []int, width int) (widths, shown []int) {
	shown = make([]int, len(natural))
	for j := range shown {
		shown[j] = j
	}
	if width <= 0 {
		return slices.Clone(natural), shown
	}
	for {
		budget := width - 3*len(shown) - 1
		nat, byWord, byPiece, byCut := pick(natural, shown), make([]int, len(shown)), make([]int, len(shown)), make([]int, len(shown))
		for k, j := range shown {
			byWord[k] = min(natural[j], max(least[j], word[j]))
			byPiece[k] = min(natural[j], max(least[j], piece[j]))
			byCut[k] = min(natural[j], max(least[j], min(piece[j], minTermWidth)))
		}
		for _, lower := range [][]int{byWord, byPiece, byCut} {
			if sumInts(lower) <= budget {
				return fit(nat, lower, budget), shown
			}
		}
		if len(shown) == 1 {
			return []int{max(1, budget)}, shown
		}
		shown = shown[:len(shown)-1]
	}
}

// fit returns column widths that sum to at most budget, none below its
// least width (which must sum to at most budget): every column at its
// natural width when they fit, else the widest columns cut to a common
// cap.
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
	if sum(top) <= budget {
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

func sumInts(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// pick returns the elements of xs at the indexes idx.
func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for k, j := range idx {
		out[k] = xs[j]
	}
	return out
}

// pieces splits a word after every hyphen, underscore or slash.
func pieces(word string) []string {
	var out []string
	for len(word) > 0 {
		i := strings.IndexAny(word, "-_/")
		if i < 0 || i == len(word)-1 {
			return append(out, word)
		}
		out = append(out, word[:i+1])
		word = word[i+1:]
	}
	return out
}

// longestPiece is the display width of the widest piece (see pieces) of
// a word of s.
func longestPiece(s string) int {
	w := 0
	for _, f := range strings.Fields(s) {
		for _, p := range pieces(f) {
			w = max(w, twwidth.WidthWithOptions(p, twwidth.Options{}))
		}
	}
	return w
}

// longestWord is the display width of the widest space-separated word of
// s.
func longestWord(s string) int {
	w := 0
	for _, f := range strings.Fields(s) {
		w = max(w, twwidth.WidthWithOptions(f, twwidth.Options{}))
	}
	return w
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
		if ww > width-lw {
			// A word too long for the line breaks after a hyphen, an
			// underscore or a slash where it can, else at the last
			// rune that fits.
			for _, piece := range pieces(word) {
				pw := twwidth.WidthWithOptions(piece, opts)
				if lw > 0 && lw+pw > width {
					flush()
				}
				for pw > width-lw {
					cut, cw := 0, 0
					for i, r := range piece {
						rw := twwidth.WidthWithOptions(string(r), opts)
						if lw+cw+rw > width && (cut > 0 || lw > 0) {
							break
						}
						cut, cw = i+len(string(r)), cw+rw
					}
					line += piece[:cut]
					lw += cw
					piece, pw = piece[cut:], pw-cw
					flush()
				}
				line += piece
				lw += pw
			}
			continue
		}
		line += word
		lw += ww
	}
	if lw > 0 || len(lines) == 0 {
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
