package icbc

import (
	"fmt"
	"strings"

	"github.com/finrepro/finrepro/results"
)

// Name is the benchmark's machine name.
const Name = "icbcbench"

// citeSuffix asks a system for the citation format ParseReport reads. The
// authors' report prompt is not published; the question text is theirs.
var citeSuffix = map[string]string{
	"en": "\n\nCite your sources inline as [n] and end the report with a numbered reference list, one line per source: [n] title, URL, publish date (YYYY-MM-DD).",
	"zh": "\n\n请在正文中以 [n] 标注引用来源，并在报告末尾给出编号参考文献列表，每行一条：[n] 标题、URL、发布日期（YYYY-MM-DD）。",
}

// SolverPrompt is the user message of an objective task: the question and
// the language's answer-format suffix (the authors' template, with its
// doubled braces undone).
func SolverPrompt(o *Objective, p *Prompts) string {
	return o.Question + "\n\n" + Format(p.Answer[o.Language], nil)
}

// Shapes of the objective judge's requests (Config.JudgeRequest).
const (
	// JudgeToolkit sends what the authors' evaluation toolkit sends
	// (evaluation_toolkit/objective_eval/judge.py, extract_answer): the
	// model, max_completion_tokens 4096 unless the judge's params say
	// otherwise, and one user message, the judge prompt with the correct
	// answer as Python formats it (a list of answers as ['A', 'C']). A
	// toolkit run recorded through finrepro proxy replays with no miss.
	JudgeToolkit = "toolkit"
	// JudgeJoined is finrepro's earlier shape: the judge's params alone,
	// and a list of answers joined with ", ".
	JudgeJoined = "joined"
)

// ToolkitJudgeParams are the parameters the authors' toolkit sends its
// objective judge.
func ToolkitJudgeParams() map[string]any { return map[string]any{"max_completion_tokens": 4096} }

// JudgeCall is the objective judge's call for one response under cfg.
func JudgeCall(cfg *Config, o *Objective, p *Prompts, response, task string) results.Call {
	return judgeCall(cfg, judgeTemplate(p.Judge[o.Language]), o, response, task)
}

func judgeCall(cfg *Config, tmpl template, o *Objective, response, task string) results.Call {
	toolkit := cfg.JudgeRequest != JudgeJoined
	m := cfg.ObjectiveJudge
	if toolkit && m.Params == nil {
		m.Params = ToolkitJudgeParams()
	}
	return call(m, tmpl.fill(judgeVars(o, response, toolkit)), task, results.RoleJudge, m.Name)
}

// judgeTemplate parses a judge prompt template at its fields.
func judgeTemplate(tmpl string) template {
	return parseTemplate(tmpl, func(name string) bool {
		return name == "question" || name == "response" || name == "correct_answer"
	})
}

// judgeVars are the fields of the judge prompt; toolkit formats a list
// of correct answers as Python's str of a list, as the toolkit's format
// call does.
func judgeVars(o *Objective, response string, toolkit bool) map[string]string {
	ans := o.Answer.String()
	if toolkit && len(o.Answer) > 1 {
		ans = pyList(o.Answer)
	}
	return map[string]string{"question": o.Question, "response": response, "correct_answer": ans}
}

// pyList is Python's str of a list of strings: ['A', 'C'], each string
// as Python's repr (single quotes unless the string holds one and no
// double quote; backslash escapes for the quote, backslash and ASCII
// control characters). Python also escapes the non-ASCII characters it
// deems unprintable (U+00A0, U+200B, ...); pyList keeps them, and the
// public answers hold none. A one-element list reads as a plain string
// (Answer cannot tell them apart); the public answers have none.
func pyList(ss []string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, s := range ss {
		if i > 0 {
			b.WriteString(", ")
		}
		q := byte('\'')
		if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
			q = '"'
		}
		b.WriteByte(q)
		for _, r := range s {
			switch {
			case r == '\\' || r == rune(q):
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\r':
				b.WriteString(`\r`)
			case r == '\t':
				b.WriteString(`\t`)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\x%02x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte(q)
	}
	b.WriteByte(']')
	return b.String()
}

// ReportPrompt is the user message of a subjective task.
func ReportPrompt(s *Subjective) string { return s.Question + citeSuffix[s.Language] }

// rubricHead is the part of a rubric prompt before the report: the same
// for every report of a task.
func rubricHead(s *Subjective, r *Rubric) string {
	var b strings.Builder
	b.WriteString("You are a senior financial research expert. Score the research report below strictly against the expert rubric. ")
	b.WriteString("Give every sub-dimension listed under [sub-dimensions] a score between 0 and its maximum points, following the rubric's score bands, ")
	b.WriteString("and justify each score with reference to the report's content.\n\n")
	b.WriteString("[task]:\n" + s.Question + "\n\n[rubric]:\n" + s.Criteria + "\n\n[sub-dimensions]:\n")
	for _, sd := range r.Subs() {
		fmt.Fprintf(&b, "%s %s (max %g)\n", sd.ID, sd.Name, sd.Points)
	}
	b.WriteString("\n[report]:\n")
	return b.String()
}

// rubricTail ends every rubric prompt.
const rubricTail = "\n\n" + `Output only valid JSON: {"scores": [{"id": "1.1", "score": <number>, "justification": "<string>"}, ...]} with one entry per sub-dimension.`

// rubricPrompt is a rubric prompt from its head and the report.
func rubricPrompt(head, report string) string { return head + report + rubricTail }

// CitationPrompt asks a judge whether each claim's cited source supports
// it.
func CitationPrompt(claims []Claim, refs []Reference) string {
	byN := map[int]Reference{}
	for _, r := range refs {
		byN[r.N] = r
	}
	var b strings.Builder
	b.WriteString("You check whether cited sources support the claims of a research report. For each claim, answer \"supported\" when the cited source states or directly implies it, ")
	b.WriteString("\"unsupported\" when the source does not support or contradicts it, and \"unknown\" when the source cannot be accessed or judged.\n\n[claims]:\n")
	for _, c := range claims {
		r := byN[c.Ref]
		fmt.Fprintf(&b, "%s: %s\n    source [%d]: %s %s\n", c.ID, c.Text, c.Ref, r.Title, r.URL)
	}
	b.WriteString(`
Output only valid JSON: {"verdicts": [{"id": "C1", "verdict": "supported|unsupported|unknown", "reason": "<string>"}, ...]} with one entry per claim.`)
	return b.String()
}

func call(m Model, user, task string, role results.Role, name string) results.Call {
	return results.Call{
		Prompt: results.Prompt{Provider: m.Provider, Model: m.Model, User: user, Params: m.Params},
		Label:  results.Label{Benchmark: Name, Task: task, Role: role, Name: name},
	}
}
