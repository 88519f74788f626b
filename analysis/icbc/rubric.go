package icbc

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// A Rubric is an expert rubric parsed from the authors' markdown: a title,
// dimensions with points, each with sub-dimensions with points and score
// bands.
type Rubric struct {
	Title      string
	Dimensions []Dimension
	// StatedDimensions and StatedSubs are the counts the rubric's text
	// announces ("4 primary dimensions and 12 secondary dimensions",
	// "4个一级维度、12个二级维度"); 0 when it announces none.
	StatedDimensions, StatedSubs int
	// Problems are inconsistencies found, reported, never fixed.
	Problems []string
}

// A Dimension is a rubric's first-level dimension.
type Dimension struct {
	ID     string // "1"
	Name   string
	Points float64
	Subs   []SubDimension
}

// A SubDimension is a second-level dimension: the unit a judge scores.
type SubDimension struct {
	ID     string // "1.2": dimension 1, sub-dimension (2)
	Name   string
	Points float64
	Bands  []Band
}

// A Band is one score band of a sub-dimension ("9-10: ...").
type Band struct {
	Lo, Hi float64
	Text   string
}

// Subs returns every sub-dimension in order.
func (r *Rubric) Subs() []SubDimension {
	var out []SubDimension
	for _, d := range r.Dimensions {
		out = append(out, d.Subs...)
	}
	return out
}

// Total is the sum of the dimensions' points.
func (r *Rubric) Total() float64 {
	t := 0.0
	for _, d := range r.Dimensions {
		t += d.Points
	}
	return t
}

// SubTotal is the sum of the sub-dimensions' points: the most a judge
// can award.
func (r *Rubric) SubTotal() float64 {
	t := 0.0
	for _, s := range r.Subs() {
		t += s.Points
	}
	return t
}

// MaxRubric caps the size of a rubric the parser reads.
const MaxRubric = 1 << 20

const pointsRE = `[（(]\s*(?:共\s*)?([0-9]+(?:\.[0-9]+)?)\s*(?:points?|pts|分)\s*[)）]`

var (
	reDim   = regexp.MustCompile(`^([0-9]+)\s*[.、．]\s*(.+?)\s*` + pointsRE + `$`)
	reSub   = regexp.MustCompile(`^[（(]\s*([0-9]+)\s*[)）]\s*(.+?)\s*` + pointsRE + `$`)
	reBand  = regexp.MustCompile(`^[-*+]\s*\**\s*([0-9]+(?:\.[0-9]+)?)(?:\s*(?:-|–|—|~|～|至|to)\s*([0-9]+(?:\.[0-9]+)?))?\s*(?:points?|pts|分)?\s*\**\s*[:：]\s*\**\s*(.*)$`)
	reCount = []*regexp.Regexp{
		regexp.MustCompile(`(?i)([0-9]+)\s*primary dimensions?\W+(?:and\s+)?([0-9]+)\s*secondary dimensions?`),
		regexp.MustCompile(`([0-9]+)\s*个一级维度\W*\s*([0-9]+)\s*个二级维度`),
	}
)

// headingText strips markdown heading marks and surrounding bold from a
// line.
func headingText(line string) string {
	t := strings.TrimSpace(line)
	t = strings.TrimLeft(t, "#")
	t = strings.TrimSpace(t)
	for strings.HasPrefix(t, "**") && strings.HasSuffix(t, "**") && len(t) >= 4 {
		t = strings.TrimSpace(t[2 : len(t)-2])
	}
	return t
}

// ParseRubric parses a rubric in any of the heading styles the authors
// use: dimensions "### 1. Name (25 points)", "## 1. 名称（共 30 分）";
// sub-dimensions "#### (1) Name (10 points)", "**(1) Name (10 points)**",
// "### （1）名称（10分）"; bands "- 9-10: ...", "- **9–10 points**: ...",
// "* **6–8 分**：...". It fails only when it finds no dimension; every
// other inconsistency is recorded in Problems.
func ParseRubric(md string) (*Rubric, error) {
	if len(md) > MaxRubric {
		return nil, fmt.Errorf("rubric: larger than %d bytes", MaxRubric)
	}
	r := &Rubric{}
	var cur *SubDimension
	for line := range strings.SplitSeq(md, "\n") {
		t := headingText(line)
		if t == "" {
			continue
		}
		if r.Title == "" && strings.HasPrefix(strings.TrimSpace(line), "#") && !reDim.MatchString(t) {
			r.Title = t
			continue
		}
		if r.StatedDimensions == 0 {
			plain := strings.ReplaceAll(t, "**", "")
			for _, re := range reCount {
				if m := re.FindStringSubmatch(plain); m != nil {
					r.StatedDimensions, _ = strconv.Atoi(m[1])
					r.StatedSubs, _ = strconv.Atoi(m[2])
					break
				}
			}
		}
		if m := reDim.FindStringSubmatch(t); m != nil {
			p, _ := strconv.ParseFloat(m[3], 64)
			r.Dimensions = append(r.Dimensions, Dimension{ID: m[1], Name: m[2], Points: p})
			cur = nil
			continue
		}
		if m := reSub.FindStringSubmatch(t); m != nil {
			if len(r.Dimensions) == 0 {
				r.Problems = append(r.Problems, fmt.Sprintf("sub-dimension (%s) before any dimension", m[1]))
				continue
			}
			d := &r.Dimensions[len(r.Dimensions)-1]
			p, _ := strconv.ParseFloat(m[3], 64)
			d.Subs = append(d.Subs, SubDimension{ID: d.ID + "." + m[1], Name: m[2], Points: p})
			cur = &d.Subs[len(d.Subs)-1]
			continue
		}
		if m := reBand.FindStringSubmatch(strings.TrimSpace(line)); m != nil && cur != nil {
			lo, _ := strconv.ParseFloat(m[1], 64)
			hi := lo
			if m[2] != "" {
				hi, _ = strconv.ParseFloat(m[2], 64)
			}
			cur.Bands = append(cur.Bands, Band{Lo: min(lo, hi), Hi: max(lo, hi), Text: strings.TrimSpace(m[3])})
		}
	}
	if len(r.Dimensions) == 0 {
		return nil, errors.New("rubric: no dimension headings found")
	}
	r.check()
	return r, nil
}

func (r *Rubric) check() {
	add := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	for _, d := range r.Dimensions {
		if seen[d.ID] {
			add("dimension %s repeated", d.ID)
		}
		seen[d.ID] = true
		if len(d.Subs) == 0 {
			add("dimension %s has no sub-dimensions", d.ID)
			continue
		}
		sum := 0.0
		for _, s := range d.Subs {
			sum += s.Points
			if seen[s.ID] {
				add("sub-dimension %s repeated", s.ID)
			}
			seen[s.ID] = true
			if len(s.Bands) == 0 {
				add("sub-dimension %s has no score bands", s.ID)
				continue
			}
			top := 0.0
			for _, b := range s.Bands {
				top = max(top, b.Hi)
			}
			if !same(top, s.Points) {
				add("sub-dimension %s: top band ends at %g, not its %g points", s.ID, top, s.Points)
			}
		}
		if !same(sum, d.Points) {
			add("dimension %s: sub-dimensions add up to %g points, not its %g", d.ID, sum, d.Points)
		}
	}
	if t := r.Total(); !same(t, 100) {
		add("dimensions add up to %g points, not 100", t)
	}
	if st := r.SubTotal(); !same(st, r.Total()) {
		add("sub-dimensions add up to %g points in all", st)
	}
	if r.StatedDimensions > 0 && r.StatedDimensions != len(r.Dimensions) {
		add("text announces %d dimensions, found %d", r.StatedDimensions, len(r.Dimensions))
	}
	if n := len(r.Subs()); r.StatedSubs > 0 && r.StatedSubs != n {
		add("text announces %d sub-dimensions, found %d", r.StatedSubs, n)
	}
}

func same(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
