package consensus

import (
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
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
	if !parseJSONVerdicts(answer, pos, set) {
		parseLineVerdicts(answer, pos, set)
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

// parseJSONVerdicts tries the JSON forms; it reports
// whether answer was JSON of a recognised shape.
func parseJSONVerdicts(answer string, pos map[string]int, set func(int, int8)) bool {
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

// idChar reports whether c can be part of a rubric ID (see validID).
func idChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':'
}

// parseLineVerdicts reads "ID ... verdict" lines.
func parseLineVerdicts(answer string, pos map[string]int, set func(int, int8)) {
	for line := range strings.Lines(answer) {
		at := -1
		for t := range tokens(line) {
			if at < 0 {
				if i, ok := lookupID(t, pos); ok {
					at = i
				}
				continue
			}
			if l, ok := verdictWord(strings.Trim(t, ".:-_")); ok {
				set(at, l)
				break // the rest of the line is ignored
			}
		}
	}
}

// tokens yields the runs of ID characters of s: what strings.FieldsFunc
// with idChar's complement returns, without building the slice (a judge
// answer is read a line and a token at a time on FinResearchBench II's
// collect, BenchmarkBundle/finresearchbench2).
func tokens(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i := 0; i < len(s); {
			if !idChar(rune(s[i])) {
				i++
				continue
			}
			j := i + 1
			for j < len(s) && idChar(rune(s[j])) {
				j++
			}
			if !yield(s[i:j]) {
				return
			}
			i = j
		}
	}
}

// lookupID finds token t, or t without trailing punctuation, among the
// rubric IDs.
func lookupID(t string, pos map[string]int) (int, bool) {
	if i, ok := pos[t]; ok {
		return i, true
	}
	i, ok := pos[strings.TrimRight(t, ".:-_")]
	return i, ok
}
