package hisrubric

// The regular-expression parser of reports that the scanner in
// markdown.go replaced, kept as the baseline of BenchmarkParse.

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	refHeaderRE = regexp.MustCompile(`^ {0,3}(#{1,6})(.*)$`)
	refAlignRE  = regexp.MustCompile(`^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)
	refEmphasis = strings.NewReplacer("**", "", "__", "", "`", "")
)

func refParse(md string) *Doc {
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
		case refIsHeader(ln):
			m := refHeaderRE.FindStringSubmatch(ln)
			text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m[2]), "#"))
			d.Blocks = append(d.Blocks, Block{Kind: HeaderBlock, Line: i + 1, Level: len(m[1]), Text: refCleanCell(text)})
		case hasPipe(ln):
			j := i
			for j < len(lines) && hasPipe(lines[j]) && !refIsHeader(lines[j]) {
				j++
			}
			run := lines[i:j]
			if len(run) >= 2 && refAlignRE.MatchString(run[1]) && strings.Contains(run[1], "-") {
				d.Blocks = append(d.Blocks, Block{Kind: TableBlock, Line: i + 1, Table: refParseTable(run)})
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

func refIsHeader(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && strings.HasPrefix(t, "#") && refHeaderRE.MatchString(line)
}

func refParseTable(run []string) *MDTable {
	t := &MDTable{Header: refSplitRow(run[0])}
	for _, ln := range run[2:] {
		cells := refSplitRow(ln)
		if len(cells) != len(t.Header) {
			t.Ragged++
			for len(cells) < len(t.Header) {
				cells = append(cells, "")
			}
			cells = cells[:len(t.Header)]
		}
		t.Rows = append(t.Rows, cells)
		t.rowKeys = append(t.rowKeys, refKey(cells[0]))
	}
	for _, h := range t.Header {
		t.colKeys = append(t.colKeys, colKey(h))
	}
	return t
}

func refSplitRow(line string) []string {
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
		cells[i] = refCleanCell(c)
	}
	return cells
}

func refCleanCell(s string) string {
	if strings.Contains(s, "<") {
		s = brRE.ReplaceAllString(s, " ")
		s = tagRE.ReplaceAllString(s, "")
	}
	s = refEmphasis.Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

func refKey(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.ReplaceAll(s, "&", " and ")) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
