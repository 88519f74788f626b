package forecast

// ParseReply's line reading and ParseNumber as they were before the
// hand-written scanners, kept as the references the fuzz tests below
// compare them with.

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"
)

var refNumRE = regexp.MustCompile(`^(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)?(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?`)

var refDateRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}(?:[T ][0-9]{2}:[0-9]{2}(?::[0-9]{2})?(?:Z|[+-][0-9]{2}:[0-9]{2})?)?`)

func refParseReply(text string) (Forecast, error) {
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
			if a, ok := refAnswerLine(ln); ok {
				f.Answer, found = a, true
				continue
			}
		}
		if !strings.Contains(ln, "http") {
			continue
		}
		urls := findURLs(ln)
		if len(urls) == 0 {
			continue
		}
		pub := refPubTime(ln)
		for _, u := range urls {
			f.Evidence = append(f.Evidence, refNewEvidence(strings.TrimRight(u, ".,;:"), pub))
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

func refNewEvidence(url, pub string) Evidence {
	e := Evidence{URL: url, Published: pub}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, pub); err == nil {
			e.Time = t.UTC()
			break
		}
	}
	return e
}

func refAnswerLine(ln string) (string, bool) {
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

func refPubTime(ln string) string {
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
	return refDateRE.FindString(strings.TrimLeft(rest, " \t:："))
}

func FuzzParseReplyMatchesRef(f *testing.F) {
	for _, s := range []string{
		"Final answer: 1\nEvidence:\n- https://a.example (published 2025-11-01T00:00:00Z)",
		"> **Final   Answer**: Yes\n- https://x.example/a published: 2025-01-02 03:04:05+08:00 and http://y.example",
		"- https://a.b (published：： 2025-10-29T16:00) \n## 预测：否\nhttps://c.d 发布于2024-01-01T00:00:00-05",
		"Prediction : 12 bn\nhttps://e.f published 2025-1-01\nhttps://g.h PUBLISHED 2025-01-01T00:00:60Zx",
		"ＦＩＮＡＬ answer: 3\nfınal answer: 4\nAnswer:\t\n最终答案：42\n答案: \xff\n\xe6\x9c",
		"2025-01-02T03:04:05+08:00\n2025-01-02 03:04:0\n2025-01-02T03:04Z\n1999-12-31 -05:00\n2025-01-02T03:04-0a:00\n0000-00-00T",
		"\xff\xfe Final answer: \x00", "{", "Yes", "- none (no search; synthetic)\nhttps://x 2025-01-01 published",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseReply(s)
		want, werr := refParseReply(s)
		if !reflect.DeepEqual(got, want) || err != werr {
			t.Fatalf("ParseReply(%q) = %+v, %v; want %+v, %v", s, got, err, want, werr)
		}
		for _, ln := range strings.Split(s, "\n") {
			if g, w := leadingDate(ln), refDateRE.FindString(ln); g != w {
				t.Fatalf("leadingDate(%q) = %q, want %q", ln, g, w)
			}
		}
	})
}

func refNormalize(s string) string {
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

func refParseNumber(s string) (Number, error) {
	orig := s
	fail := func() (Number, error) {
		return Number{}, fmt.Errorf("not a number: %q", clip(orig, 40))
	}
	if len(s) > MaxAnswer || !utf8.ValidString(s) {
		return fail()
	}
	s = strings.TrimRight(refNormalize(s), ".")
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
	s = refTrimCurrency(s, true)
	sign()
	m := refNumRE.FindString(s)
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
		rest = refTrimCurrency(strings.TrimSpace(rest), false)
		if r, ok := cutFold(rest, "%"); ok {
			n.Percent, rest = true, r
		}
	}
	if strings.TrimSpace(rest) != "" {
		return fail()
	}
	return n, nil
}

func refTrimCurrency(s string, prefix bool) string {
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

func refParseBinary(s string) (bool, error) {
	if len(s) > MaxAnswer || !utf8.ValidString(s) {
		return false, fmt.Errorf("not yes or no: %q", clip(s, 40))
	}
	t := strings.ToLower(refNormalize(s))
	if i := strings.IndexAny(t, ",.;:!，、；：！ \t"); i >= 0 {
		t = t[:i]
	}
	t = strings.Trim(t, "*_`\"'")
	for _, w := range yesWords {
		if t == w {
			return true, nil
		}
	}
	for _, w := range noWords {
		if t == w {
			return false, nil
		}
	}
	return false, fmt.Errorf("not yes or no: %q", clip(s, 40))
}

func FuzzParseNumberMatchesRef(f *testing.F) {
	for _, s := range []string{"1,234.5 million", "(12)", "3.2亿元", "５％", "1e3", "$-4", "~7", "", "(", "1,23",
		"1,2345", "123,4567.5e+3x", "1234,567", "12,345,678 USD", "1e+", "1E-7 bn", ".5", "5.", "-.5e", "0,000", "1,000,00",
		"USD 12", "12 usd", "HK$ 3.5", "approx. 1,234 万", "−4,5 %", "１２，３４５", "3 percent", "1 元", "\xff1", "1\u3000m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseNumber(s)
		rn, rerr := refParseNumber(s)
		if math.Float64bits(n.Value) != math.Float64bits(rn.Value) || math.Float64bits(n.Scale) != math.Float64bits(rn.Scale) ||
			n.Percent != rn.Percent || fmt.Sprint(err) != fmt.Sprint(rerr) {
			t.Fatalf("ParseNumber(%q) = %+v, %v; want %+v, %v", s, n, err, rn, rerr)
		}
		yes, err := ParseBinary(s)
		ryes, rerr := refParseBinary(s)
		if yes != ryes || fmt.Sprint(err) != fmt.Sprint(rerr) {
			t.Fatalf("ParseBinary(%q) = %v, %v; want %v, %v", s, yes, err, ryes, rerr)
		}
		if got, want := numPrefix(s), refNumRE.FindString(s); got != want {
			t.Fatalf("numPrefix(%q) = %q, want %q", s, got, want)
		}
		for _, prefix := range []bool{false, true} {
			if got, want := trimCurrency(s, prefix), refTrimCurrency(s, prefix); got != want {
				t.Fatalf("trimCurrency(%q, %v) = %q, want %q", s, prefix, got, want)
			}
		}
		if got, want := normalize(s), refNormalize(s); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}
