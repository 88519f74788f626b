package forecast

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxAnswer caps the length of a final answer the parsers read; longer
// answers are invalid.
const MaxAnswer = 256

// A Number is a parsed numeric forecast.
type Number struct {
	// Value is the number as written, with its sign ("(12.5)" is -12.5).
	Value float64
	// Scale is the multiplier of an explicit scale word ("million" 1e6,
	// "亿" 1e8); 0 when there is none.
	Scale float64
	// Percent is set when the number carried a percent sign or word.
	Percent bool
}

// In returns n in a unit whose multiplier is unit (1e6 for millions):
// Value x Scale / unit when both are known, else Value as written.
func (n Number) In(unit float64) float64 {
	if n.Scale == 0 || unit == 0 {
		return n.Value
	}
	return n.Value * n.Scale / unit
}

// scaleWords are the scale words an answer may carry after its number,
// longest first within each script so that "万亿" wins over "万".
var scaleWords = []struct {
	word string
	mult float64
}{
	{"trillion", 1e12}, {"billion", 1e9}, {"million", 1e6}, {"thousand", 1e3},
	{"tn", 1e12}, {"bn", 1e9}, {"mn", 1e6}, {"mm", 1e6},
	{"t", 1e12}, {"b", 1e9}, {"m", 1e6}, {"k", 1e3},
	{"万亿", 1e12}, {"千亿", 1e11}, {"百亿", 1e10}, {"十亿", 1e9}, {"亿", 1e8},
	{"千万", 1e7}, {"百万", 1e6}, {"十万", 1e5}, {"万", 1e4}, {"千", 1e3},
}

// currencies may precede or follow a number; they are dropped.
var currencies = []string{
	"us$", "hk$", "s$", "a$", "c$", "usd", "cny", "rmb", "hkd", "jpy", "gbp", "eur", "sgd",
	"$", "€", "£", "¥", "元", "美元", "港元", "港币", "日元", "欧元", "英镑", "新元", "人民币",
	"dollars", "yuan", "yen", "euros", "pounds",
}

var approxPrefixes = []string{"approximately", "approx.", "approx", "about", "around", "roughly", "circa", "~", "≈", "约", "大约"}

// normalize maps full-width forms to ASCII (digits, signs, '%', '.',
// ','), typographic minus signs to '-', and trims space and markdown
// emphasis.
func normalize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFEE0
		case r == 0x3000:
			r = ' '
		case r == '−' || r == '–' || r == '—':
			r = '-'
		case r == '。':
			r = '.'
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(b.String()), "*_`"))
}

// numRE matches the number an answer starts with: digits, with ",ddd"
// thousands groups or without, a decimal part and an exponent.
var numRE = regexp.MustCompile(`^(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)?(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`)

// ParseNumber parses a numeric forecast: an optional approximation word,
// sign or accounting parentheses for negatives, currency, digits with
// optional thousands separators, decimals and exponent, then an optional
// scale word (million, bn, 亿, 万, ...), currency and percent sign.
// Full-width digits are accepted. Anything else is an error.
func ParseNumber(s string) (Number, error) {
	orig := s
	fail := func() (Number, error) {
		return Number{}, fmt.Errorf("not a number: %q", clip(orig, 40))
	}
	if len(s) > MaxAnswer || !utf8.ValidString(s) {
		return fail()
	}
	s = strings.TrimRight(normalize(s), ".")
	lower := strings.ToLower(s)
	for _, p := range approxPrefixes {
		if strings.HasPrefix(lower, p) {
			s = strings.TrimSpace(s[len(p):])
			break
		}
	}
	neg := false
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return fail()
		}
		neg = true
		s = strings.TrimSpace(s[1:end]) + " " + strings.TrimSpace(s[end+1:])
	}
	s = strings.TrimSpace(s)
	sign := func() {
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
			if s[0] == '-' {
				neg = !neg
			}
			s = strings.TrimSpace(s[1:])
		}
	}
	sign()
	s = trimCurrency(s, true)
	sign()
	m := numRE.FindString(s)
	if m == "" || m == "." || strings.IndexFunc(m, unicode.IsDigit) < 0 || strings.HasPrefix(m, "e") || strings.HasPrefix(m, "E") {
		return fail()
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(m, ",", ""), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return fail()
	}
	n := Number{Value: v}
	if neg {
		n.Value = -v
	}
	rest := strings.TrimSpace(s[len(m):])
	if r, ok := cutFold(rest, "%"); ok {
		n.Percent, rest = true, r
	} else if r, ok := cutFold(rest, "percent"); ok {
		n.Percent, rest = true, r
	} else {
		for _, w := range scaleWords {
			if len(rest) >= len(w.word) && strings.EqualFold(rest[:len(w.word)], w.word) && wordEnd(rest[len(w.word):]) {
				n.Scale, rest = w.mult, strings.TrimSpace(rest[len(w.word):])
				break
			}
		}
		rest = trimCurrency(strings.TrimSpace(rest), false)
		if r, ok := cutFold(rest, "%"); ok {
			n.Percent, rest = true, r
		}
	}
	if strings.TrimSpace(rest) != "" {
		return fail()
	}
	return n, nil
}

// cutFold cuts prefix p from s, ignoring ASCII case.
func cutFold(s, p string) (string, bool) {
	if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
		return strings.TrimSpace(s[len(p):]), true
	}
	return s, false
}

// wordEnd reports whether r (what follows a scale word) does not continue
// the word: "m" must not match the start of "months", but may be followed
// by a space and a currency ("450 mn USD").
func wordEnd(r string) bool {
	c, _ := utf8.DecodeRuneInString(r)
	return r == "" || !(c < utf8.RuneSelf && unicode.IsLetter(c))
}

// trimCurrency removes one currency symbol or code from the start
// (prefix) or the whole of s (suffix, where only a currency may remain).
func trimCurrency(s string, prefix bool) string {
	for _, c := range currencies {
		if prefix {
			if r, ok := cutFold(s, c); ok && (r == "" || !unicode.IsLetter(rune(r[0]))) {
				return r
			}
		} else if strings.EqualFold(s, c) {
			return ""
		}
	}
	return s
}

var yesWords = []string{"yes", "y", "true", "是", "是的", "会", "对"}
var noWords = []string{"no", "n", "false", "否", "不是", "不会", "不"}

// ParseBinary parses a Yes/No forecast ("Yes", "no.", "是", "否",
// "Yes, because ..."): true for yes.
func ParseBinary(s string) (bool, error) {
	if len(s) > MaxAnswer || !utf8.ValidString(s) {
		return false, fmt.Errorf("not yes or no: %q", clip(s, 40))
	}
	t := strings.ToLower(normalize(s))
	if i := strings.IndexAny(t, ",.;:!，、；：！ \t"); i >= 0 {
		t = t[:i]
	}
	t = strings.Trim(t, "*_`\"'")
	if slices.Contains(yesWords, t) {
		return true, nil
	}
	if slices.Contains(noWords, t) {
		return false, nil
	}
	return false, fmt.Errorf("not yes or no: %q", clip(s, 40))
}

// An Evidence is one source a forecast cites.
type Evidence struct {
	URL string
	// Published is the publication time as written; Time is it parsed,
	// zero when absent or unreadable.
	Published string
	Time      time.Time
}

// A Forecast is what a system's reply says: its final answer and the
// evidence it cites.
type Forecast struct {
	Answer   string
	Evidence []Evidence
}

// MaxReply caps the reply length the parser reads; longer replies are
// read up to the cap (their final answer, if beyond it, is lost).
const MaxReply = 1 << 20

var urlRE = regexp.MustCompile(`https?://[^\s<>"'()\[\]]+`)

// maxAnswerLine is the longest line searched for a final answer.
const maxAnswerLine = 4 * MaxAnswer

// answerKeys are the labels of a final-answer line, longest first.
var answerKeys = []string{"final answer", "prediction", "forecast", "answer", "最终答案", "答案", "预测"}

// answerLine reads a final-answer line: optional markdown marks (>, #,
// *, _, -), a label from answerKeys (any case, any run of spaces in "final
// answer"), optional emphasis, a colon (ASCII or full-width), then the
// answer, trimmed of emphasis and space.
func answerLine(ln string) (string, bool) {
	s := strings.TrimLeft(ln, " \t>#*_-")
	if len(s) > 5 && strings.EqualFold(s[:5], "final") {
		s = "final " + strings.TrimLeft(s[5:], " \t")
	}
	for _, k := range answerKeys {
		if len(s) >= len(k) && strings.EqualFold(s[:len(k)], k) {
			rest := strings.TrimLeft(s[len(k):], " \t*_")
			for _, colon := range []string{":", "："} {
				if a, ok := strings.CutPrefix(rest, colon); ok {
					return strings.TrimSpace(strings.Trim(strings.TrimSpace(a), "*_")), true
				}
			}
			return "", false
		}
	}
	return "", false
}

// pubTime returns the time written after "published" (any case) or
// "发布"/"发布于" on line ln, or "".
func pubTime(ln string) string {
	rest := ""
	for i := 0; i+len("published") <= len(ln); i++ {
		if (ln[i] == 'p' || ln[i] == 'P') && strings.EqualFold(ln[i:i+len("published")], "published") {
			rest = ln[i+len("published"):]
			break
		}
	}
	if rest == "" {
		_, after, ok := strings.Cut(ln, "发布")
		if !ok {
			return ""
		}
		rest = strings.TrimPrefix(after, "于")
	}
	return dateRE.FindString(strings.TrimLeft(rest, " \t:："))
}

// dateRE matches the date, and time, a publication note starts with.
var dateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:Z|[+-][0-9]{2}:[0-9]{2})?)?`)

// ErrNoAnswer is returned by ParseReply when a reply has no final answer.
var ErrNoAnswer = errors.New("no final answer")

// ParseReply reads a system's reply: the last "Final answer: ..." line
// (also "Answer:", "Forecast:", "答案：", "预测："), or the whole reply when
// it is one short line; and every http(s) URL with the "published <time>"
// on its line. A reply that is a JSON object {"answer": ..., "evidence":
// [{"url": ..., "published": ...}]} is read as such.
func ParseReply(text string) (Forecast, error) {
	if len(text) > MaxReply {
		text = text[:MaxReply]
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if f, ok := parseJSONReply(text); ok {
		return f, nil
	}
	var f Forecast
	found := false
	for ln := range strings.SplitSeq(text, "\n") {
		if len(ln) <= maxAnswerLine {
			if a, ok := answerLine(ln); ok {
				f.Answer, found = a, true
				continue // a URL in the answer is not cited evidence
			}
		}
		if !strings.Contains(ln, "http") {
			continue // most lines cite nothing: skip the regular expression
		}
		urls := urlRE.FindAllString(ln, -1)
		if len(urls) == 0 {
			continue
		}
		pub := pubTime(ln)
		for _, u := range urls {
			f.Evidence = append(f.Evidence, newEvidence(strings.TrimRight(u, ".,;:"), pub))
		}
	}
	if !found {
		if t := strings.TrimSpace(text); t != "" && !strings.Contains(t, "\n") && len(t) <= MaxAnswer {
			f.Answer, found = t, true
		}
	}
	if !found || f.Answer == "" {
		return f, ErrNoAnswer
	}
	return f, nil
}

func parseJSONReply(text string) (Forecast, bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "{") {
		return Forecast{}, false
	}
	var v struct {
		Answer   json.RawMessage `json:"answer"`
		Evidence []struct {
			URL       string `json:"url"`
			Published string `json:"published"`
		} `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(t), &v); err != nil || len(v.Answer) == 0 {
		return Forecast{}, false
	}
	var f Forecast
	var s string
	if json.Unmarshal(v.Answer, &s) == nil {
		f.Answer = s
	} else {
		f.Answer = string(v.Answer)
	}
	for _, e := range v.Evidence {
		if urlRE.MatchString(e.URL) {
			f.Evidence = append(f.Evidence, newEvidence(e.URL, e.Published))
		}
	}
	return f, f.Answer != ""
}

func newEvidence(url, pub string) Evidence {
	e := Evidence{URL: url, Published: pub}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, pub); err == nil {
			e.Time = t.UTC()
			break
		}
	}
	return e
}

// clip shortens s to n bytes at a rune boundary, for messages.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
