package consensus

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// A collection is what Collect gathered: the inputs and every collected
// judge's parsed labels. Score only reads it.
type collection struct {
	in *Inputs
	// judges are the collected judges' panel indices, in panel order.
	judges []int
	ls     labelSet
	// reruns[slot without run][run] are the stability labels (run 0 is
	// the main run's, read from ls).
	reruns map[slot][][]int8
	// problems are the parse findings and the missing-reply note,
	// unsorted.
	problems  []string
	missing   int
	synthetic bool
	// calls[j][q][p] is the main-run exchange of judge j (an index in
	// judges) on query q's report of product p, for the details.
	calls [][][]*analysis.Call
}

// RunFS is Run over an inputs folder given as a file system: it loads and
// checks the inputs, asks every judge about every report (plus the
// stability reruns), parses the verdicts and builds every table. Its
// result's details are in Details.
func RunFS(ctx context.Context, fsys fs.FS, ans results.Answerer, s analysis.Settings) (*analysis.Result, error) {
	c, err := collectFS(ctx, fsys, ans, s, nil)
	if err != nil {
		return nil, err
	}
	res, err := c.score(s)
	if err != nil {
		return nil, err
	}
	res.Details, res.LazyDetails = res.AllDetails(), nil
	if res.Details == nil {
		res.Details = []analysis.Detail{}
	}
	return res, nil
}

// collectFS loads the inputs in fsys, their texts into texts unless it
// is nil (see loadTo), answers the calls of the judges s selects and
// parses the replies.
func collectFS(ctx context.Context, fsys fs.FS, ans results.Answerer, s analysis.Settings, texts analysis.TextStore) (*collection, error) {
	in, err := loadTo(fsys, texts)
	if err != nil {
		return nil, err
	}
	// Every setting is checked before any call is made, although only
	// the judges change the calls: a bad value must not cost a recording.
	cfg, err := parseSettings(s, in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	judges := cfg.judges
	calls, slots, user := buildCalls(in, judges)
	c := &collection{in: in, judges: judges, reruns: map[slot][][]int8{}}
	np := len(in.Panel.Products)
	c.ls = labelSet{np: np, lab: make([][][]int8, len(judges))}
	for j := range judges {
		c.ls.lab[j] = make([][]int8, len(in.Queries))
		for q, rs := range in.Rubrics {
			c.ls.lab[j][q] = make([]int8, len(rs)*np)
		}
	}
	r := c.reader(calls, slots)
	if n := answerCalls(ctx, ans, calls, slots, user, r.read); n < len(calls) {
		return nil, fmt.Errorf("%s: answerer gave %d replies for %d calls", Name, n, len(calls))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	r.finish()
	return c, nil
}

// reasons returns "[ID] text" of every rubric of a query, the details'
// reasoning, as substrings of one string.
func reasons(rs []Rubric) []string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteByte('[')
		b.WriteString(r.ID)
		b.WriteString("] ")
		b.WriteString(r.Text)
	}
	all, at := b.String(), 0
	out := make([]string, len(rs))
	for r, rub := range rs {
		end := at + len("[] ") + len(rub.ID) + len(rub.Text)
		out[r] = all[at:end]
		at = end
	}
	return out
}

// A reader parses replies into a collection's labels, a batch at a time
// in call order, noting problems.
type reader struct {
	c     *collection
	calls []results.Call
	slots []slot
	ids   [][]string // rubric ids by query
	runs  int
	// missing counts the calls read without a reply.
	missing int
}

func (c *collection) reader(calls []results.Call, slots []slot) *reader {
	in, np := c.in, c.ls.np
	r := &reader{c: c, calls: calls, slots: slots, ids: make([][]string, len(in.Queries))}
	for q, rs := range in.Rubrics {
		r.ids[q] = make([]string, len(rs))
		for k, rub := range rs {
			r.ids[q][k] = rub.ID
		}
	}
	c.calls = make([][][]*analysis.Call, len(c.ls.lab))
	for j := range c.calls {
		c.calls[j] = make([][]*analysis.Call, len(in.Queries))
		for q := range c.calls[j] {
			c.calls[j][q] = make([]*analysis.Call, np)
		}
	}
	if in.Panel.Stability != nil {
		r.runs = in.Panel.Stability.Runs
	}
	return r
}

// read parses the replies of the calls from the lo-th on.
func (r *reader) read(lo int, replies []results.Reply) {
	c, in, np, ids := r.c, r.c.in, r.c.ls.np, r.ids
	slots, calls := r.slots[lo:lo+len(replies)], r.calls[lo:lo+len(replies)]
	// Parse in parallel; each reply's labels and problems go to its own
	// slot, so the result does not depend on scheduling.
	labels := make([][]int8, len(slots))
	probs := make([][]string, len(slots))
	parallel(len(slots), func(i int) {
		if replies[i].Err == nil {
			q := slots[i].q
			labels[i], probs[i] = parseVerdicts(replies[i].Text, ids[q], in.rubIdx[q])
		}
	})
	for i, sl := range slots {
		rep := replies[i]
		c.synthetic = c.synthetic || rep.Synthetic()
		labs := labels[i]
		if rep.Err != nil {
			r.missing++
			labs = make([]int8, len(ids[sl.q]))
			for k := range labs {
				labs[k] = missing
			}
		}
		for _, pr := range probs[i] {
			c.problems = append(c.problems, fmt.Sprintf("judge %s on %s: %s", calls[i].Label.Name, calls[i].Label.Task, pr))
		}
		if sl.run == 0 {
			c.calls[sl.j][sl.q][sl.p] = analysis.CallOf(rep, calls[i].Prompt.Sample)
			dst := c.ls.lab[sl.j][sl.q]
			for k, l := range labs {
				dst[k*np+sl.p] = l
			}
			continue
		}
		key := slot{sl.j, sl.q, sl.p, 0}
		if c.reruns[key] == nil {
			c.reruns[key] = make([][]int8, r.runs)
		}
		c.reruns[key][sl.run] = labs
	}
}

// finish notes the calls read without a reply.
func (r *reader) finish() {
	c := r.c
	c.missing = r.missing
	if r.missing > 0 {
		c.problems = append(c.problems, fmt.Sprintf("%d of %d judge calls had no reply; their rubrics count as invalid", r.missing, len(r.calls)))
	}
}

// score computes every table under s, whose judges must be the collected
// ones. It does not modify c.
func (c *collection) score(s analysis.Settings) (*analysis.Result, error) {
	cfg, err := parseSettings(s, c.in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	if !slices.Equal(cfg.judges, c.judges) {
		return nil, fmt.Errorf("%s: knob %s: the collection holds other judges' labels", Name, KnobJudges)
	}
	return newAnalysis(c, cfg).result(), nil
}
