package icbc

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The encoding/json parsers of judge responses this package had before
// its scanner: the references the fuzz tests compare the parsers with.

func parseVerdictRef(s string) (Verdict, error) {
	if len(s) > MaxResponse {
		s = s[:MaxResponse]
	}
	var v Verdict
	var raw map[string]any
	for _, c := range []string{s, fullWidth.Replace(s)} {
		if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &raw) == nil {
			break
		}
		raw = nil
	}
	s = fullWidth.Replace(s)
	if raw != nil {
		lower := map[string]any{}
		for k, x := range raw {
			lower[strings.ToLower(strings.TrimSpace(k))] = x
		}
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

func parseCitationsRef(s string, ids []string) (map[string]Citation, []string, error) {
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

func parseRubricScoresRef(s string, r *Rubric) ([]SubScore, []string, error) {
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

// judgeSeeds are judge responses the fuzz tests start from.
var judgeSeeds = []string{
	`{"extracted_final_answer": "A", "reasoning": "r \"q\" \u003cb\u003e", "correct": "yes", "confidence": 85}`,
	"```json\n{\"correct\":\"no\",\"confidence\":\"85%\"}\n```",
	`｛"correct"："yes"，"confidence"：90｝`,
	`{"correct": true, "confidence": null, "reasoning": 3}`,
	`{"Correct": "yes", "correct": "no"}`,
	`{"correct": "yes", "correct": "no", "confidence": 1e400}`,
	`{"scores": [{"id": "1.1", "score": 8, "justification": "ok\n"}, {"id": " 1.2", "score": "38.5%"}, {"id": "2.1", "score": null}, {"id": "2.2"}, {"id": "1.2", "score": [1]}]}`,
	`{"scores": [{"id": "1.1", "score": -0.5e1, "justification": "\ud83d\ude00"}], "total": 5}`,
	`{"scores": []}`,
	`{"verdicts": [{"id": "C1", "verdict": "Supported", "reason": "x"}, {"id": "C2", "verdict": "partly"}]}`,
	`{"verdicts": null}`,
	"{\"verdicts\": [{\"id\": \"C1\", \"verdict\": \"supported\xff\"}]}",
	`{"id": 01, "score": 1.}`,
	`{`, ``, `"correct": yes`,
}

// FuzzJudgeParsersRef checks that the three judge parsers read every
// response as the encoding/json references do.
func FuzzJudgeParsersRef(f *testing.F) {
	for _, s := range judgeSeeds {
		f.Add(s)
	}
	r, err := ParseRubric(rubricEN)
	if err != nil {
		f.Fatal(err)
	}
	ids := []string{"C1", "C2", "C3"}
	f.Fuzz(func(t *testing.T, s string) {
		if foldedKeys(s) {
			t.Skip("keys equal but for case or space: ParseVerdict takes one at random")
		}
		v, err := ParseVerdict(s)
		wv, werr := parseVerdictRef(s)
		if !reflect.DeepEqual(v, wv) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("ParseVerdict = %+v, %v\nwant %+v, %v", v, err, wv, werr)
		}
		c, notes, err := ParseCitations(s, ids)
		wc, wnotes, werr := parseCitationsRef(s, ids)
		if !reflect.DeepEqual(c, wc) || !reflect.DeepEqual(notes, wnotes) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("ParseCitations = %+v, %q, %v\nwant %+v, %q, %v", c, notes, err, wc, wnotes, werr)
		}
		sc, notes, err := ParseRubricScores(s, r)
		wsc, wnotes, werr := parseRubricScoresRef(s, r)
		if !reflect.DeepEqual(sc, wsc) || !reflect.DeepEqual(notes, wnotes) || fmt.Sprint(err) != fmt.Sprint(werr) {
			t.Fatalf("ParseRubricScores = %+v, %q, %v\nwant %+v, %q, %v", sc, notes, err, wsc, wnotes, werr)
		}
	})
}

// foldedKeys reports whether the JSON object ParseVerdict decodes from s
// has two keys equal but for case and surrounding space.
func foldedKeys(s string) bool {
	for _, c := range []string{s, fullWidth.Replace(s)} {
		var raw map[string]any
		if obj := jsonObject(c); obj != "" && json.Unmarshal([]byte(obj), &raw) == nil {
			seen := map[string]bool{}
			for k := range raw {
				k = strings.ToLower(strings.TrimSpace(k))
				if seen[k] {
					return true
				}
				seen[k] = true
			}
			return false
		}
	}
	return false
}

// FuzzScoreLinesRef compares scoreLines with the fmt.Sprintf lines it
// replaced.
func FuzzScoreLinesRef(f *testing.F) {
	f.Add("1.1", 7.5, "Clear.", "2.3", 1e21, "x\xff")
	f.Add("", math.Inf(-1), "", "(1)", 1e-7, "a\nb")
	f.Add("%s", -0.0, "%g", "", 123456789.0, "")
	f.Fuzz(func(t *testing.T, id1 string, s1 float64, j1, id2 string, s2 float64, j2 string) {
		scores := []SubScore{{ID: id1, Score: s1, Justification: j1}, {ID: id2, Score: s2, Justification: j2}}
		var want []string
		for _, sc := range scores {
			want = append(want, fmt.Sprintf("%s: %g. %s", sc.ID, sc.Score, sc.Justification))
		}
		if got := scoreLines(scores); got != strings.Join(want, "\n") {
			t.Fatalf("scoreLines = %q, want %q", got, strings.Join(want, "\n"))
		}
		if scoreLines(nil) != "" {
			t.Fatal("scoreLines(nil) is not empty")
		}
	})
}
