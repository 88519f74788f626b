package consensus

// The verdict parser as it was before the hand-written scanners, kept as
// the reference FuzzParseVerdictsReference compares ParseVerdicts with.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// refParseVerdicts reads a judge's answer to a batched rubric prompt into one
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
func refParseVerdicts(answer string, ids []string) (labels []int8, problems []string) {
	labels = make([]int8, len(ids))
	for i := range labels {
		labels[i] = invalid
	}
	if len(answer) > maxAnswer {
		return labels, []string{fmt.Sprintf("answer longer than %d bytes", maxAnswer)}
	}
	pos := make(map[string]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	got := make([]int8, len(ids))
	for i := range got {
		got[i] = invalid
	}
	conflict := make([]bool, len(ids))
	set := func(i int, v int8) {
		switch {
		case conflict[i]:
		case got[i] == invalid:
			got[i] = v
		case got[i] != v:
			conflict[i] = true
		}
	}
	if !refParseJSONVerdicts(answer, pos, set) {
		refParseLineVerdicts(answer, pos, set)
	}
	var skipped, conflicting []string
	for i, id := range ids {
		switch {
		case conflict[i]:
			conflicting = append(conflicting, id)
		case got[i] == invalid:
			skipped = append(skipped, id)
		default:
			labels[i] = got[i]
		}
	}
	switch {
	case len(skipped) == len(ids) && len(ids) > 0:
		problems = append(problems, "no rubric verdict found")
	case len(skipped) > 0:
		problems = append(problems, "skipped "+refListIDs(skipped))
	}
	if len(conflicting) > 0 {
		problems = append(problems, "conflicting verdicts for "+refListIDs(conflicting))
	}
	slices.Sort(problems)
	return labels, problems
}

// refListIDs lists at most 5 IDs and the number of others.
func refListIDs(ids []string) string {
	if len(ids) <= 5 {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(ids[:5], ", "), len(ids)-5)
}

// refVerdictWord maps a verdict word, lower case, to a label.
func refVerdictWord(s string) (int8, bool) {
	switch strings.ToLower(s) {
	case "yes", "pass", "passed", "true", "met":
		return yes, true
	case "no", "fail", "failed", "false", "unmet":
		return no, true
	}
	return invalid, false
}

// refParseJSONVerdicts tries the JSON forms; it reports whether answer was
// JSON of a recognised shape.
func refParseJSONVerdicts(answer string, pos map[string]int, set func(int, int8)) bool {
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
				if l, ok := refJsonVerdict(x); ok {
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
				if l, ok := refJsonVerdict(m); ok {
					set(i, l)
				}
			}
		}
		return true
	}
	return false
}

func refJsonVerdict(x any) (int8, bool) {
	switch x := x.(type) {
	case bool:
		if x {
			return yes, true
		}
		return no, true
	case string:
		return refVerdictWord(strings.TrimSpace(x))
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
					return refJsonVerdict(y)
				}
			}
		}
	}
	return invalid, false
}

func refIdChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':'
}

// refParseLineVerdicts reads "ID ... verdict" lines.
func refParseLineVerdicts(answer string, pos map[string]int, set func(int, int8)) {
	for line := range strings.Lines(answer) {
		toks := strings.FieldsFunc(line, func(c rune) bool { return !refIdChar(c) })
		at := -1
		for _, t := range toks {
			if at < 0 {
				if i, ok := refLookupID(t, pos); ok {
					at = i
				}
				continue
			}
			if l, ok := refVerdictWord(strings.Trim(t, ".:-_")); ok {
				set(at, l)
				break
			}
		}
	}
}

// refLookupID finds token t, or t without trailing punctuation, among the
// rubric IDs.
func refLookupID(t string, pos map[string]int) (int, bool) {
	if i, ok := pos[t]; ok {
		return i, true
	}
	i, ok := pos[strings.TrimRight(t, ".:-_")]
	return i, ok
}
