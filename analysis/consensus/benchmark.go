package consensus

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// Name is the benchmark's machine name, also its bundle folder name.
const Name = "finresearchbench2"

// Benchmark is FinResearchBench II; it implements analysis.Benchmark.
type Benchmark struct{}

var _ analysis.Benchmark = Benchmark{}

// Name returns "finresearchbench2".
func (Benchmark) Name() string { return Name }

// Title returns "FinResearchBench II".
func (Benchmark) Title() string { return "FinResearchBench II" }

// Knobs lists the settings Run understands.
func (Benchmark) Knobs() []analysis.Knob { return knobs() }

// A slot says where a call's labels go: judge position, query, product
// and run (0 is the main run).
type slot struct{ j, q, p, run int }

// buildCalls makes the calls of the judges (panel indices) in a fixed
// order: main runs by judge, query and product, then the stability
// reruns. The calls' user messages are left empty: each is a report with
// its query and rubrics, and all of them are several times the reports;
// user writes them (see answerCalls).
func buildCalls(in *Inputs, judges []int) (calls []results.Call, slots []slot, user *userMessages) {
	stab := stabilityJudges(in, judges)
	n := len(judges) * len(in.Queries) * len(in.Panel.Products)
	if in.Panel.Stability != nil {
		n += len(stab) * len(in.Panel.Stability.Items) * (in.Panel.Stability.Runs - 1)
	}
	calls = make([]results.Call, 0, n)
	slots = make([]slot, 0, n)
	user = &userMessages{in: in, tpl: splitTemplate(in.Prompt)}
	tasks := make([][]string, len(in.Queries)) // "query/product" by query and product
	for q := range in.Queries {
		tasks[q] = make([]string, len(in.Panel.Products))
		for p, pr := range in.Panel.Products {
			tasks[q][p] = in.Queries[q].ID + "/" + pr.Name
		}
	}
	mk := func(j, q, p, run int) {
		jd := in.Panel.Judges[judges[j]]
		task := tasks[q][p]
		if run > 0 {
			task += "/run" + strconv.Itoa(run+1)
		}
		calls = append(calls, results.Call{
			Prompt: results.Prompt{Provider: jd.Provider, Model: jd.Model, System: in.Panel.System,
				Params: jd.Params, Sample: run},
			Label: results.Label{Benchmark: Name, Task: task, Role: results.RoleJudge, Name: jd.Name},
		})
		slots = append(slots, slot{j, q, p, run})
	}
	for j := range judges {
		for q := range in.Queries {
			for p := range in.Panel.Products {
				mk(j, q, p, 0)
			}
		}
	}
	for _, j := range stab {
		for _, it := range in.Panel.Stability.Items {
			for run := 1; run < in.Panel.Stability.Runs; run++ {
				mk(j, in.queryIdx[it.Query], in.prodIdx[it.Product], run)
			}
		}
	}
	return calls, slots, user
}

// userMessages writes the judges' user messages.
type userMessages struct {
	in  *Inputs
	tpl template
}

// write returns the message on query q's report of product p; lists
// holds the queries' rubric lists written so far, which it adds to.
func (u *userMessages) write(q, p int, lists map[int]string) string {
	list, ok := lists[q]
	if !ok {
		list = renderRubrics(u.in.rubricsOf(q))
		lists[q] = list
	}
	return u.tpl.fill(u.in.Queries[q].Text, u.in.Queries[q].Category, u.in.report(q, p), list)
}

// callBatch is how many judge calls answerCalls asks at once: enough to
// keep every core and the replay's workers busy, few enough that their
// user messages stay small beside the collection.
var callBatch = 512

// answerCalls answers calls, made by buildCalls, callBatch at a time in
// order, and hands each batch's replies to read with the index of its
// first call: the user messages of a batch are written, answered and
// dropped, and its replies read, before the next batch's are written.
// It returns how many calls were answered; a batch answered short is not
// read, nor any after it.
func answerCalls(ctx context.Context, ans results.Answerer, calls []results.Call, slots []slot, user *userMessages, read func(lo int, replies []results.Reply)) int {
	for lo := 0; lo < len(calls); lo += callBatch {
		batch := calls[lo:min(len(calls), lo+callBatch)]
		written := map[[2]int]string{} // a batch's stability reruns share messages
		lists := map[int]string{}
		for i := range batch {
			sl := slots[lo+i]
			k := [2]int{sl.q, sl.p}
			u, ok := written[k]
			if !ok {
				u = user.write(sl.q, sl.p, lists)
				written[k] = u
			}
			batch[i].Prompt.User = u
		}
		got := ans.Answer(ctx, batch)
		for i := range batch {
			batch[i].Prompt.User = ""
		}
		if len(got) < len(batch) {
			return lo + len(got) // the caller reports the shortfall
		}
		read(lo, got[:len(batch)])
	}
	return len(calls)
}

// stabilityJudges returns the positions in judges (panel indices) of the
// selected stability judges.
func stabilityJudges(in *Inputs, judges []int) []int {
	var out []int
	if in.Panel.Stability == nil {
		return nil
	}
	for pos, j := range judges {
		if slices.Contains(in.Panel.Stability.Judges, in.Panel.Judges[j].Name) {
			out = append(out, pos)
		}
	}
	return out
}

// renderRubrics lists rubrics one a line as "[ID] (dimension) text".
func renderRubrics(rs []Rubric) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteByte('[')
		b.WriteString(r.ID)
		b.WriteString("] (")
		b.WriteString(oneLine(r.Dimension))
		b.WriteString(") ")
		b.WriteString(oneLine(r.Text))
		b.WriteByte('\n')
	}
	return b.String()
}

// oneLine joins the words of s with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// placeholders are the template's placeholders, in the order of the
// values template.fill takes.
var placeholders = [...]string{PlaceQuery, PlaceCategory, PlaceReport, PlaceRubrics}

// A template is the prompt template cut at its placeholders: text[i]
// comes before the placeholder hole[i], and text[len(hole)] ends it.
type template struct {
	text []string
	hole []int // index in placeholders
}

// splitTemplate cuts s at every placeholder, left to right; a
// placeholder's value is not scanned again.
func splitTemplate(s string) template {
	var t template
	start := 0
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			break
		}
		i += j
		k := slices.IndexFunc(placeholders[:], func(p string) bool { return strings.HasPrefix(s[i:], p) })
		if k < 0 {
			i++
			continue
		}
		t.text = append(t.text, s[start:i])
		t.hole = append(t.hole, k)
		i += len(placeholders[k])
		start = i
	}
	t.text = append(t.text, s[start:])
	return t
}

// fill returns the template with its placeholders replaced by the query
// text, category, report and rubric list.
func (t template) fill(query, category, report, rubrics string) string {
	vals := [len(placeholders)]string{query, category, report, rubrics}
	var b strings.Builder
	for i, h := range t.hole {
		b.WriteString(t.text[i])
		b.WriteString(vals[h])
	}
	b.WriteString(t.text[len(t.hole)])
	return b.String()
}

// Collect loads the inputs, asks the selected judges about every report
// (plus the stability reruns), callBatch calls at a time, and parses
// their verdicts. Of the settings it reads only the judges knob. The
// rubrics' and reports' texts are kept in in.Texts when it is not nil.
func (b Benchmark) Collect(ctx context.Context, in analysis.Input) (analysis.Collection, error) {
	if in.Bundle == nil {
		return nil, fmt.Errorf("%s: no bundle", Name)
	}
	return collectFS(ctx, in.Bundle.Inputs(Name), in.Answer, in.Settings, in.Texts)
}

// Score builds every table from a collection under s, whose judges must
// be those collected.
func (b Benchmark) Score(ctx context.Context, c analysis.Collection, s analysis.Settings) (*analysis.Result, error) {
	col, ok := c.(*collection)
	if !ok {
		return nil, fmt.Errorf("%s: score: not a %s collection", Name, Name)
	}
	return col.score(s)
}

// Run collects and scores under in.Settings.
func (b Benchmark) Run(ctx context.Context, in analysis.Input) (*analysis.Result, error) {
	return analysis.Run(ctx, b, in)
}
