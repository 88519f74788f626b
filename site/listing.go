package site

import (
	"iter"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
)

// A Listing is what the pages other than task pages show of one
// benchmark's details: each detail's task, system and score, and each
// task's question as the benchmark page lists it. A Lister makes one.
// Reproduce hands the site a listing per benchmark (Input.Listings) in
// place of the details, which its task pages load (Input.TaskDetails):
// at 8x the full-scale demo the details cut to those fields, one
// analysis.Detail each, held 26 MB of the heap while the outputs were
// written, and their texts 3 MB more; the listings, 8 bytes a detail and
// a task's name and listed question, hold 3.4 MB (heap profiles).
type Listing struct {
	tasks   []listedTask  // in the site's order (see naturalCompare)
	systems []string      // sorted
	scores  []string      // the distinct scores, in the order first met
	entries []listedEntry // by task, then by system, ties in the order added
}

// A listedTask is a task of a Listing; its entries run from the end of
// the previous task's to end.
type listedTask struct {
	name     string
	question string // cut as the benchmark page lists it (see listQuestion)
	end      int32
}

// A listedEntry is a detail of a Listing: its system and its score, by
// their indexes in the listing's tables.
type listedEntry struct{ system, score int32 }

// listQuestion cuts a task's question as the benchmark page's list of
// tasks shows it.
func listQuestion(q string) string {
	c, _ := cut(q, 160)
	return c
}

// group returns where the entries of task i start and end.
func (l *Listing) group(i int) (start, end int) {
	if i > 0 {
		start = int(l.tasks[i-1].end)
	}
	return start, int(l.tasks[i].end)
}

// findTask returns the index of the named task, if the listing has it.
func (l *Listing) findTask(name string) (int, bool) {
	return slices.BinarySearchFunc(l.tasks, name, func(t listedTask, name string) int { return naturalCompare(t.name, name) })
}

// All yields the listed details in the site's order (by task, then by
// system) with their Task, System, Score and, for Question, the question
// of their task as the benchmark page lists it (cut to 160 characters).
func (l *Listing) All() iter.Seq[analysis.Detail] {
	return func(yield func(analysis.Detail) bool) {
		for i, t := range l.tasks {
			start, end := l.group(i)
			for _, e := range l.entries[start:end] {
				if !yield(analysis.Detail{Task: t.name, System: l.systems[e.system], Question: t.question, Score: l.scores[e.score]}) {
					return
				}
			}
		}
	}
}

// A Lister makes the Listing of details added one at a time, in any
// order. It keeps copies of the texts it lists, never the strings it is
// given, so that no larger text they were cut from stays alive. The zero
// Lister is ready for use.
type Lister struct {
	taskAt    map[string]int32 // name -> index in tasks
	tasks     []string
	questions []string // each task's listed question: its detail's with the first system
	firstSys  []int32  // the system of the detail each question is from
	sysAt     map[string]int32
	systems   []string
	scoreAt   map[string]int32
	scores    []string
	added     []addedEntry
}

// An addedEntry is a detail given to a Lister, by the indexes of its
// texts in the Lister's tables.
type addedEntry struct{ task, system, score int32 }

// Add lists d.
func (lr *Lister) Add(d analysis.Detail) {
	if lr.taskAt == nil {
		lr.taskAt, lr.sysAt, lr.scoreAt = map[string]int32{}, map[string]int32{}, map[string]int32{}
	}
	e := addedEntry{system: index(lr.sysAt, &lr.systems, d.System), score: index(lr.scoreAt, &lr.scores, d.Score)}
	// the details come by task as a rule: the previous one's task is
	// compared before the name is hashed
	if n := len(lr.added); n > 0 && lr.tasks[lr.added[n-1].task] == d.Task {
		e.task = lr.added[n-1].task
	} else {
		e.task = index(lr.taskAt, &lr.tasks, d.Task)
	}
	switch {
	case int(e.task) == len(lr.questions):
		lr.questions = append(lr.questions, strings.Clone(listQuestion(d.Question)))
		lr.firstSys = append(lr.firstSys, e.system)
	case d.System < lr.systems[lr.firstSys[e.task]]:
		lr.questions[e.task] = strings.Clone(listQuestion(d.Question))
		lr.firstSys[e.task] = e.system
	}
	lr.added = append(lr.added, e)
}

// index returns the index of text in names, adding a copy of it (to
// names and as at's key) when it is not there yet.
func index(at map[string]int32, names *[]string, text string) int32 {
	if i, ok := at[text]; ok {
		return i
	}
	c := strings.Clone(text)
	i := int32(len(*names))
	at[c] = i
	*names = append(*names, c)
	return i
}

// Listing returns the listing of the details added, and empties lr.
func (lr *Lister) Listing() *Listing {
	l, _ := lr.finish(false)
	return l
}

// finish returns the listing of the details added and, when order is
// true, the index in the order added of each of its entries; it empties
// lr.
func (lr *Lister) finish(order bool) (*Listing, []int32) {
	defer func() { *lr = Lister{} }()
	// the tables' places in the site's order
	taskRank := ranks(lr.tasks, naturalCompare)
	sysRank := ranks(lr.systems, strings.Compare)
	l := &Listing{tasks: make([]listedTask, len(lr.tasks)), systems: make([]string, len(lr.systems)), scores: slices.Clip(lr.scores)}
	for i, name := range lr.tasks {
		l.tasks[taskRank[i]] = listedTask{name: name, question: lr.questions[i]}
	}
	for i, name := range lr.systems {
		l.systems[sysRank[i]] = name
	}
	for i := range lr.added {
		e := &lr.added[i]
		e.task, e.system = taskRank[e.task], sysRank[e.system]
		l.tasks[e.task].end++ // counted, then summed below
	}
	var end int32
	for i := range l.tasks {
		end += l.tasks[i].end
		l.tasks[i].end = end
	}
	at := make([]int32, len(lr.added))
	for i := range at {
		at[i] = int32(i)
	}
	before := func(a, b int32) int {
		x, y := lr.added[a], lr.added[b]
		if x.task != y.task {
			return int(x.task) - int(y.task)
		}
		if x.system != y.system {
			return int(x.system) - int(y.system)
		}
		return int(a) - int(b) // in the order added
	}
	if !slices.IsSortedFunc(at, before) { // they are, as analysis.Result documents, as a rule
		slices.SortFunc(at, before)
	}
	l.entries = make([]listedEntry, len(at))
	for k, i := range at {
		l.entries[k] = listedEntry{system: lr.added[i].system, score: lr.added[i].score}
	}
	if !order {
		at = nil
	}
	return l, at
}

// ranks returns the place of each of names in the order of compare.
func ranks(names []string, compare func(a, b string) int) []int32 {
	by := make([]int32, len(names))
	for i := range by {
		by[i] = int32(i)
	}
	slices.SortFunc(by, func(a, b int32) int { return compare(names[a], names[b]) })
	rank := make([]int32, len(names))
	for r, i := range by {
		rank[i] = int32(r)
	}
	return rank
}
