package consensus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/results"
)

// Input file names inside inputs/finresearchbench2.
const (
	PanelFile   = "panel.json"         // judges, products, stability and human raters
	QueriesFile = "queries.jsonl"      // one Query a line
	ReportsFile = "reports.jsonl"      // one Report a line
	RubricsFile = "rubrics.jsonl"      // one Rubric a line
	PromptFile  = "prompt.txt"         // the batched rubric-judging template
	HumansFile  = "human_labels.jsonl" // optional: one HumanLabel a line
)

// PanelFormat is the format line of panel.json this version reads.
const PanelFormat = "finresearchbench2-panel/1"

// Limits that keep a hostile input from exhausting memory or the product
// bitmasks the filters use.
const (
	maxProducts = 64 // products are bits of a uint64
	maxIDLen    = 64
	maxPrompt   = 1 << 20
)

// Placeholders of the prompt template.
const (
	PlaceQuery    = "{{query}}"
	PlaceCategory = "{{category}}"
	PlaceReport   = "{{report}}"
	PlaceRubrics  = "{{rubrics}}"
)

// A Panel is panel.json: who judges, what is judged and the side studies.
type Panel struct {
	Format   string    `json:"format"`
	Judges   []Judge   `json:"judges"`
	Products []Product `json:"products"`
	// System is the system message of every judge request; empty for none.
	System    string     `json:"system,omitempty"`
	Stability *Stability `json:"stability,omitempty"`
	// Humans name the human raters of human_labels.jsonl, in label order.
	Humans []string `json:"humans,omitempty"`
}

// A Judge is one model of the panel.
type Judge struct {
	Name     string         `json:"name"`
	Provider string         `json:"provider"`
	Model    string         `json:"model"`
	Params   map[string]any `json:"params,omitempty"`
	// Vendor is the company behind the model, for the self-preference check.
	Vendor string `json:"vendor,omitempty"`
}

// A Product is one evaluated deep-research system.
type Product struct {
	Name   string `json:"name"`
	Vendor string `json:"vendor,omitempty"`
}

// Stability configures the repeated-run study: each listed judge answers
// the prompt of each listed report Runs times (samples 0..Runs-1; sample 0
// is the main run).
type Stability struct {
	Runs   int      `json:"runs"`
	Judges []string `json:"judges"`
	Items  []Item   `json:"items"`
}

// An Item names one report: a query and a product.
type Item struct {
	Query   string `json:"query"`
	Product string `json:"product"`
}

// A Query is one line of queries.jsonl.
type Query struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Category string `json:"category"`
}

// A Report is one line of reports.jsonl: a product's report for a query.
type Report struct {
	Query   string `json:"query"`
	Product string `json:"product"`
	Text    string `json:"text"`
}

// A Rubric is one line of rubrics.jsonl: a candidate binary rubric.
type Rubric struct {
	Query     string `json:"query"`
	ID        string `json:"id"`
	Text      string `json:"text"`
	Dimension string `json:"dimension"`
}

// A HumanLabel is one line of human_labels.jsonl: every human rater's
// yes/no on one rubric of one report, in the order of Panel.Humans.
type HumanLabel struct {
	Query   string   `json:"query"`
	Product string   `json:"product"`
	Rubric  string   `json:"rubric"`
	Labels  []string `json:"labels"`
}

// Inputs are the loaded and checked inputs, indexed: queries sorted by
// ID, rubrics of each query sorted by ID, products and judges in panel
// order.
type Inputs struct {
	Panel    Panel
	Queries  []Query
	Rubrics  [][]Rubric // by query index
	Reports  [][]string // by query and product index
	Prompt   string
	humans   []humanItem // the human labels, sorted by query, product and rubric
	queryIdx map[string]int
	prodIdx  map[string]int
	judgeIdx map[string]int
	rubIdx   []map[string]int
	seen     map[string]bool   // keys already read, while loading
	dims     map[string]string // the dimensions read, while loading
	// texts, when not nil, holds the rubrics' and reports' texts in
	// place of Rubrics[q][r].Text and Reports[q][p], which are then
	// empty (see loadTo): rubricText[q] holds query q's rubric texts in
	// rubric order, reportText[q][p] the report of product p.
	texts      analysis.TextStore
	rubricText []analysis.TextRef
	reportText [][]analysis.TextRef
	hasReport  []uint64 // by query, a bit per product, while loading
	pending    pendingTexts
}

// A humanItem is a HumanLabel resolved to indices; labels are 1 yes, 0 no.
type humanItem struct {
	q, p, r int
	labels  []int8
}

// Load reads and checks the inputs in fsys. The first problem found is
// returned as an *results.InputError naming file, line and field.
func Load(fsys fs.FS) (*Inputs, error) { return loadTo(fsys, nil) }

// loadTo is Load that, when texts is not nil, keeps the rubrics' and
// reports' texts in texts as they are read, not in the Inputs: only the
// judges' user messages and the details read them, and at 8x the
// full-scale demo the loaded inputs took 32 MB of the live heap at a
// run's peak with them, 19 MB without (heap profiles). A
// failure of texts is its owner's to report (analysis.TextStore); the
// texts it loses read as empty.
func loadTo(fsys fs.FS, texts analysis.TextStore) (*Inputs, error) {
	in := &Inputs{seen: map[string]bool{}, dims: map[string]string{}, texts: texts}
	if err := readJSONFile(fsys, PanelFile, &in.Panel); err != nil {
		return nil, err
	}
	if err := in.checkPanel(); err != nil {
		return nil, err
	}
	if err := eachLine(fsys, QueriesFile, in.addQuery); err != nil {
		return nil, err
	}
	if len(in.Queries) == 0 {
		return nil, results.Errorf(QueriesFile, 0, "", "no queries")
	}
	slices.SortFunc(in.Queries, func(a, b Query) int { return strings.Compare(a.ID, b.ID) })
	in.queryIdx = map[string]int{}
	for i, q := range in.Queries {
		in.queryIdx[q.ID] = i
	}
	in.Rubrics = make([][]Rubric, len(in.Queries))
	in.Reports = make([][]string, len(in.Queries))
	for i := range in.Reports {
		in.Reports[i] = make([]string, len(in.Panel.Products))
	}
	in.hasReport = make([]uint64, len(in.Queries))
	if texts != nil {
		in.rubricText = make([]analysis.TextRef, len(in.Queries))
		in.reportText = make([][]analysis.TextRef, len(in.Queries))
		for i := range in.reportText {
			in.reportText[i] = make([]analysis.TextRef, len(in.Panel.Products))
		}
		in.pending = pendingTexts{store: texts, query: -1, runs: make([][]analysis.TextRef, len(in.Queries))}
	}
	if err := eachLine(fsys, RubricsFile, in.addRubric); err != nil {
		return nil, err
	}
	in.pending.flush()
	in.rubIdx = make([]map[string]int, len(in.Queries))
	for qi, rs := range in.Rubrics {
		if len(rs) == 0 {
			return nil, results.Errorf(RubricsFile, 0, "query", "query %s has no rubrics", in.Queries[qi].ID)
		}
		if texts != nil {
			in.rubricText[qi] = in.pending.sorted(qi, rs)
		}
		slices.SortFunc(rs, rubricByID)
		in.rubIdx[qi] = make(map[string]int, len(rs))
		for ri, r := range rs {
			in.rubIdx[qi][r.ID] = ri
		}
	}
	if err := eachLine(fsys, ReportsFile, in.addReport); err != nil {
		return nil, err
	}
	for qi, has := range in.hasReport {
		for pi := range in.Panel.Products {
			if has>>pi&1 == 0 {
				return nil, results.Errorf(ReportsFile, 0, "", "no report of product %s for query %s", in.Panel.Products[pi].Name, in.Queries[qi].ID)
			}
		}
	}
	in.hasReport, in.pending = nil, pendingTexts{}
	if err := in.readPrompt(fsys); err != nil {
		return nil, err
	}
	if err := in.checkStability(); err != nil {
		return nil, err
	}
	if err := in.readHumans(fsys); err != nil {
		return nil, err
	}
	in.seen, in.dims = nil, nil
	return in, nil
}

func readJSONFile(fsys fs.FS, name string, v any) error {
	f, err := fsys.Open(name)
	if err != nil {
		return results.Errorf(name, 0, "", "%v", unwrapPath(err))
	}
	defer f.Close() // read-only: a close error cannot lose data
	return results.ReadJSON(f, name, v)
}

// eachLine is results.EachJSONL over file name of fsys.
func eachLine[T any](fsys fs.FS, name string, fn func(line int, v *T) error) error {
	f, err := fsys.Open(name)
	if err != nil {
		return results.Errorf(name, 0, "", "%v", unwrapPath(err))
	}
	defer f.Close() // read-only: a close error cannot lose data
	return results.EachJSONL(f, name, fn)
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validID reports whether s can serve as a query, rubric or report key:
// short, and made of letters, digits and . _ - : only, so that rubric IDs
// are recognisable in a judge's free-text answer.
func validID(s string) bool {
	if s == "" || len(s) > maxIDLen {
		return false
	}
	for _, c := range s {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

func (in *Inputs) checkPanel() error {
	p := &in.Panel
	if p.Format != PanelFormat {
		return results.Errorf(PanelFile, 0, "format", "got %q, want %q", p.Format, PanelFormat)
	}
	if len(p.Judges) == 0 {
		return results.Errorf(PanelFile, 0, "judges", "no judges")
	}
	in.judgeIdx = map[string]int{}
	for i, j := range p.Judges {
		field := fmt.Sprintf("judges[%d]", i)
		switch {
		case strings.TrimSpace(j.Name) == "" || strings.Contains(j.Name, ","):
			return results.Errorf(PanelFile, 0, field+".name", "empty or contains a comma")
		case j.Provider == "":
			return results.Errorf(PanelFile, 0, field+".provider", "empty")
		case j.Model == "":
			return results.Errorf(PanelFile, 0, field+".model", "empty")
		}
		if _, dup := in.judgeIdx[j.Name]; dup {
			return results.Errorf(PanelFile, 0, field+".name", "judge %q repeated", j.Name)
		}
		in.judgeIdx[j.Name] = i
	}
	if len(p.Products) < 2 || len(p.Products) > maxProducts {
		return results.Errorf(PanelFile, 0, "products", "%d products, want 2 to %d", len(p.Products), maxProducts)
	}
	in.prodIdx = map[string]int{}
	for i, pr := range p.Products {
		field := fmt.Sprintf("products[%d].name", i)
		if strings.TrimSpace(pr.Name) == "" {
			return results.Errorf(PanelFile, 0, field, "empty")
		}
		if _, dup := in.prodIdx[pr.Name]; dup {
			return results.Errorf(PanelFile, 0, field, "product %q repeated", pr.Name)
		}
		in.prodIdx[pr.Name] = i
	}
	if len(p.Humans) == 1 {
		return results.Errorf(PanelFile, 0, "humans", "one human rater, want none or at least 2")
	}
	return nil
}

func (in *Inputs) addQuery(line int, q *Query) error {
	switch {
	case !validID(q.ID):
		return results.Errorf(QueriesFile, line, "id", "invalid id %q (letters, digits, . _ - : only, at most %d bytes)", q.ID, maxIDLen)
	case strings.TrimSpace(q.Text) == "":
		return results.Errorf(QueriesFile, line, "text", "empty")
	case strings.TrimSpace(q.Category) == "":
		return results.Errorf(QueriesFile, line, "category", "empty")
	}
	if in.seen[q.ID] {
		return results.Errorf(QueriesFile, line, "id", "query %q repeated", q.ID)
	}
	in.seen[q.ID] = true
	in.Queries = append(in.Queries, *q)
	return nil
}

func (in *Inputs) addRubric(line int, r *Rubric) error {
	qi, ok := in.queryIdx[r.Query]
	switch {
	case !ok:
		return results.Errorf(RubricsFile, line, "query", "unknown query %q", r.Query)
	case !validID(r.ID):
		return results.Errorf(RubricsFile, line, "id", "invalid id %q (letters, digits, . _ - : only, at most %d bytes)", r.ID, maxIDLen)
	case strings.TrimSpace(r.Text) == "":
		return results.Errorf(RubricsFile, line, "text", "empty")
	case strings.TrimSpace(r.Dimension) == "":
		return results.Errorf(RubricsFile, line, "dimension", "empty")
	}
	if in.seen[r.Query+"\x00"+r.ID] {
		return results.Errorf(RubricsFile, line, "id", "rubric %q repeated in query %s", r.ID, r.Query)
	}
	in.seen[r.Query+"\x00"+r.ID] = true
	// The query and dimension strings are shared, one per query and one
	// per distinct dimension, rather than one per rubric (8x the
	// full-scale demo: 115,599 rubrics of 4 dimensions).
	r.Query = in.Queries[qi].ID
	if d, ok := in.dims[r.Dimension]; ok {
		r.Dimension = d
	} else {
		in.dims[r.Dimension] = r.Dimension
	}
	if in.texts != nil {
		in.pending.add(qi, r.Text)
		r.Text = ""
	}
	in.Rubrics[qi] = append(in.Rubrics[qi], *r)
	return nil
}

func (in *Inputs) addReport(line int, r *Report) error {
	qi, ok := in.queryIdx[r.Query]
	if !ok {
		return results.Errorf(ReportsFile, line, "query", "unknown query %q", r.Query)
	}
	pi, ok := in.prodIdx[r.Product]
	if !ok {
		return results.Errorf(ReportsFile, line, "product", "unknown product %q (not in %s)", r.Product, PanelFile)
	}
	if strings.TrimSpace(r.Text) == "" {
		return results.Errorf(ReportsFile, line, "text", "empty")
	}
	if in.hasReport[qi]>>pi&1 == 1 {
		return results.Errorf(ReportsFile, line, "", "second report of product %s for query %s", r.Product, r.Query)
	}
	in.hasReport[qi] |= 1 << pi
	if in.texts != nil {
		in.reportText[qi][pi] = in.texts.Put([]string{r.Text})
		return nil
	}
	in.Reports[qi][pi] = r.Text
	return nil
}

// rubricByID orders a query's rubrics.
func rubricByID(a, b Rubric) int { return strings.Compare(a.ID, b.ID) }

// report returns the text of query q's report of product p.
func (in *Inputs) report(q, p int) string {
	if in.texts == nil {
		return in.Reports[q][p]
	}
	if t := in.texts.Get(in.reportText[q][p]); len(t) == 1 {
		return t[0]
	}
	return "" // lost by the store, whose owner reports it
}

// rubricsOf returns query q's rubrics with their texts.
func (in *Inputs) rubricsOf(q int) []Rubric {
	if in.texts == nil {
		return in.Rubrics[q]
	}
	rs := slices.Clone(in.Rubrics[q])
	if t := in.texts.Get(in.rubricText[q]); len(t) == len(rs) { // else lost by the store, whose owner reports it
		for i := range rs {
			rs[i].Text = t[i]
		}
	}
	return rs
}

// pendingTexts puts the rubric texts into a store as rubrics.jsonl is
// read, a run of lines of one query at a time (a file grouped by query
// makes one run per query), and then each query's texts, in rubric
// order, as one record: what the judges' messages and the details read.
type pendingTexts struct {
	store analysis.TextStore
	query int                  // the query of the run being read, -1 for none
	run   []string             // its texts
	runs  [][]analysis.TextRef // by query: its runs put so far, in file order
}

// add adds the text of the next rubric line, of query q.
func (t *pendingTexts) add(q int, text string) {
	if q != t.query {
		t.flush()
		t.query = q
	}
	t.run = append(t.run, text)
}

// flush puts the run being read.
func (t *pendingTexts) flush() {
	if len(t.run) > 0 {
		t.runs[t.query] = append(t.runs[t.query], t.store.Put(t.run))
		clear(t.run)
		t.run = t.run[:0]
	}
}

// sorted returns the record of query q's rubric texts in the order of
// rs (its rubrics in file order, as read) sorted by ID: the record of
// its one run when that is already in order, else a new one.
func (t *pendingTexts) sorted(q int, rs []Rubric) analysis.TextRef {
	if len(t.runs[q]) == 1 && slices.IsSortedFunc(rs, rubricByID) {
		return t.runs[q][0]
	}
	var texts []string
	for _, ref := range t.runs[q] {
		texts = append(texts, t.store.Get(ref)...)
	}
	texts = append(texts, make([]string, max(0, len(rs)-len(texts)))...) // lost by the store: empty
	order := make([]int, len(rs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return rubricByID(rs[a], rs[b]) })
	out := make([]string, len(rs))
	for i, k := range order {
		out[i] = texts[k]
	}
	return t.store.Put(out)
}

func (in *Inputs) readPrompt(fsys fs.FS) error {
	f, err := fsys.Open(PromptFile)
	if err != nil {
		return results.Errorf(PromptFile, 0, "", "%v", unwrapPath(err))
	}
	defer f.Close() // read-only: a close error cannot lose data
	b, err := io.ReadAll(io.LimitReader(f, maxPrompt+1))
	if err != nil {
		return results.Errorf(PromptFile, 0, "", "%v", err)
	}
	if len(b) > maxPrompt {
		return results.Errorf(PromptFile, 0, "", "template larger than %d bytes", maxPrompt)
	}
	for _, ph := range []string{PlaceReport, PlaceRubrics} {
		if !bytes.Contains(b, []byte(ph)) {
			return results.Errorf(PromptFile, 0, "", "template lacks the %s placeholder", ph)
		}
	}
	in.Prompt = string(b)
	return nil
}

func (in *Inputs) checkStability() error {
	s := in.Panel.Stability
	if s == nil {
		return nil
	}
	if s.Runs < 2 || s.Runs > 100 {
		return results.Errorf(PanelFile, 0, "stability.runs", "%d runs, want 2 to 100", s.Runs)
	}
	for i, j := range s.Judges {
		if _, ok := in.judgeIdx[j]; !ok {
			return results.Errorf(PanelFile, 0, fmt.Sprintf("stability.judges[%d]", i), "unknown judge %q", j)
		}
	}
	seen := map[Item]bool{}
	for i, it := range s.Items {
		field := fmt.Sprintf("stability.items[%d]", i)
		if _, ok := in.queryIdx[it.Query]; !ok {
			return results.Errorf(PanelFile, 0, field+".query", "unknown query %q", it.Query)
		}
		if _, ok := in.prodIdx[it.Product]; !ok {
			return results.Errorf(PanelFile, 0, field+".product", "unknown product %q", it.Product)
		}
		if seen[it] {
			return results.Errorf(PanelFile, 0, field, "item repeated")
		}
		seen[it] = true
	}
	return nil
}

func (in *Inputs) readHumans(fsys fs.FS) error {
	if _, err := fs.Stat(fsys, HumansFile); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if len(in.Panel.Humans) == 0 {
		return results.Errorf(PanelFile, 0, "humans", "%s present but no human raters named", HumansFile)
	}
	seen := map[[3]int]bool{}
	err := eachLine(fsys, HumansFile, func(line int, h *HumanLabel) error {
		qi, ok := in.queryIdx[h.Query]
		if !ok {
			return results.Errorf(HumansFile, line, "query", "unknown query %q", h.Query)
		}
		pi, ok := in.prodIdx[h.Product]
		if !ok {
			return results.Errorf(HumansFile, line, "product", "unknown product %q", h.Product)
		}
		ri, ok := in.rubIdx[qi][h.Rubric]
		if !ok {
			return results.Errorf(HumansFile, line, "rubric", "unknown rubric %q of query %s", h.Rubric, h.Query)
		}
		if len(h.Labels) != len(in.Panel.Humans) {
			return results.Errorf(HumansFile, line, "labels", "%d labels, want one per human rater (%d)", len(h.Labels), len(in.Panel.Humans))
		}
		it := humanItem{q: qi, p: pi, r: ri}
		for i, l := range h.Labels {
			switch l {
			case "yes":
				it.labels = append(it.labels, yes)
			case "no":
				it.labels = append(it.labels, no)
			default:
				return results.Errorf(HumansFile, line, fmt.Sprintf("labels[%d]", i), "got %q, want yes or no", l)
			}
		}
		k := [3]int{qi, pi, ri}
		if seen[k] {
			return results.Errorf(HumansFile, line, "", "item repeated")
		}
		seen[k] = true
		in.humans = append(in.humans, it)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(in.humans, func(a, b humanItem) int {
		if c := a.q - b.q; c != 0 {
			return c
		}
		if c := a.p - b.p; c != 0 {
			return c
		}
		return a.r - b.r
	})
	return nil
}
