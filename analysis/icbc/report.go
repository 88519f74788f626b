package icbc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// A Reference is one entry of a report's reference list:
// "[3] Title. https://host/path (published 2025-03-14)".
type Reference struct {
	N     int
	URL   string
	Title string
	// Date is the publish date; zero when the entry gives none, and then
	// the source counts as not fetched.
	Date time.Time
}

// A Claim is one sentence of a report that cites reference Ref.
type Claim struct {
	ID   string // "C1", "C2", ... in order of appearance
	Text string
	Ref  int
}

// ParseReport reads a report's reference list and cited claims. A
// reference is a line starting with "[n]" that holds a URL; its publish
// date is the first YYYY-MM-DD outside the URL. A claim is a sentence of
// the other lines that carries a marker [n] naming a reference; a sentence
// citing two references gives two claims. At most maxClaims claims are
// returned, in order.
func ParseReport(report string, maxClaims int) ([]Reference, []Claim) {
	if len(report) > MaxResponse {
		report = report[:MaxResponse]
	}
	var refs []Reference
	var body []string
	have := map[int]bool{}
	for line := range strings.SplitSeq(report, "\n") {
		num, title, url, rest, ok := "", "", "", "", false
		if t := strings.TrimLeft(line, " \t-*+"); strings.HasPrefix(t, "[") && strings.Contains(t, "://") {
			num, title, url, rest, ok = refLine(line)
		}
		if !ok {
			body = append(body, line)
			continue
		}
		n, _ := strconv.Atoi(num)
		if have[n] {
			continue
		}
		have[n] = true
		r := Reference{N: n, URL: strings.TrimRight(url, ".,;"), Title: strings.Trim(strings.TrimSpace(title), "-—–:.,;，、 ")}
		d := findDate(title)
		if d == "" {
			d = findDate(rest)
		}
		if d != "" {
			if t, err := time.Parse(time.DateOnly, d); err == nil {
				r.Date = t
			}
		}
		refs = append(refs, r)
	}
	slices.SortStableFunc(refs, func(a, b Reference) int { return a.N - b.N })
	var claims []Claim
	for _, line := range body {
		if strings.IndexByte(line, '[') < 0 {
			continue // no sentence of it cites
		}
		for _, sent := range sentences(line) {
			if strings.IndexByte(sent, '[') < 0 {
				continue
			}
			text := ""
			var seen []int
			for i := 0; i < len(sent); i++ {
				k := markerLen(sent[i:])
				if k == 0 {
					continue
				}
				if text == "" {
					if text = claimText(sent); text == "" {
						break
					}
				}
				n, _ := strconv.Atoi(sent[i+1 : i+k-1])
				i += k - 1
				if !have[n] || slices.Contains(seen, n) {
					continue
				}
				seen = append(seen, n)
				if len(claims) == maxClaims {
					return refs, claims
				}
				claims = append(claims, Claim{ID: "C" + strconv.Itoa(len(claims)+1), Text: text, Ref: n})
			}
		}
	}
	return refs, claims
}

// refLine matches a reference line: optional space and list bullet,
// "[n]" (1 to 4 digits), an optional colon and space, a title and the
// first http(s) URL, and the rest of the line.
func refLine(line string) (num, title, url, rest string, ok bool) {
	i := skipSpace(line, 0)
	if i < len(line) && (line[i] == '-' || line[i] == '*' || line[i] == '+') {
		i = skipSpace(line, i+1)
	}
	k := markerLen(line[i:])
	if k == 0 {
		return "", "", "", "", false
	}
	num = line[i+1 : i+k-1]
	i += k
	if i < len(line) && line[i] == ':' {
		i++
	}
	i = skipSpace(line, i)
	for p := i; p < len(line); p++ {
		if line[p] != 'h' || !strings.HasPrefix(line[p:], "http") {
			continue
		}
		for _, scheme := range []string{"https://", "http://"} {
			if strings.HasPrefix(line[p:], scheme) {
				if e := urlEnd(line, p+len(scheme)); e > p+len(scheme) {
					return num, line[i:p], line[p:e], line[e:], true
				}
			}
		}
	}
	return "", "", "", "", false
}

// isSpace reports whether c is a space of regular expressions' \s.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// urlEnd returns the end of the URL characters starting at s[i:]: every
// rune but space, <>()]"' and the full-width ）.
func urlEnd(s string, i int) int {
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case ' ', '\t', '\n', '\f', '\r', '<', '>', '(', ')', ']', '"', '\'', '）':
			return i
		}
		i += size
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWord(c byte) bool {
	return isDigit(c) || c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// findDate returns the first YYYY-MM-DD of s standing apart from letters,
// digits and underscores, or "".
func findDate(s string) string {
	for p := 0; p+10 <= len(s); p++ {
		if p > 0 && isWord(s[p-1]) || p+10 < len(s) && isWord(s[p+10]) {
			continue
		}
		d := s[p : p+10]
		if d[4] == '-' && d[7] == '-' && isDigit(d[0]) && isDigit(d[1]) && isDigit(d[2]) && isDigit(d[3]) &&
			isDigit(d[5]) && isDigit(d[6]) && isDigit(d[8]) && isDigit(d[9]) {
			return d
		}
	}
	return ""
}

// claimText is a sentence without its citation markers and the spaces
// they leave before a stop, trimmed.
func claimText(sent string) string {
	b := make([]byte, 0, len(sent))
	for i := 0; i < len(sent); i++ {
		if k := markerLen(sent[i:]); k > 0 {
			i += k - 1
			continue
		}
		b = append(b, sent[i])
	}
	out := b[:0]
	for i := 0; i < len(b); {
		if !isSpace(b[i]) {
			out = append(out, b[i])
			i++
			continue
		}
		j := i
		for j < len(b) && isSpace(b[j]) {
			j++
		}
		if !stopAt(b[j:]) {
			out = append(out, b[i:j]...)
		}
		i = j
	}
	return strings.TrimLeft(strings.TrimSpace(string(out)), "-*#> ")
}

// stopAt reports whether b starts with a stop: .,;:!? or 。，；：！？.
func stopAt(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if strings.IndexByte(".,;:!?", b[0]) >= 0 {
		return true
	}
	r, _ := utf8.DecodeRune(b)
	return strings.ContainsRune("。，；：！？", r)
}

// A Citation is the citation judge's verdict on one claim.
type Citation struct {
	ID      string `json:"id"`
	Verdict string `json:"verdict"` // supported, unsupported or unknown
	Reason  string `json:"reason"`
}

// Citation verdicts.
const (
	Supported   = "supported"
	Unsupported = "unsupported"
	Unknown     = "unknown"
)

// ParseCitations parses the citation judge's response: a JSON object
// {"verdicts": [{"id": "C1", "verdict": "supported", "reason": "..."}]}
// (code fences and prose around it allowed). Verdicts other than the
// three known ones become unknown and are noted; claims without a verdict
// are unknown and noted; ids the request did not hold are ignored.
func ParseCitations(s string, ids []string) (map[string]Citation, []string, error) {
	if len(s) > MaxResponse {
		s = s[:MaxResponse]
	}
	verdicts, ok := scanCitations(jsonObject(s))
	if !ok {
		var resp struct {
			Verdicts []Citation `json:"verdicts"`
		}
		for _, c := range []string{s, fullWidth.Replace(s)} {
			if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &resp) == nil {
				ok = true
				break
			}
		}
		verdicts = resp.Verdicts
	}
	if !ok {
		return nil, nil, errors.New("citations: no JSON object with verdicts")
	}
	out := map[string]Citation{}
	var notes []string
	for _, v := range verdicts {
		if !slices.Contains(ids, v.ID) {
			continue
		}
		verdict := strings.ToLower(strings.TrimSpace(v.Verdict))
		switch verdict {
		case Supported, Unsupported, Unknown:
		default:
			notes = append(notes, fmt.Sprintf("claim %s: verdict %q taken as unknown", v.ID, v.Verdict))
			verdict = Unknown
		}
		v.Verdict = verdict
		out[v.ID] = v
	}
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			notes = append(notes, fmt.Sprintf("claim %s: no verdict, taken as unknown", id))
			out[id] = Citation{ID: id, Verdict: Unknown}
		}
	}
	return out, notes, nil
}

// scanCitations reads a plain citation judge object; ok is false when
// obj is not plain.
func scanCitations(obj string) ([]Citation, bool) {
	p := newScanner(obj)
	var out []Citation
	p.object([]string{"verdicts"}, func(int) {
		p.array(func() {
			var c Citation
			p.object([]string{"id", "verdict", "reason"}, func(k int) {
				switch k {
				case 0:
					c.ID = p.str()
				case 1:
					c.Verdict = p.str()
				case 2:
					c.Reason = p.str()
				}
			})
			out = append(out, c)
		})
	})
	if !p.end() {
		return nil, false
	}
	return out, true
}

// A SubScore is the rubric judge's score of one sub-dimension.
type SubScore struct {
	ID            string  `json:"id"`
	Score         float64 `json:"score"`
	Justification string  `json:"justification"`
}

// ParseRubricScores parses the rubric judge's response: a JSON object
// {"scores": [{"id": "1.1", "score": 8, "justification": "..."}]}.
// Scores are clipped to [0, max] and every clip is noted; a sub-dimension
// without a score scores 0 and is noted. It returns the scores in rubric
// order.
func ParseRubricScores(s string, r *Rubric) ([]SubScore, []string, error) {
	if len(s) > MaxResponse {
		s = s[:MaxResponse]
	}
	scores, ok := scanScores(jsonObject(s))
	if !ok {
		var resp struct {
			Scores []struct {
				ID            string          `json:"id"`
				Score         json.RawMessage `json:"score"`
				Justification string          `json:"justification"`
			} `json:"scores"`
		}
		for _, c := range []string{s, fullWidth.Replace(s)} {
			if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &resp) == nil && len(resp.Scores) > 0 {
				ok = true
				break
			}
		}
		for _, x := range resp.Scores {
			var v any
			err := json.Unmarshal(x.Score, &v)
			scores = append(scores, rawScore{id: x.ID, justification: x.Justification, score: v, text: string(x.Score), bad: err != nil})
		}
	}
	if !ok {
		return nil, nil, errors.New("rubric scores: no JSON object with scores")
	}
	got := map[string]SubScore{}
	var notes []string
	for _, x := range scores {
		id := strings.TrimSpace(x.id)
		if x.bad {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: unreadable score", id))
			continue
		}
		f, present, err := number(x.score)
		if err != nil || !present {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: unreadable score %s", id, x.text))
			continue
		}
		got[id] = SubScore{ID: id, Score: f, Justification: x.justification}
	}
	var out []SubScore
	for _, sd := range r.Subs() {
		sc, ok := got[sd.ID]
		if !ok {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: no score, taken as 0", sd.ID))
			out = append(out, SubScore{ID: sd.ID})
			continue
		}
		if c := math.Min(math.Max(sc.Score, 0), sd.Points); c != sc.Score {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: score %g outside 0..%g, clipped", sd.ID, sc.Score, sd.Points))
			sc.Score = c
		}
		out = append(out, sc)
	}
	return out, notes, nil
}

// A rawScore is one entry of a rubric judge's scores.
type rawScore struct {
	id, justification string
	score             any    // the score as encoding/json decodes it
	text              string // its JSON text
	bad               bool   // no JSON value
}

// scanScores reads a plain rubric judge object with at least one score;
// ok is false otherwise.
func scanScores(obj string) ([]rawScore, bool) {
	p := newScanner(obj)
	var out []rawScore
	p.object([]string{"scores"}, func(int) {
		p.array(func() {
			x := rawScore{bad: true} // until a score is read
			p.object([]string{"id", "score", "justification"}, func(k int) {
				switch k {
				case 0:
					x.id = p.str()
				case 1:
					x.score, x.text = p.value()
					x.bad = false
				case 2:
					x.justification = p.str()
				}
			})
			out = append(out, x)
		})
	})
	if !p.end() || len(out) == 0 {
		return nil, false
	}
	return out, true
}

// sentences splits a line into sentences: at 。！？ always, at . ! ? when
// a space or the end of the line follows (so 4.2% stays whole), keeping
// citation markers written right after the stop ("rose.[3]") with the
// sentence they close. Invalid UTF-8 bytes become U+FFFD first.
func sentences(line string) []string {
	if !utf8.ValidString(line) {
		line = string([]rune(line))
	}
	var out []string
	start := 0
	for i := 0; i < len(line); {
		r, size := rune(line[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(line[i:])
		}
		end := false
		switch r {
		case '。', '！', '？':
			end = true
		case '.', '!', '?':
			next := i + size
			end = next == len(line) || line[next] == ' ' || line[next] == '\t' || line[next] == '['
		}
		if !end {
			i += size
			continue
		}
		j := i + size
		for k := j; ; {
			for k < len(line) && line[k] == ' ' {
				k++
			}
			n := markerLen(line[k:])
			if n == 0 {
				break
			}
			k += n
			j = k
		}
		out = append(out, line[start:j])
		start, i = j, j
	}
	if start < len(line) {
		out = append(out, line[start:])
	}
	return out
}

// markerLen returns the length of a citation marker [n] (1 to 4 digits)
// at the start of s, or 0.
func markerLen(s string) int {
	if len(s) < 3 || s[0] != '[' {
		return 0
	}
	i := 1
	for i < len(s) && i <= 4 && isDigit(s[i]) {
		i++
	}
	if i == 1 || i >= len(s) || s[i] != ']' {
		return 0
	}
	return i + 1
}
