package hisrubric

import (
	"fmt"
	"regexp"
	"strings"
)

// An Element is one checked part of a report's structure: a section, a
// subsection or a table, with its score and, unless it scored +1, why.
type Element struct {
	Kind  string // "section", "subsection" or "table"
	ID    string // "2", "2.1"
	Title string
	// Score is +1 or -1; Fraction the fractional variant's score (the
	// same but for tables found: the mean of row-field and column
	// coverage, 0 to 1).
	Score, Fraction float64
	Reason          string
	Line            int // the header or table line, 0 when missing
}

// A Check is a report's structure check.
type Check struct {
	Elements []Element
	// Score and Fraction are the sums of the elements' scores; Max the
	// number of elements.
	Score, Fraction float64
	Max             int
	// Tables holds the table found under each subsection (by id), even
	// one with wrong columns, for answer extraction.
	Tables map[string]*MDTable
}

var (
	sectionNumRE = regexp.MustCompile(`(?i)^\s*(?:section|sec\.?|part)\s*(\d+)\s*[:.)\-–—]?\s*`)
	subNumRE     = regexp.MustCompile(`(?i)^\s*(?:s(?:ection)?\s*)?(\d+)\.(\d+)\s*[:.)\-–—]?\s*`)
	bareNumRE    = regexp.MustCompile(`^\s*(\d+)\s*[:.)\-–—]\s*`)
)

// header is a header block with its numbering split off.
type header struct {
	block   int
	number  string // "2" for a section, "2.1" for a subsection, "" when none
	section bool   // numbered as a section
	title   string // the rest, as a key
	text    string
	line    int
}

func splitHeader(b Block, i int) header {
	h := header{block: i, text: b.Text, line: b.Line}
	rest := b.Text
	if m := subNumRE.FindStringSubmatchIndex(rest); m != nil {
		h.number = rest[m[2]:m[3]] + "." + rest[m[4]:m[5]]
		rest = rest[m[1]:]
	} else if m := sectionNumRE.FindStringSubmatchIndex(rest); m != nil {
		h.number, h.section = rest[m[2]:m[3]], true
		rest = rest[m[1]:]
	} else if m := bareNumRE.FindStringSubmatchIndex(rest); m != nil {
		h.number, h.section = rest[m[2]:m[3]], true
		rest = rest[m[1]:]
	}
	h.title = key(rest)
	return h
}

// CheckStructure scores d against s with the company parameters p.
func CheckStructure(d *Doc, s *Structure, p Params) *Check {
	c := &Check{Max: s.MaxScore(), Tables: map[string]*MDTable{}}
	var hs []header
	for i, b := range d.Blocks {
		if b.Kind == HeaderBlock {
			hs = append(hs, splitHeader(b, i))
		}
	}
	claimed := map[int]bool{}
	// find returns the first unclaimed header whose title matches and
	// whose numbering, if any, is of the right kind and number; else the
	// first unclaimed header numbered id but titled otherwise.
	find := func(id, title string, section bool) (h *header, misnamed bool) {
		title = key(title)
		for i := range hs {
			x := &hs[i]
			if claimed[x.block] || x.title != title {
				continue
			}
			if x.number == "" || (x.section == section && x.number == id) {
				claimed[x.block] = true
				return x, false
			}
		}
		for i := range hs {
			x := &hs[i]
			if !claimed[x.block] && x.number == id && x.section == section {
				claimed[x.block] = true
				return x, true
			}
		}
		return nil, false
	}
	add := func(e Element) {
		c.Elements = append(c.Elements, e)
		c.Score += e.Score
		c.Fraction += e.Fraction
	}
	headerElement := func(kind, id, title string, h *header, misnamed bool) Element {
		e := Element{Kind: kind, ID: id, Title: title, Score: 1, Fraction: 1}
		switch {
		case h == nil:
			e.Score, e.Fraction, e.Reason = -1, -1, "missing"
		case misnamed:
			e.Score, e.Fraction, e.Line = -1, -1, h.line
			e.Reason = fmt.Sprintf("misnamed: header %q", clip(h.text, 80))
		default:
			e.Line = h.line
		}
		return e
	}
	// Sections first, so that a subsection titled like its section
	// ("Risk Factors") does not take the section's header.
	secHeaders := make([]*header, len(s.Sections))
	for i, sec := range s.Sections {
		h, mis := find(sec.ID, sec.Title, true)
		secHeaders[i] = h
		add(headerElement("section", sec.ID, sec.Title, h, mis))
	}
	for _, sec := range s.Sections {
		for _, sub := range sec.Subsections {
			h, mis := find(sub.ID, sub.Title, false)
			add(headerElement("subsection", sub.ID, sub.Title, h, mis))
			add(c.checkTable(d, sub, h, p))
		}
	}
	return c
}

func (c *Check) checkTable(d *Doc, sub Subsection, h *header, p Params) Element {
	e := Element{Kind: "table", ID: sub.ID, Title: sub.Title + " table", Score: -1, Fraction: -1}
	if h == nil {
		e.Reason = "missing (no subsection header)"
		return e
	}
	var broken *Block
	for i := h.block + 1; i < len(d.Blocks) && d.Blocks[i].Kind != HeaderBlock; i++ {
		b := &d.Blocks[i]
		if b.Kind == TableBlock {
			c.Tables[sub.ID] = b.Table
			e.Line = b.Line
			return scoreTable(e, b.Table, sub.Table, p)
		}
		if b.Kind == BrokenTable && broken == nil {
			broken = b
		}
	}
	if broken != nil {
		e.Line = broken.Line
		e.Reason = "malformed: no alignment row under the header row"
		return e
	}
	e.Reason = "missing"
	return e
}

func scoreTable(e Element, t *MDTable, spec TableSpec, p Params) Element {
	var problems []string
	want := make([]string, len(spec.Columns))
	for i, col := range spec.Columns {
		want[i] = p.Resolve(col)
	}
	got := make(map[string]bool, len(t.colKeys))
	for _, k := range t.colKeys {
		got[k] = true
	}
	colHits := 0
	exact := len(t.Header) == len(want)
	for i, w := range want {
		wk := colKey(w)
		if got[wk] {
			colHits++
		}
		if exact && t.colKeys[i] != wk {
			exact = false
		}
	}
	if !exact {
		problems = append(problems, fmt.Sprintf("wrong columns: got %s, want %s", list(t.Header), list(want)))
	}
	rows := make(map[string]bool, len(t.rowKeys))
	for _, k := range t.rowKeys {
		if k != "" {
			rows[k] = true
		}
	}
	rowCov := 0.0
	if spec.FreeRows {
		if len(rows) > 0 {
			rowCov = 1
		} else {
			problems = append(problems, "no rows")
		}
	} else {
		var missing []string
		var kb [64]byte
		for _, r := range spec.Rows {
			if rows[string(appendKey(kb[:0], r))] {
				rowCov++
			} else {
				missing = append(missing, r)
			}
		}
		rowCov /= float64(len(spec.Rows))
		if len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("missing rows: %s", list(missing)))
		}
	}
	e.Fraction = (rowCov + float64(colHits)/float64(len(want))) / 2
	if len(problems) == 0 {
		e.Score = 1
	} else {
		e.Reason = strings.Join(problems, "; ")
	}
	return e
}

// colKey normalises a column header: "FY2024", "FY 2024" and "2024" are
// the same column.
func colKey(s string) string {
	k := key(s)
	if rest, ok := strings.CutPrefix(k, "fy"); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
		return rest
	}
	return k
}

func list(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", clip(x, 40))
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// clip cuts s to at most n runes.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
