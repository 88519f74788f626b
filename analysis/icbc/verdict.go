package icbc

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// MaxResponse caps the bytes of a response the parsers look at, so that a
// huge output cannot make them slow.
const MaxResponse = 1 << 20

// A Verdict is the objective judge's parsed response.
type Verdict struct {
	Extracted  string
	Reasoning  string
	Correct    bool
	Confidence float64 // percent, 0..100
	// Notes are non-fatal findings: a missing confidence (taken as 100),
	// a clipped confidence.
	Notes []string
}

// fullWidth maps full-width and typographic punctuation that judges write
// in Chinese answers to ASCII JSON punctuation.
var fullWidth = strings.NewReplacer(
	"｛", "{", "｝", "}", "：", ":", "，", ",", "“", `"`, "”", `"`, "［", "[", "］", "]", "＂", `"`, "％", "%",
)

// jsonObject returns the first balanced {...} in s, ignoring braces in
// strings, or "".
func jsonObject(s string) string {
	start := strings.IndexByte(s, '{')
	for start >= 0 {
		depth, inStr, esc := 0, false, false
		for i := start; i < len(s); i++ {
			c := s[i]
			switch {
			case esc:
				esc = false
			case inStr && c == '\\':
				esc = true
			case c == '"':
				inStr = !inStr
			case inStr:
			case c == '{':
				depth++
			case c == '}':
				depth--
				if depth == 0 {
					return s[start : i+1]
				}
			}
		}
		next := strings.IndexByte(s[start+1:], '{')
		if next < 0 {
			return ""
		}
		start += 1 + next
	}
	return ""
}

var (
	reCorrect    = regexp.MustCompile(`(?i)"?correct"?\s*:\s*"?\s*(yes|no|true|false|是|否|正确|错误)`)
	reConfidence = regexp.MustCompile(`(?i)"?confidence"?\s*:\s*"?\s*(-?[0-9]+(?:\.[0-9]+)?)\s*%?`)
	reExtracted  = regexp.MustCompile(`(?i)"?extracted_final_answer"?\s*:\s*"((?:[^"\\]|\\.)*)"`)
	reReasoning  = regexp.MustCompile(`(?i)"?reasoning"?\s*:\s*"((?:[^"\\]|\\.)*)"`)
)

// ParseVerdict parses the objective judge's response: a JSON object with
// extracted_final_answer, reasoning, correct and confidence, possibly in a
// code fence, with prose around it, full-width punctuation, a confidence
// written "85%" or missing (then 100, as the prompt says). When the JSON
// does not decode, the fields are read one by one; without a readable
// verdict the response is an error.
func ParseVerdict(s string) (Verdict, error) {
	if len(s) > MaxResponse {
		s = s[:MaxResponse]
	}
	var v Verdict
	var lower map[string]any
	var raw map[string]any
	for _, c := range []string{s, fullWidth.Replace(s)} {
		if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &raw) == nil {
			break
		}
		raw = nil
	}
	if raw != nil {
		// Keys equal but for case or spaces ("Correct", "correct"):
		// the last in sorted order wins, never map order.
		lower = map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(raw)) {
			lower[strings.ToLower(strings.TrimSpace(k))] = raw[k]
		}
	}
	if lower != nil {
		v.Extracted = text(lower["extracted_final_answer"])
		v.Reasoning = text(lower["reasoning"])
		c, ok := yesNo(lower["correct"])
		if !ok {
			return v, errors.New("verdict: no yes/no in \"correct\"")
		}
		v.Correct = c
		conf, present, err := number(lower["confidence"])
		if err != nil {
			return v, fmt.Errorf("verdict: confidence: %w", err)
		}
		v.setConfidence(conf, present)
		return v, nil
	}
	// Field by field, for JSON with unescaped quotes, comments or cut off.
	s = fullWidth.Replace(s)
	m := reCorrect.FindStringSubmatch(s)
	if m == nil {
		return v, errors.New("verdict: no JSON object and no \"correct\" field")
	}
	v.Correct, _ = yesNo(m[1])
	if m := reExtracted.FindStringSubmatch(s); m != nil {
		v.Extracted = m[1]
	}
	if m := reReasoning.FindStringSubmatch(s); m != nil {
		v.Reasoning = m[1]
	}
	if m := reConfidence.FindStringSubmatch(s); m != nil {
		c, _ := strconv.ParseFloat(m[1], 64)
		v.setConfidence(c, true)
	} else {
		v.setConfidence(0, false)
	}
	v.Notes = append(v.Notes, "not valid JSON; fields read one by one")
	return v, nil
}

func (v *Verdict) setConfidence(c float64, present bool) {
	switch {
	case !present:
		v.Confidence = 100
		v.Notes = append(v.Notes, "no confidence; taken as 100")
	case c < 0 || c > 100:
		v.Confidence = math.Min(math.Max(c, 0), 100)
		v.Notes = append(v.Notes, fmt.Sprintf("confidence %g clipped to %g", c, v.Confidence))
	default:
		v.Confidence = c
	}
}

func text(x any) string {
	switch t := x.(type) {
	case string:
		return t
	case nil:
		return ""
	}
	b, _ := json.Marshal(x) // re-encoding a decoded JSON value cannot fail
	return string(b)
}

func yesNo(x any) (bool, bool) {
	switch t := x.(type) {
	case bool:
		return t, true
	case string:
		switch strings.ToLower(strings.Trim(strings.TrimSpace(t), `."'`)) {
		case "yes", "true", "correct", "是", "正确", "y":
			return true, true
		case "no", "false", "incorrect", "否", "错误", "n":
			return false, true
		}
	}
	return false, false
}

// number reads a confidence: a JSON number or a string like "85", "85%"
// or "0.85" (a fraction is not rescaled: the prompt asks for 0..100).
func number(x any) (v float64, present bool, err error) {
	switch t := x.(type) {
	case nil:
		return 0, false, nil
	case float64:
		return t, true, nil
	case string:
		s := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), "%"))
		if s == "" || strings.EqualFold(s, "none") || strings.EqualFold(s, "n/a") {
			return 0, false, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, false, fmt.Errorf("not a number: %q", t)
		}
		return f, true, nil
	}
	return 0, false, fmt.Errorf("unexpected JSON %T", x)
}
