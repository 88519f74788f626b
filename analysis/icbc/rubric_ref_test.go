package icbc

// ParseRubric as it was before it ran its regular expressions only on
// lines that can match, kept as the reference FuzzParseRubricRef
// compares it with.

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func refParseRubric(md string) (*Rubric, error) {
	if len(md) > MaxRubric {
		return nil, fmt.Errorf("rubric: larger than %d bytes", MaxRubric)
	}
	r := &Rubric{}
	var cur *SubDimension
	for _, line := range strings.Split(md, "\n") {
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

func FuzzParseRubricRef(f *testing.F) {
	for _, s := range []string{rubricEN, rubricZH, "### 1. A (x points)\n**(1)",
		"# T\n4 primary dimensions and 12 secondary dimensions\n1. A (10 pts)\n（1）B（10分）\n- 9-10: x\n+ 5: y\n* **1 to 2 points**: z",
		"## 4个一级维度、12个二级维度\n(1) early (5 points)\n### 1、名称（共 30 分）\n- bad", "#\n#1. x (1 point)\n  - 1: a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRubric(s)
		want, werr := refParseRubric(s)
		if !reflect.DeepEqual(r, want) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("ParseRubric(%q) = %+v, %v; want %+v, %v", s, r, err, want, werr)
		}
	})
}
