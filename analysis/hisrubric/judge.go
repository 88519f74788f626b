package hisrubric

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A Stage is one kind of judge request.
type Stage string

// Judge stages. Claims and Criteria are made once per company from the
// ground truths; the others once per report.
const (
	StageClaims   Stage = "claims"   // extract 3-5 claims from each ground truth
	StageCriteria Stage = "criteria" // write a 10-point criterion from each ground truth
	StageAccuracy Stage = "accuracy" // say whether each prediction matches
	StageCoverage Stage = "coverage" // say which claims each prediction covers
	StageGrading  Stage = "grading"  // award criterion points to each prediction
)

// A Batch is the JSON payload of a judge request: every item of one
// stage for one company or report. Judges never see the system's name.
type Batch struct {
	Stage    Stage       `json:"stage"`
	Company  string      `json:"company"`
	Language string      `json:"language"`
	Items    []BatchItem `json:"items"`
}

// A BatchItem is one item of a Batch.
type BatchItem struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Truth      string   `json:"truth,omitempty"`
	Prediction string   `json:"prediction,omitempty"`
	Claims     []string `json:"claims,omitempty"`
	Criterion  []Point  `json:"criterion,omitempty"`
}

// A Point is one line of a grading criterion.
type Point struct {
	Point string  `json:"point"`
	Max   float64 `json:"max"`
}

// A Reply is a judge's answer to a Batch.
type Reply struct {
	Items []ReplyItem `json:"items"`
}

// A ReplyItem answers one BatchItem; which fields are set depends on the
// stage.
type ReplyItem struct {
	ID        string   `json:"id"`
	Verdict   string   `json:"verdict,omitempty"`   // accuracy: correct or incorrect
	Reason    string   `json:"reason,omitempty"`    // accuracy, coverage, grading
	Claims    []string `json:"claims,omitempty"`    // claims
	Criterion []Point  `json:"criterion,omitempty"` // criteria
	Covered   []bool   `json:"covered,omitempty"`   // coverage: one per claim
	Points    *float64 `json:"points,omitempty"`    // grading: points awarded
}

var instructions = map[Stage]string{
	StageClaims: "For each item, extract three to five key claims from the ground truth (three for a short truth, five for a long one). " +
		`Reply with JSON only: {"items":[{"id":"...","claims":["...","..."]}]}.`,
	StageCriteria: "Act as a financial professor. For each item, write a 10-point scoring criterion from the ground truth that breaks the ideal answer into its core analytical components; the points must sum to 10. " +
		`Reply with JSON only: {"items":[{"id":"...","criterion":[{"point":"...","max":4}]}]}.`,
	StageAccuracy: "For each item, decide whether the predicted answer matches the ground truth. Numbers may be formatted differently and use other units or multipliers but must agree in value; text must state the same fact. The prediction may say more than the truth. " +
		`Reply with JSON only: {"items":[{"id":"...","verdict":"correct","reason":"..."}]} with verdict "correct" or "incorrect".`,
	StageCoverage: "For each item, decide for every claim whether the predicted answer adequately covers it. " +
		`Reply with JSON only: {"items":[{"id":"...","covered":[true,false],"reason":"..."}]} with one boolean per claim, in order.`,
	StageGrading: "Act as a financial professor. For each item, grade the predicted answer against the criterion and award points (0 to the criterion's total). " +
		`Reply with JSON only: {"items":[{"id":"...","points":6,"reason":"..."}]}.`,
}

const judgeSystem = "You are an expert financial analyst grading research reports on listed companies against verified ground truth."

// The json block of a judge request's user message.
const promptOpen, promptClose = "\n\n```json\n", "\n```\n"

// marshal is json.Marshal for the values of a judge request: strings and
// the finite numbers of criteria (read from JSON, which has no NaN or
// infinity), so it cannot fail.
func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("hisrubric: " + err.Error())
	}
	return string(b)
}

// judgePrompt writes the user message of a judge request.
func judgePrompt(b *Batch) string {
	return instructions[b.Stage] + promptOpen + marshal(b) + promptClose
}

// An itemJSON is a BatchItem as json.Marshal writes it, cut around its
// prediction: head is the id, question and truth, tail the claims,
// criterion and closing brace.
type itemJSON struct{ head, tail string }

// newItemJSON writes it, but for its prediction.
func newItemJSON(it *BatchItem) itemJSON {
	head := marshal(BatchItem{ID: it.ID, Question: it.Question, Truth: it.Truth})
	tail := marshal(BatchItem{Claims: it.Claims, Criterion: it.Criterion})
	// tail is {"id":"","question":""...}: keep what follows the question.
	tail = tail[len(`{"id":"","question":""`):]
	return itemJSON{head[:len(head)-1], tail}
}

// gradingPrompt is judgePrompt of a batch of stage st for a company
// named company, in language, whose k-th item is parts[items[k]]
// around the prediction pred(items[k]). A company's items go to the
// judge once for each system: their parts are encoded once, and the
// message is written into a string sized for it (the messages are
// FinDeepResearch's bulk of bytes: BenchmarkBundle/findeepresearch).
func gradingPrompt(st Stage, company, language string, parts []itemJSON, items []int, pred func(i int) string) string {
	n := len(instructions[st]) + len(promptOpen) + len(promptClose) + 64 + 2*(len(company)+len(language))
	for _, i := range items {
		n += len(parts[i].head) + len(parts[i].tail) + 16 + len(pred(i))*9/8
	}
	var w strings.Builder
	w.Grow(n)
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp) // escapes as json.Marshal does
	str := func(s string) {
		tmp.Reset()
		_ = enc.Encode(s)                  // a string always encodes
		w.Write(tmp.Bytes()[:tmp.Len()-1]) // without Encode's newline
	}
	w.WriteString(instructions[st])
	w.WriteString(promptOpen)
	w.WriteString(`{"stage":`)
	str(string(st))
	w.WriteString(`,"company":`)
	str(company)
	w.WriteString(`,"language":`)
	str(language)
	w.WriteString(`,"items":[`)
	for k, i := range items {
		if k > 0 {
			w.WriteByte(',')
		}
		w.WriteString(parts[i].head)
		if p := pred(i); p != "" {
			w.WriteString(`,"prediction":`)
			str(p)
		}
		w.WriteString(parts[i].tail)
	}
	w.WriteString("]}")
	w.WriteString(promptClose)
	return w.String()
}

// ParseBatch reads the Batch of a judge request's user message.
func ParseBatch(user string) (*Batch, error) {
	i := strings.Index(user, "```json\n")
	j := strings.LastIndex(user, "\n```")
	if i < 0 || j < i+8 {
		return nil, errors.New("hisrubric: judge request without a json block")
	}
	var b Batch
	if err := json.Unmarshal([]byte(user[i+8:j]), &b); err != nil {
		return nil, fmt.Errorf("hisrubric: judge request: %w", err)
	}
	return &b, nil
}

// MaxReply caps the bytes of a judge reply the parser reads.
const MaxReply = 4 << 20

// ParseReply reads a judge reply: a JSON object with an "items" array,
// possibly inside a code fence or surrounded by prose.
func ParseReply(text string) (*Reply, error) {
	if len(text) > MaxReply {
		return nil, fmt.Errorf("parse reply: longer than %d bytes", MaxReply)
	}
	i := strings.Index(text, "{")
	j := strings.LastIndex(text, "}")
	if i < 0 || j < i {
		return nil, errors.New("parse reply: no JSON object")
	}
	if r, ok := readReply(text[i : j+1]); ok {
		return r, nil
	}
	var r Reply
	if err := json.Unmarshal([]byte(text[i:j+1]), &r); err != nil {
		return nil, fmt.Errorf("parse reply: %w", err)
	}
	if r.Items == nil {
		return nil, errors.New(`parse reply: no "items"`)
	}
	return &r, nil
}

// byID indexes a reply's items by id; the first of repeated ids wins.
func (r *Reply) byID() map[string]*ReplyItem {
	m := make(map[string]*ReplyItem, len(r.Items))
	for i := range r.Items {
		if _, ok := m[r.Items[i].ID]; !ok {
			m[r.Items[i].ID] = &r.Items[i]
		}
	}
	return m
}

// VerdictScore reads an accuracy verdict: 1 for correct, 0 for
// incorrect; ok is false for anything else.
func VerdictScore(v string) (score float64, ok bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(v), ".!\"'")) {
	case "correct", "yes", "true", "match", "1":
		return 1, true
	case "incorrect", "no", "false", "mismatch", "wrong", "0":
		return 0, true
	}
	return 0, false
}

// question describes an item's cell for a judge.
func question(s *Structure, it *Item, t Truth, p Params) string {
	sub := s.Subsection(it.Subsection)
	row := it.Row
	if it.FreeRow() {
		row = t.Row
	}
	q := fmt.Sprintf("S%s %s | %s | %s", sub.ID, sub.Title, row, p.Resolve(it.Column))
	if ft, ok := facetText[it.Facet]; ok {
		q += " | " + ft
	} else if it.Facet != "" {
		q += " | " + it.Facet
	}
	return q
}

var facetText = map[string]string{
	"date":        "the window's date",
	"car":         "the cumulative abnormal return (CAR)",
	"summary":     "the summary",
	"judgement":   "the analytical judgement",
	"conclusion":  "the conclusion",
	"description": "the description",
}
