package hisrubric

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A Quantity is a number read from a cell, with its multiplier applied.
type Quantity struct {
	Value   float64
	Percent bool // written with a percent sign; Value is in percent
}

var quantityReplacer = strings.NewReplacer("−", "-", "–", "-", "\u00a0", " ", "'000", " thousand")

// multipliers in the order they are tried: longer words first.
var multipliers = []struct {
	word string
	f    float64
}{
	{"trillions", 1e12}, {"trillion", 1e12}, {"triliun", 1e12}, {"tn", 1e12},
	{"billions", 1e9}, {"billion", 1e9}, {"miliar", 1e9}, {"bn", 1e9}, {"b", 1e9},
	{"millions", 1e6}, {"million", 1e6}, {"juta", 1e6}, {"mn", 1e6}, {"mm", 1e6}, {"m", 1e6},
	{"thousands", 1e3}, {"thousand", 1e3}, {"ribu", 1e3}, {"k", 1e3},
}

// cjkMultipliers are checked as substrings, longest first.
var cjkMultipliers = []struct {
	word string
	f    float64
}{{"十亿", 1e9}, {"百万", 1e6}, {"千万", 1e7}, {"亿", 1e8}, {"萬", 1e4}, {"万", 1e4}, {"千", 1e3}}

// ParseQuantity reads the one number in s, with sign (leading minus or
// parentheses), thousands separators (comma, or dots in "1.234.567"),
// decimal comma ("12,5"), percent sign and multiplier words (thousand,
// million, billion, trillion and their abbreviations; 千 万 百万 亿; ribu
// juta miliar triliun). Text with no number or several numbers (a date, a
// range) is not a quantity.
func ParseQuantity(s string) (Quantity, bool) {
	if len(s) > 200 {
		return Quantity{}, false
	}
	if !isASCII(s) || strings.Contains(s, "'000") {
		s = quantityReplacer.Replace(s) // else it has nothing to replace
	}
	s = strings.ToLower(s)
	start, end, ok := onlyNumber(s)
	if !ok {
		return Quantity{}, false
	}
	v, ok := parseNumber(s[start:end])
	if !ok {
		return Quantity{}, false
	}
	prefix, suffix := s[:start], s[end:]
	p := strings.TrimRight(strings.TrimFunc(prefix, func(r rune) bool {
		return r == ' ' || r == '$' || r == '¥' || r == '£' || r == '€' || r >= 'a' && r <= 'z'
	}), " ")
	switch {
	case strings.HasSuffix(p, "-"):
		v = -v
	case strings.HasSuffix(p, "(") && strings.HasPrefix(strings.TrimSpace(suffix), ")"):
		v = -v
	}
	q := Quantity{Value: v}
	if strings.Contains(suffix, "%") {
		q.Percent = true
		return q, true
	}
	for _, m := range cjkMultipliers {
		if strings.Contains(suffix, m.word) {
			q.Value *= m.f
			return q, true
		}
	}
	// The words of the suffix are its runs of a-z.
	for i := 0; i < len(suffix); {
		if !isLower(suffix[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(suffix) && isLower(suffix[j]) {
			j++
		}
		for _, m := range multipliers {
			if suffix[i:j] == m.word {
				q.Value *= m.f
				return q, true
			}
		}
		i = j
	}
	return q, true
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// onlyNumber finds the one run of digits, with single dots or commas
// between digits, in s; ok is false when there is none or more than one.
func onlyNumber(s string) (start, end int, ok bool) {
	start = -1
	for i := 0; i < len(s); {
		if !isDigit(s[i]) {
			i++
			continue
		}
		if start >= 0 {
			return 0, 0, false
		}
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		for i+1 < len(s) && (s[i] == '.' || s[i] == ',') && isDigit(s[i+1]) {
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		}
		end = i
	}
	return start, end, start >= 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// parseNumber reads digits with "," and "." separators.
func parseNumber(tok string) (float64, bool) {
	comma, dot := strings.Count(tok, ","), strings.Count(tok, ".")
	switch {
	case comma > 0 && dot > 0:
		if strings.LastIndex(tok, ",") > strings.LastIndex(tok, ".") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, ".", ""), ",", ".")
		} else {
			tok = strings.ReplaceAll(tok, ",", "")
		}
	case comma > 0:
		if groupsOfThree(tok, ',') {
			tok = strings.ReplaceAll(tok, ",", "")
		} else if comma == 1 {
			tok = strings.ReplaceAll(tok, ",", ".")
		} else {
			return 0, false
		}
	case dot > 1:
		if !groupsOfThree(tok, '.') {
			return 0, false
		}
		tok = strings.ReplaceAll(tok, ".", "")
	}
	v, err := strconv.ParseFloat(tok, 64)
	return v, err == nil && !math.IsInf(v, 0)
}

// groupsOfThree reports whether tok is 1 to 3 characters, then groups
// of 3 each after a sep.
func groupsOfThree(tok string, sep byte) bool {
	i := strings.IndexByte(tok, sep)
	if i < 0 {
		return len(tok) >= 1 && len(tok) <= 3
	}
	if i < 1 || i > 3 {
		return false
	}
	for rest := tok[i+1:]; ; rest = rest[4:] {
		j := strings.IndexByte(rest, sep)
		if j < 0 {
			return len(rest) == 3
		}
		if j != 3 {
			return false
		}
	}
}

// A Tolerance says when two quantities are equal.
type Tolerance struct {
	Rel, Abs float64
	// IgnoreSign compares absolute values (a loss written without its
	// minus sign counts as right).
	IgnoreSign bool
}

// DefaultTolerance is 1% relative or 0.005 absolute, signs compared.
var DefaultTolerance = Tolerance{Rel: 0.01, Abs: 0.005}

func (tol Tolerance) equal(a, b float64) bool {
	if tol.IgnoreSign {
		a, b = math.Abs(a), math.Abs(b)
	}
	d := math.Abs(a - b)
	return d <= tol.Abs || d <= tol.Rel*math.Abs(b)
}

// compare compares a predicted with a true answer, read as quantities:
// "correct", "incorrect", or "" when either is not a single quantity. A
// percentage compared with a plain number matches either as written
// (23.4% and 23.4) or as a fraction (23.4% and 0.234).
func compare(p, t quantity, tol Tolerance) string {
	if !p.ok || !t.ok {
		return ""
	}
	eq := tol.equal(p.Value, t.Value)
	if p.Percent != t.Percent {
		a, b := p.Value, t.Value
		if p.Percent {
			a /= 100
		} else {
			b /= 100
		}
		eq = eq || tol.equal(a, b)
	}
	if eq {
		return "correct"
	}
	return "incorrect"
}
