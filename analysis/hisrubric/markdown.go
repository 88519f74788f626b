package hisrubric

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
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
	tagRE = regexp.MustCompile(`(?i)<\s*/?\s*[a-z][^>]*>`)
	brRE  = regexp.MustCompile(`(?i)<\s*br\s*/?\s*>`)
)

// Parse parses a markdown report. It never fails: whatever is not a
// header or a table is text. Parsing reports took 0.13 s of a full-scale
// reproduce (about 3.2 CPU-s) with regular expressions; the scanner here
// is several times as fast (BenchmarkParse: 59 us against 439 us for a
// full report).
func Parse(md string) *Doc {
	d := &Doc{}
	if len(md) > MaxReport {
		md = md[:MaxReport]
		d.Truncated = true
	}
	if !utf8.ValidString(md) {
		md = strings.ToValidUTF8(md, "\uFFFD")
	}
	if strings.Contains(md, "\r\n") {
		md = strings.ReplaceAll(md, "\r\n", "\n")
	}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		ln := strings.TrimRight(lines[i], " \t\r")
		trimmed := strings.TrimSpace(ln)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~"):
			continue
		case isHeader(ln):
			level, rest := headerParts(ln)
			text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(rest), "#"))
			d.Blocks = append(d.Blocks, Block{Kind: HeaderBlock, Line: i + 1, Level: level, Text: cleanCell(text)})
		case hasPipe(ln):
			j := i
			for j < len(lines) && hasPipe(lines[j]) && !isHeader(lines[j]) {
				j++
			}
			run := lines[i:j]
			if len(run) >= 2 && isAlignRow(run[1]) {
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
// then a '#'.
func isHeader(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && strings.HasPrefix(t, "#")
}

// headerParts splits a header line into its level (the leading '#', at
// most six) and the rest.
func headerParts(line string) (level int, rest string) {
	t := strings.TrimLeft(line, " ")
	for level < len(t) && level < 6 && t[level] == '#' {
		level++
	}
	return level, t[level:]
}

// isAlignRow reports whether line is a table's alignment row: cells of
// dashes with optional colons at either end, separated by pipes, with
// optional outer pipes and blanks (tab, newline, form feed, carriage
// return, space) around.
func isAlignRow(line string) bool {
	i := skipBlanks(line, 0)
	if i < len(line) && line[i] == '|' {
		i++
	}
	i, ok := alignCell(line, i)
	if !ok {
		return false
	}
	for i < len(line) && line[i] == '|' {
		j, ok := alignCell(line, i+1)
		if !ok {
			i++ // the closing pipe
			break
		}
		i = j
	}
	return skipBlanks(line, i) == len(line)
}

// alignCell reads blanks, an optional colon, dashes, an optional colon
// and blanks from s[i:]; ok is false without a dash.
func alignCell(s string, i int) (end int, ok bool) {
	i = skipBlanks(s, i)
	if i < len(s) && s[i] == ':' {
		i++
	}
	j := i
	for j < len(s) && s[j] == '-' {
		j++
	}
	if j == i {
		return i, false
	}
	if j < len(s) && s[j] == ':' {
		j++
	}
	return skipBlanks(s, j), true
}

// skipBlanks skips the blanks of regexp's \s from s[i:].
func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	return i
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
	if n := len(run) - 2; n > 0 {
		t.Rows, t.rowKeys = make([][]string, 0, n), make([]string, 0, n)
	}
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
	t.colKeys = make([]string, 0, len(t.Header))
	for _, h := range t.Header {
		t.colKeys = append(t.colKeys, colKey(h))
	}
	return t
}

// splitRow splits a table row on unescaped pipes, dropping the empty
// cells outside leading and trailing pipes. The cells are slices of
// line unless they are cleaned or hold an escaped pipe.
func splitRow(line string) []string {
	s := strings.TrimSpace(line)
	// A pipe is escaped when a backslash comes right before it.
	cells := make([]string, 0, strings.Count(s, "|")+1)
	start, escaped := 0, false
	cut := func(end int) {
		c := s[start:end]
		if escaped {
			c = strings.ReplaceAll(c, `\|`, "|")
		}
		cells = append(cells, c)
	}
	for i := 0; ; i++ {
		j := strings.IndexByte(s[i:], '|')
		if j < 0 {
			break
		}
		i += j
		if i > 0 && s[i-1] == '\\' {
			escaped = true
			continue
		}
		cut(i)
		start, escaped = i+1, false
	}
	cut(len(s))
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
	// Spaces around a clean cell are all there is to clean.
	if t := strings.Trim(s, " "); isClean(t) {
		return t
	}
	if strings.Contains(s, "<") {
		s = brRE.ReplaceAllString(s, " ")
		s = tagRE.ReplaceAllString(s, "")
	}
	s = emphasis.Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// isClean reports whether cleanCell leaves s as it is: no '<', emphasis
// marker or white space but single spaces between words.
func isClean(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError || unicode.IsSpace(r) {
				return false
			}
			i += n
			continue
		}
		switch c {
		case '<', '*', '_', '`', '\t', '\n', '\v', '\f', '\r':
			return false
		case ' ':
			if s[i+1] == ' ' {
				return false
			}
		}
		i++
	}
	return true
}

var emphasis = strings.NewReplacer("**", "", "__", "", "`", "")

// key normalises a header, row or column name for comparison: lower
// case letters and digits only, "&" read as "and".
func key(s string) string {
	// Most names are keys already, or ASCII.
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == len(s) {
		return s
	}
	return string(appendKey(make([]byte, 0, len(s)+8), s))
}

// appendKey appends key(s) to b.
func appendKey(b []byte, s string) []byte {
	for _, r := range s {
		switch {
		case r == '&':
			b = append(b, "and"...)
		case r < utf8.RuneSelf:
			c := byte(r)
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
				b = append(b, c)
			}
		default:
			if l := unicode.ToLower(r); unicode.IsLetter(l) || unicode.IsDigit(l) {
				b = utf8.AppendRune(b, l)
			}
		}
	}
	return b
}
