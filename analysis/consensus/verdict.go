package consensus

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Labels of one rubric on one report by one judge.
const (
	no      int8 = 0
	yes     int8 = 1
	invalid int8 = -1 // the answer did not give a usable verdict
	missing int8 = -2 // there was no answer (cache miss or failed call)
)

// maxAnswer caps the answer length the verdict parser reads; a longer
// answer is invalid as a whole.
const maxAnswer = 4 << 20

// ParseVerdicts reads a judge's answer to a batched rubric prompt into one
// label per rubric of ids, in order: 1 for yes, 0 for no, -1 for invalid.
//
// Two forms are accepted. A JSON object mapping rubric IDs to verdicts
// ("yes"/"no", true/false, or an object with a "verdict", "answer" or
// "label" field), or a JSON array of objects with "id" and one of those
// fields, possibly inside a ``` fence; or lines that each name a rubric ID
// followed by a verdict word (yes, no, pass, fail, true, false), in any
// case and with markdown decoration ("- **[R3]**: Yes"). On a line, the
// first rubric ID and the first verdict word after it count; the rest of
// the line is ignored. A rubric the answer skips, or gives conflicting
// verdicts, is invalid, never yes or no. problems describes every invalid
// rubric, one short sentence each, sorted.
func ParseVerdicts(answer string, ids []string) (labels []int8, problems []string) {
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	return parseVerdicts(answer, ids, pos)
}

// conflicted marks a rubric given conflicting verdicts while parsing.
const conflicted int8 = -3

// parseVerdicts is ParseVerdicts with the index of ids (pos[ids[i]] = i)
// built by the caller, once per query.
func parseVerdicts(answer string, ids []string, pos map[string]int) (labels []int8, problems []string) {
	labels = make([]int8, len(ids))
	for i := range labels {
		labels[i] = invalid
	}
	if len(answer) > maxAnswer {
		return labels, []string{fmt.Sprintf("answer longer than %d bytes", maxAnswer)}
	}
	set := func(i int, v int8) {
		switch labels[i] {
		case conflicted:
		case invalid:
			labels[i] = v
		case v:
		default:
			labels[i] = conflicted
		}
	}
	if !parseJSONVerdicts(answer, len(ids), pos, set) {
		parseLineVerdicts(answer, ids, pos, set)
	}
	var skipped, conflicting []string
	for i, id := range ids {
		switch labels[i] {
		case conflicted:
			conflicting = append(conflicting, id)
			labels[i] = invalid
		case invalid:
			skipped = append(skipped, id)
		}
	}
	switch {
	case len(skipped) == len(ids) && len(ids) > 0:
		problems = append(problems, "no rubric verdict found")
	case len(skipped) > 0:
		problems = append(problems, "skipped "+listIDs(skipped))
	}
	if len(conflicting) > 0 {
		problems = append(problems, "conflicting verdicts for "+listIDs(conflicting))
	}
	slices.Sort(problems)
	return labels, problems
}

// listIDs lists at most 5 IDs and the number of others.
func listIDs(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:5], ", "), len(ids)-5)
}

// verdictWord maps a verdict word, lower case, to a label.
func verdictWord(s string) (int8, bool) {
	switch strings.ToLower(s) {
	case "yes", "pass", "passed", "true", "met":
		return yes, true
	case "no", "fail", "failed", "false", "unmet":
		return no, true
	}
	return invalid, false
}

// parseJSONVerdicts tries the JSON forms for n rubrics; it reports
// whether answer was JSON of a recognised shape.
func parseJSONVerdicts(answer string, n int, pos map[string]int, set func(int, int8)) bool {
	s := strings.TrimSpace(answer)
	if strings.HasPrefix(s, "```") {
		s = strings.TrimPrefix(s, "```")
		if nl := strings.IndexByte(s, '\n'); nl >= 0 && !strings.ContainsAny(s[:nl], "{[") {
			s = s[nl+1:] // drop the fence's language tag
		}
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "```"))
	}
	if s == "" || (s[0] != '{' && s[0] != '[') {
		return false
	}
	if isJSON, ok := plainJSONVerdicts(s, n, pos, set); ok {
		return isJSON
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		for id, x := range v {
			if i, ok := pos[id]; ok {
				if l, ok := jsonVerdict(x); ok {
					set(i, l)
				}
			}
		}
		return true
	case []any:
		for _, e := range v {
			m, ok := e.(map[string]any)
			if !ok {
				continue
			}
			id, _ := m["id"].(string)
			if i, ok := pos[id]; ok {
				if l, ok := jsonVerdict(m); ok {
					set(i, l)
				}
			}
		}
		return true
	}
	return false
}

func jsonVerdict(x any) (int8, bool) {
	switch x := x.(type) {
	case bool:
		if x {
			return yes, true
		}
		return no, true
	case string:
		return verdictWord(strings.TrimSpace(x))
	case float64:
		switch x {
		case 1:
			return yes, true
		case 0:
			return no, true
		}
	case map[string]any:
		for _, k := range []string{"verdict", "answer", "label"} {
			if y, ok := x[k]; ok {
				if _, nested := y.(map[string]any); !nested {
					return jsonVerdict(y)
				}
			}
		}
	}
	return invalid, false
}

// idBytes[c] is idByte(c).
var idBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = idByte(byte(c))
	}
	return t
}()

// idByte reports whether c can be part of a rubric ID (see validID).
func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':'
}

// parseLineVerdicts reads "ID ... verdict" lines. A token is a run of ID
// bytes; anything else, any non-ASCII byte included, separates tokens.
func parseLineVerdicts(answer string, ids []string, pos map[string]int, set func(int, int8)) {
	at := -1 // the line's rubric
	ix := idIndex{ids: ids, pos: pos, plain: len(pos) == len(ids) && !slices.ContainsFunc(ids, endsTrimmed)}
	for i := 0; i < len(answer); {
		c := answer[i]
		if !idBytes[c] {
			if c == '\n' {
				at = -1
			}
			i++
			continue
		}
		j := i + 1
		for j < len(answer) && idBytes[answer[j]] {
			j++
		}
		t := answer[i:j]
		i = j
		switch {
		case at < 0:
			if k, ok := ix.lookup(t); ok {
				at = k
				ix.next = k + 1
			}
		default:
			if l, ok := verdictToken(trimPunct(trimPunctLeft(t))); ok {
				set(at, l)
				// The rest of the line is ignored.
				if nl := strings.IndexByte(answer[i:], '\n'); nl >= 0 {
					i += nl
				} else {
					i = len(answer)
				}
			}
		}
	}
}

// verdictToken is verdictWord for an ASCII token, without allocating.
func verdictToken(t string) (int8, bool) {
	switch len(t) {
	case 2:
		if strings.EqualFold(t, "no") {
			return no, true
		}
	case 3:
		switch {
		case strings.EqualFold(t, "yes"), strings.EqualFold(t, "met"):
			return yes, true
		}
	case 4:
		switch {
		case strings.EqualFold(t, "pass"), strings.EqualFold(t, "true"):
			return yes, true
		case strings.EqualFold(t, "fail"):
			return no, true
		}
	case 5:
		switch {
		case strings.EqualFold(t, "false"), strings.EqualFold(t, "unmet"):
			return no, true
		}
	case 6:
		switch {
		case strings.EqualFold(t, "passed"):
			return yes, true
		case strings.EqualFold(t, "failed"):
			return no, true
		}
	}
	return invalid, false
}

// An idIndex finds tokens among the rubric IDs ids (pos[ids[i]] = i).
type idIndex struct {
	ids []string
	pos map[string]int
	// plain is set when the IDs are distinct and none ends in a byte
	// lookup trims.
	plain bool
	// next is the ID tried first, after the last one found: answers list
	// the rubrics in order.
	next int
}

// endsTrimmed reports whether id ends in a byte lookup trims.
func endsTrimmed(id string) bool {
	return id != "" && isPunct(id[len(id)-1])
}

// isPunct reports whether c is '.', ':', '-' or '_', the punctuation
// trimmed from tokens.
func isPunct(c byte) bool { return c == '.' || c == ':' || c == '-' || c == '_' }

// trimPunct is strings.TrimRight(t, ".:-_").
func trimPunct(t string) string {
	for len(t) > 0 && isPunct(t[len(t)-1]) {
		t = t[:len(t)-1]
	}
	return t
}

// trimPunctLeft is strings.TrimLeft(t, ".:-_").
func trimPunctLeft(t string) string {
	for len(t) > 0 && isPunct(t[0]) {
		t = t[1:]
	}
	return t
}

// lookup finds token t, or t without trailing punctuation, among the
// rubric IDs.
func (x *idIndex) lookup(t string) (int, bool) {
	if !x.plain {
		if i, ok := x.pos[t]; ok {
			return i, true
		}
		i, ok := x.pos[trimPunct(t)]
		return i, ok
	}
	// No ID ends in punctuation, so t names one only once trimmed.
	u := trimPunct(t)
	if x.next < len(x.ids) && x.ids[x.next] == u {
		return x.next, true
	}
	i, ok := x.pos[u]
	return i, ok
}

// plainJSONVerdicts reads s when it is a JSON object whose values are
// all strings without escapes, true, false, null or numbers, the form
// judges use; ok is false for anything else (and anything it is unsure
// of), which encoding/json then reads. isJSON is then true: s is such an
// object, and its verdicts of the n rubrics went to set. As with encoding/json, a repeated
// key's last value counts.
func plainJSONVerdicts(s string, n int, pos map[string]int, set func(int, int8)) (isJSON, ok bool) {
	const absent int8 = -4
	var got []int8 // by rubric: the last value of its key, when a verdict
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false, false
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := plainString(s, i)
			if !ok {
				return false, false
			}
			j = skipWS(s, j)
			if j >= len(s) || s[j] != ':' {
				return false, false
			}
			j = skipWS(s, j+1)
			l, has, j, ok := plainValue(s, j)
			if !ok {
				return false, false
			}
			if k, known := pos[key]; known {
				if got == nil {
					got = make([]int8, n)
					for r := range got {
						got[r] = absent
					}
				}
				if !has {
					l = invalid
				}
				got[k] = l
			}
			j = skipWS(s, j)
			if j >= len(s) {
				return false, false
			}
			if s[j] == '}' {
				i = j + 1
				break
			}
			if s[j] != ',' {
				return false, false
			}
			i = skipWS(s, j+1)
		}
	}
	if skipWS(s, i) != len(s) {
		return false, false
	}
	for k, l := range got {
		if l == yes || l == no {
			set(k, l)
		}
	}
	return true, true
}

// skipWS skips JSON white space from s[i].
func skipWS(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string at s[i] made of valid UTF-8 without
// escapes or control characters; it returns its contents and the index
// after it.
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	ascii := true
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			v := s[i+1 : j]
			return v, j + 1, ascii || utf8.ValidString(v)
		case c == '\\', c < 0x20:
			return "", j, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", len(s), false
}

// plainValue reads a plain JSON value at s[i] (see plainJSONVerdicts) as
// jsonVerdict would: its label, whether it is a verdict, and the index
// after it.
func plainValue(s string, i int) (l int8, has bool, next int, ok bool) {
	if i >= len(s) {
		return invalid, false, i, false
	}
	switch c := s[i]; {
	case c == '"':
		v, j, ok := plainString(s, i)
		if !ok {
			return invalid, false, j, false
		}
		l, has := verdictWord(strings.TrimSpace(v))
		return l, has, j, true
	case strings.HasPrefix(s[i:], "true"):
		return yes, true, i + 4, true
	case strings.HasPrefix(s[i:], "false"):
		return no, true, i + 5, true
	case strings.HasPrefix(s[i:], "null"):
		return invalid, false, i + 4, true
	case c == '-' || c >= '0' && c <= '9':
		j := numberEnd(s, i)
		if j < 0 {
			return invalid, false, i, false
		}
		x, err := strconv.ParseFloat(s[i:j], 64)
		if err != nil {
			return invalid, false, j, false
		}
		switch x {
		case 1:
			return yes, true, j, true
		case 0:
			return no, true, j, true
		}
		return invalid, false, j, true
	}
	return invalid, false, i, false
}

// numberEnd returns the index after the JSON number at s[i], or -1 when
// there is none.
func numberEnd(s string, i int) int {
	digits := func(j int) int {
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j
	}
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i + 1)
	default:
		return -1
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return -1
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return -1
		}
		i = j
	}
	return i
}
