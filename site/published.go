package site

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// verdictText words a cell verdict on the page: a differing numeric cell
// within twice its tolerance reads as close, not as wrong, so that 72.25
// against 72.23 is told apart from a cell further off.
func verdictText(v string) string {
	if v == analysis.WithinTwice {
		return "within twice the tolerance"
	}
	return v
}

// verdictClass is the CSS class of a cell verdict: a fixed word.
func verdictClass(v string) string {
	switch v {
	case analysis.Reproduced:
		return "v-ok"
	case analysis.WithinTwice:
		return "v-near"
	case analysis.Differs:
		return "v-bad"
	case analysis.NotComputed:
		return "v-none"
	}
	return "v-empty"
}

// A pubView is one published table laid out as the paper prints it.
type pubView struct {
	Anchor     string
	Title      string // the published table's name
	Verdict    string
	Class      string
	Reason     string
	Summary    string
	Headers    []string
	Rows       [][]pubCell
	Missing    []string // rows the bundle has no system for
	Uncomputed []string
}

// A pubCell is one cell of a pubView: a row key, or a published value
// with the computed one.
type pubCell struct {
	Key      bool
	Text     string // the published value or the key
	Computed string
	Class    string
	Title    string // hover: the signed difference
	Spoken   string // the same in words, for screen readers
}

// pubStats counts the verdicts of one comparison's cells in the rows
// the bundle has.
type pubStats struct {
	compared, reproduced, near, differ int
	largest                            float64 // signed, largest in size
	at                                 string  // row and column of largest
	atPub                              string  // the published value there
	missing                            int     // rows not in the bundle
}

func statsOf(c analysis.Comparison) pubStats {
	var st pubStats
	for _, r := range c.Rows {
		if !r.Found {
			st.missing++
			continue
		}
		for j, cc := range r.Cells {
			switch cc.Status {
			case analysis.Reproduced:
				st.reproduced++
			case analysis.WithinTwice:
				st.near++
			case analysis.Differs:
				st.differ++
			default:
				continue
			}
			st.compared++
			if d := cc.Cell; d.Numeric && math.Abs(d.Delta) > math.Abs(st.largest) {
				st.largest = d.Delta
				st.at = strings.Join(r.Key, " / ") + ", " + c.Header[c.Keys+j]
				st.atPub = cc.Published
			}
		}
	}
	return st
}

// signed formats a difference with its sign at the published precision
// plus two digits.
func signed(d float64, published string) string {
	dec := 2
	if i := strings.IndexByte(published, '.'); i >= 0 {
		dec = len(published) - i - 1 + 2
	}
	s := strconv.FormatFloat(d, 'f', dec, 64)
	if d >= 0 {
		s = "+" + s
	}
	return strings.Replace(s, "-", "−", 1)
}

func (st pubStats) summary(c analysis.Comparison) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d cells compared: %d reproduced, %d within twice the tolerance, %d differ", st.compared, st.reproduced, st.near, st.differ)
	if st.at != "" {
		fmt.Fprintf(&b, "; largest difference %s (%s)", signed(st.largest, st.atPub), st.at)
	}
	b.WriteString(".")
	if st.missing > 0 {
		fmt.Fprintf(&b, " %d published rows name systems the bundle does not have.", st.missing)
	}
	if n := len(c.Uncomputed); n > 0 {
		fmt.Fprintf(&b, " %d published columns are not computed.", n)
	}
	return b.String()
}

// pubViews returns the views of the comparisons of bench.
func (s *site) pubViews(bench string) []*pubView {
	var out []*pubView
	for i, c := range s.in.Published {
		if c.Benchmark != bench {
			continue
		}
		st := statsOf(c)
		v := &pubView{Anchor: "pub" + itoa(i), Title: c.Table, Verdict: c.Verdict, Class: tableClass(c.Verdict),
			Reason: c.Reason, Summary: st.summary(c), Headers: c.Header, Uncomputed: c.Uncomputed}
		for _, r := range c.Rows {
			if !r.Found {
				v.Missing = append(v.Missing, strings.Join(r.Key, " / "))
				continue
			}
			row := make([]pubCell, 0, len(r.Key)+len(r.Cells))
			for _, k := range r.Key {
				row = append(row, pubCell{Key: true, Text: k})
			}
			for j, cc := range r.Cells {
				verdict := verdictText(cc.Status)
				pc := pubCell{Text: cc.Published, Class: verdictClass(cc.Status)}
				col := c.Header[c.Keys+j]
				switch d := cc.Cell; {
				case verdict == "":
				case cc.Status == analysis.NotComputed:
					pc.Title = col + " is not computed"
					pc.Spoken = "published " + cc.Published + ", not computed"
				case !d.Numeric:
					pc.Computed = d.Computed
					pc.Title = "published " + cc.Published + ", computed " + d.Computed + ": " + verdict
					pc.Spoken = pc.Title
				default:
					pc.Computed = d.Computed
					diff := signed(d.Delta, cc.Published)
					pc.Title = "computed − published = " + diff + " (tolerance " + strconv.FormatFloat(d.Tolerance, 'g', 4, 64) + "): " + verdict
					pc.Spoken = "published " + cc.Published + ", computed " + d.Computed + ", difference " + diff + ", " + verdict
				}
				row = append(row, pc)
			}
			v.Rows = append(v.Rows, row)
		}
		out = append(out, v)
	}
	return out
}

// tableClass is the CSS class of a table's verdict.
func tableClass(v string) string {
	switch v {
	case analysis.Reproduced:
		return "v-ok"
	case analysis.Differs:
		return "v-bad"
	}
	return "v-none"
}

// pubLine is the index's one-line verdict on the published tables of
// bench, and whether it has any.
func (s *site) pubLine(bench string) (string, bool) {
	tables, reproduced := 0, 0
	var all pubStats
	for _, c := range s.in.Published {
		if c.Benchmark != bench {
			continue
		}
		tables++
		if c.Verdict == analysis.Reproduced {
			reproduced++
		}
		st := statsOf(c)
		all.compared += st.compared
		all.reproduced += st.reproduced
		all.near += st.near
		all.differ += st.differ
	}
	if tables == 0 {
		return "no published table", false
	}
	return fmt.Sprintf("%d of %d tables reproduced; %d of %d cells reproduced, %d within twice the tolerance, %d differ",
		reproduced, tables, all.reproduced, all.compared, all.near, all.differ), true
}
