package icbc

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// markerRE finds the marker a labelAnswerer's system reply carries.
var markerRE = regexp.MustCompile(`<<([^|>]+)\|([^>]+)>>`)

// labelAnswerer answers every call with text naming its call: a system
// writes "<<task|system>>" (in a cited claim for a report); a judge finds
// that marker in its prompt and repeats it in its reasoning. It records
// the size of every Answer call and the calls whose prompt carries
// another task's marker. A reply's key names its call and the system
// whose output it is about.
type labelAnswerer struct {
	sizes []int
	wrong []string
}

func (a *labelAnswerer) Answer(_ context.Context, calls []results.Call) []results.Reply {
	a.sizes = append(a.sizes, len(calls))
	out := make([]results.Reply, len(calls))
	for i, c := range calls {
		l := c.Label
		if l.Role == results.RoleSystem {
			m := "<<" + l.Task + "|" + l.Name + ">>"
			text := "Exact Answer: " + m
			if strings.Contains(l.Task, "subjective/") {
				text = "The marker " + m + " rose by 3% [1].\n[1] Source, https://www.x.gov/a, published 2026-01-31\n"
			}
			out[i] = reply(l, l.Name, text)
			continue
		}
		m := markerRE.FindStringSubmatch(c.Prompt.User)
		if m == nil || m[1] != l.Task {
			a.wrong = append(a.wrong, l.Task+" "+l.Name)
			continue
		}
		var v any
		switch {
		case strings.HasPrefix(c.Prompt.User, "You check"): // citation
			v = map[string]any{"verdicts": []map[string]string{{"id": "C1", "verdict": "supported", "reason": l.Name + " " + m[0]}}}
		case strings.Contains(l.Task, "subjective/"):
			v = map[string]any{"scores": []map[string]any{{"id": "1.1", "score": 10, "justification": l.Name + " " + m[0]}}}
		default:
			v = map[string]any{"extracted_final_answer": "x", "reasoning": l.Name + " " + m[0], "correct": "yes", "confidence": 50}
		}
		b, _ := json.Marshal(v)
		out[i] = reply(l, m[2], string(b))
	}
	return out
}

// reply is a reply to a call of label l about system sys's output: its
// key names all three, its model l's name.
func reply(l results.Label, sys, text string) results.Reply {
	return results.Reply{Text: text, Key: keyOf(l.Task, l.Name, sys), Model: l.Name, Source: results.SourceSim}
}

func keyOf(task, name, sys string) string {
	return fmt.Sprintf("%x", sha256.Sum256([]byte(task+"\x00"+name+"\x00"+sys)))
}

// TestAnswerWindows collects the fixture (two rubric judges, one report
// sampled by the experts, a private hold-out set) in windows of several
// sizes and checks that no Answer call gets more than a window of calls,
// that every judge is asked about its own task's output, and that every
// detail shows the output and verdicts of its own task and system.
func TestAnswerWindows(t *testing.T) {
	defer func(w int) { window = w }(window)
	for _, w := range []int{1, 2, 3, 5, 8, 512} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			window = w
			in := fixtureInputs()
			in.Config.RubricJudges = append(in.Config.RubricJudges, Model{Name: "RJ2", Provider: "test", Model: "rj2"})
			in.Human = []HumanScore{{Task: "1", System: "A", Expert: "e1", Score: 50}}
			in.PrivateObjectives, in.PrivateSubjectives = in.Objectives[:2], in.Subjectives[:1]
			ans := &labelAnswerer{}
			c := collect(context.Background(), in, ans, &analysis.MemoryTexts{})
			calls := 0
			for _, n := range ans.sizes {
				if n > w {
					t.Errorf("an Answer call of %d calls, window %d", n, w)
				}
				calls += n
			}
			// 8 objective outputs and their judges, 6 reports, 7 rubric
			// judgings (one sampled), 3 citation judgings (system A's),
			// then the private set's 4 + 4 + 2 + 2 + 1.
			if want := 8 + 8 + 6 + 7 + 3 + 13; calls != want {
				t.Errorf("%d calls, want %d", calls, want)
			}
			if len(ans.wrong) > 0 {
				t.Errorf("judges asked about another task's output: %v", ans.wrong)
			}
			n := 0
			for d := range c.eachDetail {
				n++
				m := "<<" + d.Task + "|" + d.System + ">>"
				if !strings.Contains(d.Output, m) {
					t.Errorf("%s %s: output %q", d.Task, d.System, d.Output)
				}
				if d.Call == nil || d.Call.Key != keyOf(d.Task, d.System, d.System) || d.Call.Model != d.System {
					t.Errorf("%s %s: exchange %+v", d.Task, d.System, d.Call)
				}
				judges := 1 // the objective judge
				if strings.Contains(d.Task, "subjective/") {
					judges = 1 + map[bool]int{true: 1}[d.Task == "subjective/en/1" && d.System == "A"] + map[bool]int{true: 1}[d.System == "A"]
				}
				if len(d.Verdicts) != judges {
					t.Errorf("%s %s: %d verdicts, want %d", d.Task, d.System, len(d.Verdicts), judges)
				}
				for _, v := range d.Verdicts {
					if !strings.Contains(v.Reasoning, v.Judge+" "+m) {
						t.Errorf("%s %s: judge %s's reasoning %q", d.Task, d.System, v.Judge, v.Reasoning)
					}
					if v.Call == nil || v.Call.Key != keyOf(d.Task, v.Judge, d.System) || v.Call.Model != v.Judge {
						t.Errorf("%s %s: judge %s's exchange %+v", d.Task, d.System, v.Judge, v.Call)
					}
				}
			}
			if n != 8+6+4+2 {
				t.Errorf("%d details, want %d", n, 8+6+4+2)
			}
		})
	}
}
