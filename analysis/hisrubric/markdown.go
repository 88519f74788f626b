package hisrubric

import (
	"regexp"
	"strings"
	"unicode"
)

// MaxReport caps the bytes of a report the parser reads; the rest is
// ignored and reported.
const MaxReport = 1 << 20

// A Doc is a parsed markdown report: headers, tables and other text, in
// order.
type Doc struct {
	Blocks []Block
	// Truncated is true when the report was longer than MaxReport.
	Truncated bool
}

// A BlockKind says what a block is.
type BlockKind int

// Kinds of blocks.
const (
	TextBlock   BlockKind = iota // text outside headers and tables
	HeaderBlock                  // an ATX header ("## Section 1: ...")
	TableBlock                   // a table with its alignment row
	// BrokenTable is a run of pipe-delimited lines with no alignment row
	// under its first line: not a markdown table.
	BrokenTable
)

// A Block is one part of a Doc.
type Block struct {
	Kind  BlockKind
	Line  int    // first line, from 1
	Level int    // header level (1-6)
	Text  string // header text, or the raw lines of text and broken tables
	Table *MDTable
}

// An MDTable is a parsed markdown table. Cells are cleaned: inline HTML
// removed (<br> becomes a space), emphasis markers dropped, escaped pipes
// unescaped, spaces collapsed.
type MDTable struct {
	Header []string
	Rows   [][]string
	// Ragged counts body rows whose cell count differed from the
	// header's; they are padded or cut to the header's width.
	Ragged int
	// colKeys and rowKeys are the normalised header cells and first
	// cells of the rows.
	colKeys, rowKeys []string
}

var (
	headerRE = regexp.MustCompile(`^ {0,3}(#{1,6})(.*)$`)
	alignRE  = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
	tagRE    = regexp.MustCompile(`(?i)<\s*/?\s*[a-z][^>]*>`)
	brRE     = regexp.MustCompile(`(?i)<\s*br\s*/?\s*>`)
)

// Parse parses a markdown report. It never fails: whatever is not a
// header or a table is text.
func Parse(md string) *Doc {
	d := &Doc{}
	if len(md) > MaxReport {
		md = md[:MaxReport]
		d.Truncated = true
	}
	md = strings.ToValidUTF8(md, "\uFFFD")
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		ln := strings.TrimRight(lines[i], " \t\r")
		trimmed := strings.TrimSpace(ln)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			continue
		case isHeader(ln):
			m := headerRE.FindStringSubmatch(ln)
			text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m[2]), "#"))
			d.Blocks = append(d.Blocks, Block{Kind: HeaderBlock, Line: i + 1, Level: len(m[1]), Text: cleanCell(text)})
		case hasPipe(ln):
			j := i
			for j < len(lines) && hasPipe(lines[j]) && !isHeader(lines[j]) {
				j++
			}
			run := lines[i:j]
			if len(run) >= 2 && alignRE.MatchString(run[1]) && strings.Contains(run[1], "-") {
				d.Blocks = append(d.Blocks, Block{Kind: TableBlock, Line: i + 1, Table: parseTable(run)})
			} else {
				d.Blocks = append(d.Blocks, Block{Kind: BrokenTable, Line: i + 1, Text: strings.Join(run, "\n")})
			}
			i = j - 1
		default:
			if n := len(d.Blocks); n > 0 && d.Blocks[n-1].Kind == TextBlock && d.Blocks[n-1].Line+strings.Count(d.Blocks[n-1].Text, "\n")+1 == i+1 {
				d.Blocks[n-1].Text += "\n" + ln
			} else {
				d.Blocks = append(d.Blocks, Block{Kind: TextBlock, Line: i + 1, Text: ln})
			}
		}
	}
	return d
}

// isHeader reports whether line is an ATX header: up to three spaces,
// then one to six '#'.
func isHeader(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && strings.HasPrefix(t, "#") && headerRE.MatchString(line)
}

// hasPipe reports whether line has an unescaped pipe.
func hasPipe(line string) bool {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			return true
		}
	}
	return false
}

func parseTable(run []string) *MDTable {
	t := &MDTable{Header: splitRow(run[0])}
	for _, ln := range run[2:] {
		cells := splitRow(ln)
		if len(cells) != len(t.Header) {
			t.Ragged++
			for len(cells) < len(t.Header) {
				cells = append(cells, "")
			}
			cells = cells[:len(t.Header)]
		}
		t.Rows = append(t.Rows, cells)
		t.rowKeys = append(t.rowKeys, key(cells[0]))
	}
	for _, h := range t.Header {
		t.colKeys = append(t.colKeys, colKey(h))
	}
	return t
}

// splitRow splits a table row on unescaped pipes, dropping the empty
// cells outside leading and trailing pipes.
func splitRow(line string) []string {
	s := strings.TrimSpace(line)
	var cells []string
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, b.String())
			b.Reset()
		default:
			b.WriteByte(s[i])
		}
	}
	cells = append(cells, b.String())
	if strings.HasPrefix(s, "|") {
		cells = cells[1:]
	}
	if len(cells) > 1 && strings.HasSuffix(s, "|") && !strings.HasSuffix(s, `\|`) {
		cells = cells[:len(cells)-1]
	}
	for i, c := range cells {
		cells[i] = cleanCell(c)
	}
	return cells
}

// cleanCell removes inline HTML and emphasis and collapses white space.
func cleanCell(s string) string {
	if strings.Contains(s, "<") {
		s = brRE.ReplaceAllString(s, " ")
		s = tagRE.ReplaceAllString(s, "")
	}
	s = emphasis.Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

var emphasis = strings.NewReplacer("**", "", "__", "", "`", "")

// key normalises a header, row or column name for comparison: lower
// case letters and digits only, "&" read as "and".
func key(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(s, "&", " and ")) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
