package consensus

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseVerdicts(t *testing.T) {
	ids := []string{"R1", "R2", "q1-r3"}
	tests := []struct {
		name     string
		answer   string
		want     []int8
		problems []string
	}{
		{"lines", "R1: yes\nR2: no\nq1-r3: YES\n", []int8{yes, no, yes}, nil},
		{"markdown", "- **[R1]** Yes\n* [R2] — No.\n1. `q1-r3`: pass", []int8{yes, no, yes}, nil},
		{"echoed text", "[R1] (insight) Does it cover risks? yes\nR2 no\nq1-r3 - false", []int8{yes, no, no}, nil},
		{"first verdict word counts", "R1: no, although it says yes elsewhere\nR2: yes\nq1-r3: no", []int8{no, yes, no}, nil},
		{"crlf and case", "r1: yes\r\nR2: NO\r\nQ1-R3: yes\r\nR1: YES\r\n", []int8{yes, no, invalid}, []string{"skipped q1-r3"}},
		{"skipped", "R1: yes\nq1-r3: no", []int8{yes, invalid, no}, []string{"skipped R2"}},
		{"conflict", "R1: yes\nR1: no\nR2: no\nq1-r3: yes", []int8{invalid, no, yes}, []string{"conflicting verdicts for R1"}},
		{"repeat agrees", "R1: yes\nR1: yes\nR2: no\nq1-r3: no", []int8{yes, no, no}, nil},
		{"id without verdict", "R1: maybe\nR2: no\nq1-r3: n/a", []int8{invalid, no, invalid}, []string{"skipped R1, q1-r3"}},
		{"unknown ids ignored", "R9: yes\nR1: yes\nR2: no\nq1-r3: no", []int8{yes, no, no}, nil},
		{"prefix is not an id", "R11: yes\nR2: no\nq1-r3: no", []int8{invalid, no, no}, []string{"skipped R1"}},
		{"json object", `{"R1": "yes", "R2": false, "q1-r3": {"verdict": "No"}}`, []int8{yes, no, no}, nil},
		{"json fenced", "```json\n{\"R1\": 1, \"R2\": 0, \"q1-r3\": true}\n```", []int8{yes, no, yes}, nil},
		{"json array", `[{"id": "R1", "verdict": "yes"}, {"id": "R2", "answer": "no"}, {"id": "q1-r3", "label": "maybe"}]`, []int8{yes, no, invalid}, []string{"skipped q1-r3"}},
		{"json bad values", `{"R1": 2, "R2": null, "q1-r3": [true]}`, []int8{invalid, invalid, invalid}, []string{"no rubric verdict found"}},
		{"prose", "I cannot grade this report.", []int8{invalid, invalid, invalid}, []string{"no rubric verdict found"}},
		{"empty", "", []int8{invalid, invalid, invalid}, []string{"no rubric verdict found"}},
		{"broken json falls back to lines", "{\"R1\": \"yes\",\nR2: no\nq1-r3: yes", []int8{yes, no, yes}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, probs := ParseVerdicts(tc.answer, ids)
			if !slices.Equal(got, tc.want) || !slices.Equal(probs, tc.problems) {
				t.Errorf("ParseVerdicts(%q) = %v %q, want %v %q", tc.answer, got, probs, tc.want, tc.problems)
			}
		})
	}
}

func TestParseVerdictsManySkipped(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	_, probs := ParseVerdicts("h: yes", ids)
	if want := []string{"skipped a, b, c, d, e and 2 more"}; !slices.Equal(probs, want) {
		t.Errorf("problems %q, want %q", probs, want)
	}
	_, probs = ParseVerdicts(strings.Repeat("x", maxAnswer+1), ids)
	if len(probs) != 1 || !strings.Contains(probs[0], "longer than") {
		t.Errorf("oversized answer: problems %q", probs)
	}
}

func FuzzParseVerdicts(f *testing.F) {
	for _, s := range []string{
		"R1: yes\nR2: no", "- **[R1]** Yes", `{"R1": "yes", "R2": {"verdict": "no"}}`, "```json\n[{\"id\": \"R2\", \"verdict\": true}]\n```",
		"R1: yes\nR1: no", "", "\xff\xfe", "[[[[", `{"R1": {"verdict": {"verdict": "yes"}}}`,
		"r1: PASSED\r\nx.y:z - unmet\n", `{"R1": "yes", "R1": "maybe", "R2": 1.0, "x.y:z": -0}`, `{"R1": 1e400, "R2": "no"}`,
		`{"R1": "Yes ", "R2": "\u00a0no", "x.y:z": "tru\xffe"}`, `{"R1": true}x`, `{"R1": 01}`, "R1 R2 yes\nR2: no yes",
		"R1.: yes.", "R1\xc2\xa0yes", "R1 ſ pass", "R2: no\nR1: yes\nR2 yes", "R1.: no\nR1. yes",
	} {
		for set := range uint8(3) {
			f.Add(s, set, uint8(set*3))
		}
	}
	f.Fuzz(func(t *testing.T, answer string, set, bits uint8) {
		// Distinct IDs; a repeated one; one ending in trimmed punctuation.
		ids := [][]string{{"R1", "R2", "x.y:z"}, {"R1", "R2", "R1", "x.y:z"}, {"R1", "R2", "R1.", "x.y:z"}}[set%3]
		// Round trip: an answer of "- **ID**: Yes/No" lines, one per
		// distinct ID, gives back those labels, and so does its JSON form.
		want := []int8{int8(bits & 1), int8(bits >> 1 & 1), int8(bits >> 2 & 1)}
		distinct := []string{"R1", "R2", "x.y:z"}
		var lines []string
		obj := map[string]string{}
		for i, id := range distinct {
			lines = append(lines, fmt.Sprintf("- **%s**: %s", id, map[int8]string{yes: "Yes", no: "No"}[want[i]]))
			obj[id] = map[int8]string{yes: "yes", no: "no"}[want[i]]
		}
		js, _ := json.Marshal(obj) // a map of strings always encodes
		for _, a := range []string{strings.Join(lines, "\n"), string(js)} {
			if got, probs := ParseVerdicts(a, distinct); !slices.Equal(got, want) || probs != nil {
				t.Fatalf("ParseVerdicts(%q) = %v %q, want %v", a, got, probs, want)
			}
		}
		got, probs := ParseVerdicts(answer, ids)
		if len(got) != len(ids) {
			t.Fatalf("%d labels for %d ids", len(got), len(ids))
		}
		bad := 0
		for _, l := range got {
			switch l {
			case yes, no:
			case invalid:
				bad++
			default:
				t.Fatalf("label %d", l)
			}
		}
		if (bad > 0) != (len(probs) > 0) {
			t.Fatalf("%d invalid labels but problems %q", bad, probs)
		}
		again, _ := ParseVerdicts(answer, ids)
		if !slices.Equal(got, again) {
			t.Fatal("not deterministic")
		}
	})
}
