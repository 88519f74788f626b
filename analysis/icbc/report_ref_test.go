package icbc

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The regular-expression ParseReport this package had before its scanner:
// the reference the fuzz test compares ParseReport with.

var (
	refReRefLine = regexp.MustCompile(`^\s*(?:[-*+]\s*)?\[(\d{1,4})\]:?\s*(.*?)(https?://[^\s<>()\]"'）]+)(.*)$`)
	refReDate    = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})\b`)
	refReMarker  = regexp.MustCompile(`\[(\d{1,4})\]`)
	// refReSpacePunct finds the space a removed marker leaves before a stop.
	refReSpacePunct = regexp.MustCompile(`\s+([.,;:!?。，；：！？])`)
)

// ParseReport reads a report's reference list and cited claims. A
// reference is a line starting with "[n]" that holds a URL; its publish
// date is the first YYYY-MM-DD outside the URL. A claim is a sentence of
// the other lines that carries a marker [n] naming a reference; a sentence
// citing two references gives two claims. At most maxClaims claims are
// returned, in order.
func parseReportRef(report string, maxClaims int) ([]Reference, []Claim) {
	if len(report) > MaxResponse {
		report = report[:MaxResponse]
	}
	var refs []Reference
	var body []string
	have := map[int]bool{}
	for _, line := range strings.Split(report, "\n") {
		var m []string
		if t := strings.TrimLeft(line, " \t-*+"); strings.HasPrefix(t, "[") && strings.Contains(t, "://") {
			m = refReRefLine.FindStringSubmatch(line)
		}
		if m == nil {
			body = append(body, line)
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if have[n] {
			continue
		}
		have[n] = true
		r := Reference{N: n, URL: strings.TrimRight(m[3], ".,;"), Title: strings.Trim(strings.TrimSpace(m[2]), "-—–:.,;，、 ")}
		if d := refReDate.FindStringSubmatch(m[2] + " " + m[4]); d != nil {
			if t, err := time.Parse(time.DateOnly, d[1]); err == nil {
				r.Date = t
			}
		}
		refs = append(refs, r)
	}
	slices.SortStableFunc(refs, func(a, b Reference) int { return a.N - b.N })
	var claims []Claim
	for _, line := range body {
		for _, sent := range sentencesRef(line) {
			ms := refReMarker.FindAllStringSubmatch(sent, -1)
			if ms == nil {
				continue
			}
			text := strings.TrimSpace(refReSpacePunct.ReplaceAllString(refReMarker.ReplaceAllString(sent, ""), "$1"))
			text = strings.TrimLeft(text, "-*#> ")
			if text == "" {
				continue
			}
			seen := map[int]bool{}
			for _, m := range ms {
				n, _ := strconv.Atoi(m[1])
				if !have[n] || seen[n] {
					continue
				}
				seen[n] = true
				if len(claims) == maxClaims {
					return refs, claims
				}
				claims = append(claims, Claim{ID: fmt.Sprintf("C%d", len(claims)+1), Text: text, Ref: n})
			}
		}
	}
	return refs, claims
}

// sentences splits a line into sentences: at 。！？ always, at . ! ? when
// a space or the end of the line follows (so 4.2% stays whole), keeping
// citation markers written right after the stop ("rose.[3]") with the
// sentence they close.
func sentencesRef(line string) []string {
	var out []string
	start := 0
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		end := false
		switch c {
		case '。', '！', '？':
			end = true
		case '.', '!', '?':
			end = i+1 == len(rs) || rs[i+1] == ' ' || rs[i+1] == '\t' || rs[i+1] == '['
		}
		if !end {
			continue
		}
		j := i + 1
		for k := j; ; {
			for k < len(rs) && rs[k] == ' ' {
				k++
			}
			n := markerLenRef(rs[k:])
			if n == 0 {
				break
			}
			k += n
			j = k
		}
		out = append(out, string(rs[start:j]))
		start, i = j, j-1
	}
	if start < len(rs) {
		out = append(out, string(rs[start:]))
	}
	return out
}

// markerLen returns the length of a citation marker [n] at the start of
// rs, or 0.
func markerLenRef(rs []rune) int {
	if len(rs) < 3 || rs[0] != '[' {
		return 0
	}
	i := 1
	for i < len(rs) && i <= 4 && rs[i] >= '0' && rs[i] <= '9' {
		i++
	}
	if i == 1 || i >= len(rs) || rs[i] != ']' {
		return 0
	}
	return i + 1
}

// FuzzParseReportRef checks that ParseReport reads every report as the
// regular-expression reference does.
func FuzzParseReportRef(f *testing.F) {
	for _, s := range []string{
		reportA1,
		"a.[1][2] b。[3]\n[1] https://x.gov 2025-01-01",
		"[",
		" - [12]: Title — https://a.b/c?d=1). 2025-02-03 x\n* [3] https://)x https://y.z/(1) 2024-1-01 2024-01-011 a2024-01-01 2024-01-01\nClaim one [12] . Two[3]， 三[3]。",
		"+[1]http://a\r\n[1] dup https://b 2020-02-30\nx [1]\t? y [1] [2] [99999].\n[2] t https://c）d 1999-12-31",
		"\xff[1] https://a\xfe 2020-01-01\nbad \xff utf8 [1]. more\xc3[1]",
		"[1] 来源：《报告》https://x.gov.cn/a，2025-01-01\n甲上升 [1] ，乙下降[1][1]！丙[1]？",
	} {
		f.Add(s, 30)
	}
	f.Add("x [1]. y [1].\n[1] https://a", 1)
	f.Fuzz(func(t *testing.T, s string, max int) {
		refs, claims := ParseReport(s, max)
		wantRefs, wantClaims := parseReportRef(s, max)
		if !reflect.DeepEqual(refs, wantRefs) {
			t.Fatalf("refs\n got %+v\nwant %+v", refs, wantRefs)
		}
		if !reflect.DeepEqual(claims, wantClaims) {
			t.Fatalf("claims\n got %+v\nwant %+v", claims, wantClaims)
		}
	})
}
