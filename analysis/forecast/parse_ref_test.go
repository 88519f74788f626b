package forecast

// ParseReply's line reading as it was before the hand-written scanners,
// kept as the reference FuzzParseReplyMatchesRef compares it with.

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
)

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
