package icbc

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
		var m []string
		if t := strings.TrimLeft(line, " \t-*+"); strings.HasPrefix(t, "[") && strings.Contains(t, "://") {
			m = reRefLine.FindStringSubmatch(line)
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
		if d := reDate.FindStringSubmatch(m[2] + " " + m[4]); d != nil {
			if t, err := time.Parse(time.DateOnly, d[1]); err == nil {
				r.Date = t
			}
		}
		refs = append(refs, r)
	}
	slices.SortStableFunc(refs, func(a, b Reference) int { return a.N - b.N })
	var claims []Claim
	for _, line := range body {
		if !strings.Contains(line, "[") {
			continue // no sentence of it cites
		}
		for _, sent := range sentences(line) {
			ms := reMarker.FindAllStringSubmatch(sent, -1)
			if ms == nil {
				continue
			}
			text := strings.TrimSpace(reSpacePunct.ReplaceAllString(reMarker.ReplaceAllString(sent, ""), "$1"))
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

var (
	reRefLine = regexp.MustCompile(`^\s*(?:[-*+]\s*)?\[(\d{1,4})\]:?\s*(.*?)(https?://[^\s<>()\]"'）]+)(.*)$`)
	reDate    = regexp.MustCompile(`\b(\d{4}-\d{2}-\d{2})\b`)
	reMarker  = regexp.MustCompile(`\[(\d{1,4})\]`)
	// reSpacePunct finds the space a removed marker leaves before a stop.
	reSpacePunct = regexp.MustCompile(`\s+([.,;:!?。，；：！？])`)
)

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
	var resp struct {
		Verdicts []Citation `json:"verdicts"`
	}
	ok := false
	for _, c := range []string{s, fullWidth.Replace(s)} {
		if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &resp) == nil {
			ok = true
			break
		}
	}
	if !ok {
		return nil, nil, errors.New("citations: no JSON object with verdicts")
	}
	out := map[string]Citation{}
	var notes []string
	for _, v := range resp.Verdicts {
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
	var resp struct {
		Scores []struct {
			ID            string          `json:"id"`
			Score         json.RawMessage `json:"score"`
			Justification string          `json:"justification"`
		} `json:"scores"`
	}
	ok := false
	for _, c := range []string{s, fullWidth.Replace(s)} {
		if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &resp) == nil && len(resp.Scores) > 0 {
			ok = true
			break
		}
	}
	if !ok {
		return nil, nil, errors.New("rubric scores: no JSON object with scores")
	}
	got := map[string]SubScore{}
	var notes []string
	for _, x := range resp.Scores {
		id := strings.TrimSpace(x.ID)
		var v any
		if err := json.Unmarshal(x.Score, &v); err != nil {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: unreadable score", id))
			continue
		}
		f, present, err := number(v)
		if err != nil || !present {
			notes = append(notes, fmt.Sprintf("sub-dimension %s: unreadable score %s", id, x.Score))
			continue
		}
		got[id] = SubScore{ID: id, Score: f, Justification: x.Justification}
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

// sentences splits a line into sentences: at 。！？ always, at . ! ? when
// a space or the end of the line follows (so 4.2% stays whole), keeping
// citation markers written right after the stop ("rose.[3]") with the
// sentence they close.
func sentences(line string) []string {
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
			n := markerLen(rs[k:])
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

// markerLen returns the length of a citation marker [n] (1 to 4 digits)
// at the start of rs, or 0.
func markerLen(rs []rune) int {
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
