package site

import (
	"fmt"
	"html/template"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/finrepro/finrepro/analysis"
)

// A page is what the layout template renders.
type page struct {
	Kind      string // template: index, benchmark, sensitivity, system, task
	Path      string // slash path from the site root
	Root      string // relative path from the page to the site root ("", "../")
	Title     string
	Synthetic bool
	Nav       []link
	Current   string // Href of the current page in Nav, relative to root

	Index  *indexView
	Bench  *benchView
	Tables []*tableView // the sensitivity page
	Groups []sensGroup  // the sensitivity page's tables by benchmark
	System *systemView
	Task   *taskView

	rows   int                  // the row limit of its tables
	remake func(rows int) *page // builds the page again with another limit
}

// The view types below hold what the templates print: plain strings,
// which html/template escapes, and chart options, already escaped JSON.

// A link is a relative link with its text and an optional note.
type link struct {
	Href string // relative to the page
	Text string
	Note string
}

type tableView struct {
	Anchor    string
	Downloads []link // the table's CSV, JSON and XLSX files
	Title     string
	Caption   string
	Headers   []headView
	Rows      [][]cellView
	Notes     []string
	Charts    []chartView
	Sortable  bool
	Matrix    *matrixView // a table of paired comparisons as systems by systems
}

type headView struct {
	Text, Unit, Doc string
	Key             string // the raw field name, for the URL fragment
	Num             bool
}

type cellView struct {
	Text  string
	Sort  string // data-v: the number for sorting; "" for undefined
	Title string // tooltip: the reason an undefined cell is undefined
	Num   bool
	Undef bool
	Best  bool   // bold
	Sec   bool   // underlined
	Href  string // relative link
	Row   bool   // a row header
}

type chartView struct {
	DOMID  string
	DataID string
	Title  string
	Kind   string
	Height int
	JSON   template.JS // escaped JSON (see chartOption)
}

type indexView struct {
	Benchmarks  *tableView
	Systems     *tableView
	Comparisons []*tableView
	Prov        []link // Text: field, Note: value
	Settings    *tableView
	Downloads   []downloadGroup
}

// A downloadGroup is the downloads under one top folder (xlsx, csv, ...).
type downloadGroup struct {
	Name  string
	Open  bool // shown unfolded
	Files []link
}

type benchView struct {
	Result      *analysis.Result
	Problems    []string // the first maxProblems
	MoreProbs   int      // problems not shown
	Published   []*pubView
	Tables      []*tableView
	Comparisons []*tableView
	Tasks       *tableView
}

type systemView struct {
	Name       string
	Summary    *tableView
	Benchmarks []systemBench
}

type systemBench struct {
	Title  string
	Href   string
	Name   string
	Tables []*tableView
	Tasks  *taskLinks // nil when it has no task
	// Provenance says where the system's outputs in this benchmark come
	// from, when the run's provenance has a "system.BENCHMARK.NAME" entry.
	Provenance string
}

// taskLinks are the links to a system's task pages in one benchmark,
// from its details in the benchmark's listing, in their order (links
// made when the page is written, not kept for every detail).
type taskLinks struct {
	s      *site
	bench  string
	system int32 // in the listing's systems
}

// taskLinks returns the links to the task pages of the system name of
// bench, nil when it has no task there.
func (s *site) taskLinks(bench, name string) *taskLinks {
	i, ok := slices.BinarySearch(s.tasks[bench].systems, name)
	if !ok {
		return nil
	}
	return &taskLinks{s: s, bench: bench, system: int32(i)}
}

// Items writes the list items, the bytes the template would write for
// them: a system can have thousands of tasks.
func (ls *taskLinks) Items() template.HTML {
	bt := ls.s.tasks[ls.bench]
	anchor := "#" + ls.s.entryAnchor(ls.bench, bt.systems[ls.system])
	var b []byte
	for i, t := range bt.tasks {
		start, end := bt.group(i)
		for _, e := range bt.entries[start:end] {
			if e.system != ls.system {
				continue
			}
			b = append(b, `<li><a href="`...)
			b = append(b, escapeHref(ls.s.taskHref(ls.bench, i, "../")+anchor)...)
			b = append(b, `">`...)
			b = appendEscaped(b, t.name)
			b = append(b, "</a>"...)
			if score := bt.scores[e.score]; score != "" {
				b = append(b, ": "...)
				b = appendEscaped(b, score)
			}
			b = append(b, "</li>"...)
		}
	}
	return template.HTML(b)
}

type taskView struct {
	Benchmark string
	BenchHref string
	Task      string
	Question  template.HTML // escaped (see escapeText)
	QCut      bool          // the question is cut
	details   []analysis.Detail
	// load, when not nil, loads the full details, which details then
	// only list (see Input.TaskDetails); done is the release of those
	// loaded
	load    func() ([]analysis.Detail, func(), error)
	done    func()
	hrefs   []string // the system page of each detail, or ""
	anchors []string // the element ID of each detail's entry
	limit   int      // escaped bytes each output and reasoning is cut to
	lookup  ExchangeLookup
}

// pages returns every page of the site but the task pages, in a fixed
// order (taskPage makes those, one at a time as they are written). Pages
// with tables can be remade with fewer rows per table, should they come
// out over MaxPage.
func (s *site) pages() []*page {
	var out []*page
	add := func(make func(rows int) *page, rows int) {
		p := make(rows)
		p.rows, p.remake = rows, make
		out = append(out, p)
	}
	add(s.indexPage, maxRows)
	for _, r := range s.in.Results {
		add(func(rows int) *page { return s.benchPage(r, rows) }, maxRows)
	}
	add(s.sensitivityPage, maxRows)
	for _, sys := range s.systems {
		add(func(rows int) *page { return s.systemPage(sys, rows) }, maxSystemRows)
	}
	return out
}

// newPage returns a page at p with the navigation filled in.
func (s *site) newPage(kind, p, title string) *page {
	root := strings.Repeat("../", strings.Count(p, "/"))
	return &page{Kind: kind, Path: p, Root: root, Title: title, Synthetic: s.synthetic, Current: p, Nav: s.nav}
}

// navigation returns the links every page's navigation holds, which the
// pages share and only read.
func (s *site) navigation() []link {
	nav := []link{{Href: "index.html", Text: "Overview"}}
	for _, r := range s.in.Results {
		nav = append(nav, link{Href: s.benchSlug[r.Benchmark] + ".html", Text: title0(r)})
	}
	return append(nav, link{Href: "sensitivity.html", Text: "Sensitivity"})
}

func title0(r *analysis.Result) string {
	if r.Title != "" {
		return r.Title
	}
	return r.Benchmark
}

func (s *site) indexPage(rows int) *page {
	pg := s.newPage("index", "index.html", "finrepro leaderboard")
	v := &indexView{}
	// benchmarks
	bt := &tableView{Anchor: "benchmarks", Title: "Benchmarks", Sortable: true,
		Caption: "The benchmarks reproduced from this bundle, with the system ranked first on each headline table (tied leaders joined by =).",
		Headers: []headView{{Text: "Benchmark"}, {Text: "Leader"}, {Text: "Systems", Num: true}, {Text: "Tasks", Num: true},
			{Text: "Tables", Num: true}, {Text: "Missing replies", Num: true}, {Text: "Problems", Num: true}, {Text: "Data"}}}
	if len(s.in.Published) > 0 {
		bt.Headers = append(bt.Headers, headView{Text: "Published vs computed"})
	}
	for _, r := range s.in.Results {
		leader := strings.Join(leaders(r), " = ")
		data := "recorded"
		if r.Synthetic {
			data = "SYNTHETIC"
		}
		bt.Rows = append(bt.Rows, []cellView{
			{Text: title0(r), Href: s.benchSlug[r.Benchmark] + ".html", Row: true},
			{Text: leader},
			intCell(len(s.systemNames(r))), intCell(len(s.tasks[r.Benchmark].tasks)), intCell(len(r.Tables)),
			intCell(r.Missing), intCell(len(r.Problems)), {Text: data},
		})
		if len(s.in.Published) > 0 {
			line, ok := s.pubLine(r.Benchmark)
			c := cellView{Text: line}
			if ok {
				c.Href = s.benchSlug[r.Benchmark] + ".html#published"
			}
			bt.Rows[len(bt.Rows)-1] = append(bt.Rows[len(bt.Rows)-1], c)
		}
	}
	v.Benchmarks = bt
	// systems across benchmarks
	st := &tableView{Anchor: "systems", Title: "Systems across benchmarks", Sortable: true,
		Caption: "Each system's headline rank in every benchmark it appears in (=2: a rank shared by exactly tied systems), under the name that benchmark uses when it differs.",
		Headers: []headView{{Text: "System"}, {Text: "Benchmarks", Num: true}}}
	for _, r := range s.in.Results {
		st.Headers = append(st.Headers, headView{Text: title0(r), Doc: "rank on the headline table", Num: true})
	}
	// systems in several benchmarks first, then by name
	byCount := slices.Clone(s.systems)
	slices.SortStableFunc(byCount, func(a, b *system) int { return len(b.Names) - len(a.Names) })
	for _, sys := range byCount {
		row := []cellView{{Text: sys.Name, Href: "systems/" + sys.Slug + ".html", Row: true}, intCell(len(sys.Names))}
		for _, r := range s.in.Results {
			name, ok := sys.Names[r.Benchmark]
			if !ok {
				row = append(row, cellView{Text: "–", Num: true, Sort: ""})
				continue
			}
			c := cellView{Num: true}
			if rank, shared, ok := rankOf(r, name); ok {
				c.Text = "#" + itoa(rank) + " of " + itoa(len(r.Ranking))
				if shared {
					c.Text = analysis.FormatRank(rank, true) + " of " + itoa(len(r.Ranking)) // "=2 of 5"
				}
				c.Sort = itoa(rank)
			} else {
				c.Text = "unranked"
			}
			if name != sys.Name {
				c.Text += " (as " + name + ")"
			}
			row = append(row, c)
		}
		st.Rows = append(st.Rows, row)
	}
	v.Systems = st
	for i, t := range s.in.Comparisons {
		if _, ok := s.benchSlug[t.Benchmark]; !ok && len(s.in.Published) == 0 {
			tv := s.tableView(capRows(t, min(rows, maxIndexRows), "the benchmark pages and the downloads have them all"), "cmp"+itoa(i), nil, "", rows)
			v.Comparisons = append(v.Comparisons, tv)
		}
	}
	p := s.in.Provenance
	synthetic := "no"
	if s.synthetic {
		synthetic = "yes: some or all replies come from the simulator"
	}
	v.Prov = []link{
		{Text: "Bundle", Note: p.Bundle}, {Text: "Bundle SHA-256", Note: p.BundleSHA256},
		{Text: "Producer", Note: p.Producer}, {Text: "finrepro version", Note: p.Version},
		{Text: "Cache digest", Note: p.CacheDigest}, {Text: "Synthetic data", Note: synthetic},
	}
	if len(p.Settings) > 0 {
		set := &tableView{Anchor: "settings", Title: "Settings", Caption: "The scoring settings of this run.",
			Headers: []headView{{Text: "Setting"}, {Text: "Value"}}}
		settings := slices.Clone(p.Settings)
		slices.SortStableFunc(settings, func(a, b [2]string) int { return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1]) })
		for _, kv := range settings {
			set.Rows = append(set.Rows, []cellView{{Text: kv[0], Row: true}, {Text: kv[1]}})
		}
		v.Settings = set
	}
	downloads := slices.Clone(s.in.Downloads)
	slices.Sort(downloads)
	for _, d := range slices.Compact(downloads) {
		group, _, nested := strings.Cut(d, "/")
		if !nested {
			group = "other"
		}
		if n := len(v.Downloads); n == 0 || v.Downloads[n-1].Name != group {
			v.Downloads = append(v.Downloads, downloadGroup{Name: group, Open: group == "xlsx" || group == "other"})
		}
		g := &v.Downloads[len(v.Downloads)-1]
		g.Files = append(g.Files, link{Href: "../" + d, Text: d})
	}
	pg.Index = v
	return pg
}

func intCell(n int) cellView { return cellView{Text: itoa(n), Sort: itoa(n), Num: true} }

func (s *site) benchPage(r *analysis.Result, rows int) *page {
	slug := s.benchSlug[r.Benchmark]
	pg := s.newPage("benchmark", slug+".html", title0(r))
	v := &benchView{Result: r, Problems: r.Problems, Published: s.pubViews(r.Benchmark)}
	if len(r.Problems) > maxProblems {
		v.Problems, v.MoreProbs = r.Problems[:maxProblems], len(r.Problems)-maxProblems
	}
	for i, t := range r.Tables {
		v.Tables = append(v.Tables, s.tableView(t, "t"+itoa(i), s.linker(r.Benchmark, ""), "", rows))
	}
	for i, t := range s.in.Comparisons {
		switch _, own := s.benchSlug[t.Benchmark]; {
		case t.Benchmark == r.Benchmark:
			v.Comparisons = append(v.Comparisons, s.tableView(t, "cmp"+itoa(i), s.linker(r.Benchmark, ""), "", rows))
		case !own && t.Col("benchmark") >= 0 && len(s.in.Published) == 0:
			// a table over all benchmarks: this benchmark's rows
			sub := *t
			sub.Rows = nil
			sub.Charts = nil
			for _, row := range t.Rows {
				if c := row[t.Col("benchmark")]; !c.IsNum && c.Text == r.Benchmark {
					sub.Rows = append(sub.Rows, row)
				}
			}
			if len(sub.Rows) > 0 {
				v.Comparisons = append(v.Comparisons, s.tableView(&sub, "cmp"+itoa(i), nil, "", rows))
			}
		}
	}
	if bt := s.tasks[r.Benchmark]; len(bt.entries) > 0 {
		tt := &tableView{Anchor: "tasks", Title: "Tasks", Sortable: true,
			Caption: "Every task with a drill-down page of each system's output and every judge's verdict.",
			Headers: []headView{{Text: "Task"}, {Text: "Systems", Num: true}, {Text: "Question"}}}
		for i, t := range bt.tasks {
			start, end := bt.group(i)
			tt.Rows = append(tt.Rows, []cellView{
				{Text: t.name, Href: s.taskHref(r.Benchmark, i, ""), Row: true},
				intCell(end - start), {Text: t.question},
			})
		}
		if rows < maxRows && len(tt.Rows) > rows {
			// remade to fit MaxPage: tens of thousands of tasks do not
			// fit one page, and each system's page lists its tasks
			tt.Notes = append(tt.Notes, fmt.Sprintf("Only the first %d of %d tasks are listed; each system's page links every task it has.", rows, len(tt.Rows)))
			tt.Rows = tt.Rows[:rows]
		}
		v.Tasks = tt
	}
	pg.Bench = v
	return pg
}

// entryAnchor is the element ID of a system's entry on a task page:
// "s-" and the system's slug, [a-z0-9-].
func (s *site) entryAnchor(bench, system string) string {
	if sys := s.canonical(bench, system); sys != nil {
		return "s-" + sys.Slug
	}
	return "s-" + sanitize(system)
}

// entryHref links the entry of system on the page of task, when bench
// has that task.
func (s *site) entryHref(bench, task, system, root string) (string, bool) {
	bt := s.tasks[bench]
	if bt == nil {
		return "", false
	}
	i, ok := bt.findTask(task)
	if !ok {
		return "", false
	}
	href := s.taskHref(bench, i, root)
	if system != "" && s.canonical(bench, system) != nil {
		href += "#" + s.entryAnchor(bench, system)
	}
	return href, true
}

// taskHref links the page of task i of bench.
func (s *site) taskHref(bench string, i int, root string) string {
	return root + "tasks/" + s.benchSlug[bench] + "/" + s.tasks[bench].slugs[i] + ".html"
}

// linker returns a function linking a table's row-header cells that name
// a system of bench to the system's page.
func (s *site) linker(bench, root string) func(string) string {
	return func(text string) string {
		if sys := s.canonical(bench, text); sys != nil {
			return root + "systems/" + sys.Slug + ".html"
		}
		return ""
	}
}

// A sensGroup is the sweep tables of one benchmark.
type sensGroup struct {
	Anchor, Title string
	Tables        []*tableView
}

func (s *site) sensitivityPage(rows int) *page {
	pg := s.newPage("sensitivity", "sensitivity.html", "Sensitivity")
	group := map[string]int{}
	for i, t := range s.in.Sensitivity {
		tv := s.tableView(t, "s"+itoa(i), s.linker(t.Benchmark, ""), "", rows)
		pg.Tables = append(pg.Tables, tv)
		g, ok := group[t.Benchmark]
		if !ok {
			title := t.Benchmark
			for _, r := range s.in.Results {
				if r.Benchmark == t.Benchmark {
					title = title0(r)
				}
			}
			if title == "" {
				title = "Other"
			}
			g = len(pg.Groups)
			group[t.Benchmark] = g
			pg.Groups = append(pg.Groups, sensGroup{Anchor: "b" + itoa(g), Title: title})
		}
		pg.Groups[g].Tables = append(pg.Groups[g].Tables, tv)
	}
	return pg
}

func (s *site) systemPage(sys *system, rows int) *page {
	pg := s.newPage("system", "systems/"+sys.Slug+".html", sys.Name)
	v := &systemView{Name: sys.Name}
	sum := &tableView{Anchor: "summary", Title: "Ranks", Sortable: true,
		Caption: "The system's headline rank in each benchmark it appears in, with its 95 % rank interval, its score with the score's interval, and its tie group.",
		Headers: []headView{{Text: "Benchmark"}, {Text: "Name there"}, {Text: "Rank", Num: true}, {Text: "Rank interval", Doc: "95 % rank interval (bootstrap of the ranking)"},
			{Text: "Score", Num: true}, {Text: "Score interval", Doc: "95 % interval of the headline score (cluster bootstrap)"}, {Text: "Tie group", Doc: "systems whose difference from the group's best is not significant"}}}
	for _, r := range s.in.Results {
		name, ok := sys.Names[r.Benchmark]
		if !ok {
			continue
		}
		rank := cellView{Text: "unranked", Num: true}
		if k, shared, ok := rankOf(r, name); ok {
			rank = cellView{Text: analysis.FormatRank(k, shared) + " of " + itoa(len(r.Ranking)), Sort: itoa(k), Num: true}
		}
		score := cellView{Text: "n/a", Num: true, Undef: true}
		if x, ok := r.Scores[name]; ok && finite(x) {
			score = cellView{Text: strconv.FormatFloat(x, 'f', 2, 64), Sort: strconv.FormatFloat(x, 'g', -1, 64), Num: true}
		}
		rankIv, scoreIv, tie := headlineInterval(r, name)
		sum.Rows = append(sum.Rows, []cellView{
			{Text: title0(r), Href: "../" + s.benchSlug[r.Benchmark] + ".html", Row: true}, {Text: name}, rank, {Text: rankIv}, score, {Text: scoreIv}, {Text: tie}})
		sb := systemBench{Title: title0(r), Href: "../" + s.benchSlug[r.Benchmark] + ".html", Name: name}
		for _, kv := range s.in.Provenance.Settings {
			if kv[0] == "system."+r.Benchmark+"."+name {
				sb.Provenance = kv[1]
			}
		}
		for i, t := range r.Tables {
			named := rowsNaming(t, name)
			if len(named) == 0 {
				continue
			}
			sub := *t
			sub.Rows = named
			sub.Charts = nil
			sb.Tables = append(sb.Tables, s.tableView(&sub, s.benchSlug[r.Benchmark]+"_t"+itoa(i), nil, "../", rows))
		}
		sb.Tasks = s.taskLinks(r.Benchmark, name)
		v.Benchmarks = append(v.Benchmarks, sb)
	}
	v.Summary = sum
	pg.System = v
	return pg
}

// headlineInterval returns the rank interval ("2–4"), the score
// interval ("41.20–47.90") and the tie group of the system name on r's
// headline table, "–" for what the table does not have.
func headlineInterval(r *analysis.Result, name string) (rank, score, tie string) {
	rank, score, tie = "–", "–", "–"
	t := r.Table(r.Headline)
	if t == nil || len(t.Columns) == 0 {
		return
	}
	var row []analysis.Cell
	for _, rw := range t.Rows {
		if len(rw) > 0 && !rw[0].IsNum && rw[0].Text == name {
			row = rw
			break
		}
	}
	if row == nil {
		return
	}
	pair := func(lo, hi string) string {
		l, h := t.Col(lo), t.Col(hi)
		if l < 0 || h < 0 || !row[l].IsNum || !row[h].IsNum || !finite(row[l].Num) || !finite(row[h].Num) {
			return "–"
		}
		return row[l].Format(t.Columns[l].Decimals) + "–" + row[h].Format(t.Columns[h].Decimals)
	}
	rank = pair("rank_lo", "rank_hi")
	score = pair("cluster_lo", "cluster_hi")
	if score == "–" {
		score = pair("overall_low", "overall_high")
	}
	if c := t.Col("tier"); c >= 0 && !row[c].Undef {
		tie = row[c].Format(t.Columns[c].Decimals)
	}
	return
}

// rankOf returns the headline rank of the system name in r (see
// analysis.CompetitionRanks) and whether another system shares it.
func rankOf(r *analysis.Result, name string) (rank int, shared, ok bool) {
	i := slices.Index(r.Ranking, name)
	if i < 0 {
		return 0, false, false
	}
	ranks := r.Ranks()
	return ranks[i], analysis.Shared(ranks)[i], true
}

// leaders lists the systems ranked first in r: more than one when they
// tie.
func leaders(r *analysis.Result) []string {
	ranks := r.Ranks()
	var out []string
	for i, k := range ranks {
		if k == 1 {
			out = append(out, r.Ranking[i])
		}
	}
	return out
}

// rowsNaming returns the rows of t with a text cell equal to name.
func rowsNaming(t *analysis.Table, name string) [][]analysis.Cell {
	var rows [][]analysis.Cell
	for _, r := range t.Rows {
		if slices.ContainsFunc(r, func(c analysis.Cell) bool { return !c.IsNum && !c.Undef && c.Text == name }) {
			rows = append(rows, r)
		}
	}
	return rows
}

// naturalCompare orders names with runs of digits compared as numbers
// ("2" before "10", "q9" before "q10"), ties broken by plain order.
func naturalCompare(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if isDigit(ca) && isDigit(cb) {
			si, sj := i, j
			for i < len(a) && isDigit(a[i]) {
				i++
			}
			for j < len(b) && isDigit(b[j]) {
				j++
			}
			na, nb := strings.TrimLeft(a[si:i], "0"), strings.TrimLeft(b[sj:j], "0")
			if c := len(na) - len(nb); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			continue
		}
		if ca != cb {
			return int(ca) - int(cb)
		}
		i++
		j++
	}
	if c := (len(a) - i) - (len(b) - j); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// taskPage returns the page of task i of r (see benchTasks).
func (s *site) taskPage(r *analysis.Result, bt *benchTasks, i int) *page {
	task := bt.tasks[i].name
	start, end := bt.group(i)
	p := s.taskHref(r.Benchmark, i, "")
	pg := s.newPage("task", p, task+" – "+title0(r))
	v := &taskView{Benchmark: title0(r), BenchHref: "../../" + s.benchSlug[r.Benchmark] + ".html", Task: task, lookup: s.in.Exchanges}
	if s.in.TaskDetails != nil {
		// loaded when the page is written (see taskView.prepare)
		bench := r.Benchmark
		v.load = func() ([]analysis.Detail, func(), error) { return s.loadTask(bench, bt, i) }
	} else {
		for _, k := range bt.order[start:end] {
			v.details = append(v.details, bt.details[k])
		}
	}
	for _, e := range bt.entries[start:end] {
		system := bt.systems[e.system]
		href := ""
		if sys := s.canonical(r.Benchmark, system); sys != nil {
			href = "../../systems/" + sys.Slug + ".html"
		}
		v.hrefs = append(v.hrefs, href)
		a := s.entryAnchor(r.Benchmark, system)
		if slices.Contains(v.anchors, a) {
			a += "-" + itoa(len(v.anchors))
		}
		v.anchors = append(v.anchors, a)
	}
	pg.Task = v
	return pg
}

// loadTask returns the full details of task i of bt, of benchmark bench,
// through Input.TaskDetails, in the order of the listing: sorted by
// system, ties in the order loaded, as a Lister sorts them.
func (s *site) loadTask(bench string, bt *benchTasks, i int) (_ []analysis.Detail, release func(), err error) {
	task := bt.tasks[i].name
	ds, release, err := s.in.TaskDetails(bench, task)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil && release != nil {
			release()
		}
	}()
	ds = slices.Clone(ds)
	slices.SortStableFunc(ds, func(a, b analysis.Detail) int { return strings.Compare(a.System, b.System) })
	start, end := bt.group(i)
	if len(ds) != end-start {
		return nil, nil, fmt.Errorf("task %s: %d details loaded, %d listed", task, len(ds), end-start)
	}
	for k, e := range bt.entries[start:end] {
		if system := bt.systems[e.system]; ds[k].Task != task || ds[k].System != system {
			return nil, nil, fmt.Errorf("task %s: loaded the details of %s/%s where %s/%s is listed", task, ds[k].Task, ds[k].System, task, system)
		}
	}
	return ds, release, nil
}

// prepare sets what a task page shows that depends on its full
// details: loading them first when the page has a loader, so that only
// the pages being written hold them. The page's texts share a budget,
// so that many long outputs and reasonings still fit in MaxPage after
// escaping.
func (v *taskView) prepare() error {
	if v.load != nil {
		ds, done, err := v.load()
		if err != nil {
			return err
		}
		v.details, v.done = ds, done
	}
	texts := 1
	for _, d := range v.details {
		texts += 1 + len(d.Verdicts)
	}
	v.limit = min(maxText, max(minText, textBudget/texts))
	v.Question, v.QCut = "", false
	for _, d := range v.details {
		if v.Question == "" {
			b, cut := appendEscapedCut(nil, d.Question, v.limit)
			v.Question, v.QCut = template.HTML(b), cut
		}
	}
	return nil
}

// release drops the details a loader gave, and gives them back to it;
// the listed ones stay.
func (v *taskView) release() {
	if v.load != nil {
		v.details = nil
	}
	if v.done != nil {
		v.done()
		v.done = nil
	}
}

// Body writes the table's rows, escaped as html/template escapes text
// and attributes (the golden pages hold the bytes): tables run to
// thousands of cells; BenchmarkWrite times them with the rest of the
// site.
func (t *tableView) Body() template.HTML {
	size := 0
	for _, row := range t.Rows {
		size += len("\n<tr></tr>")
		for _, c := range row {
			size += len(`<td class="num" data-v="" title=""><a href=""><strong></strong></a></td>`) +
				len(c.Sort) + len(c.Title) + len(c.Href) + len(c.Text)
		}
	}
	b := make([]byte, 0, size)
	for _, row := range t.Rows {
		b = append(b, "\n<tr>"...)
		for _, c := range row {
			if c.Row {
				b = append(b, `<th scope="row"`...)
			} else {
				b = append(b, `<td`...)
			}
			if c.Num {
				b = append(b, ` class="num" data-v="`...)
				b = appendEscaped(b, c.Sort)
				b = append(b, '"')
			}
			if c.Title != "" {
				b = append(b, ` title="`...)
				b = appendEscaped(b, c.Title)
				b = append(b, '"')
			}
			b = append(b, '>')
			if c.Href != "" {
				b = append(b, `<a href="`...)
				b = append(b, escapeHref(c.Href)...)
				b = append(b, `">`...)
			}
			switch {
			case c.Best:
				b = append(b, "<strong>"...)
				b = appendEscaped(b, c.Text)
				b = append(b, "</strong>"...)
			case c.Sec:
				b = append(b, "<u>"...)
				b = appendEscaped(b, c.Text)
				b = append(b, "</u>"...)
			default:
				b = appendEscaped(b, c.Text)
			}
			if c.Href != "" {
				b = append(b, "</a>"...)
			}
			if c.Row {
				b = append(b, "</th>"...)
			} else {
				b = append(b, "</td>"...)
			}
		}
		b = append(b, "</tr>"...)
	}
	return template.HTML(b)
}

// Body stands for the content of a task page: the page appends it
// itself where the marker is (see appendTop and appendBody), so that the
// template engine neither copies the long texts nor runs once per task
// page.
func (v *taskView) Body() template.HTML { return partMarker }

// appendTop appends the top of a task page's content: the crumb, the
// heading and the question.
func (v *taskView) appendTop(b []byte) []byte {
	b = append(b, "<p class=\"crumb\"><a href=\""...)
	b = append(b, escapeHref(v.BenchHref)...)
	b = append(b, `">`...)
	b = appendEscaped(b, v.Benchmark)
	b = append(b, "</a> › task</p>\n<h1>Task "...)
	b = appendEscaped(b, v.Task)
	b = append(b, "</h1>"...)
	if v.Question != "" {
		b = append(b, "\n<section aria-labelledby=\"question-h\"><h2 id=\"question-h\">Question</h2><pre class=\"text\">"...)
		b = append(b, v.Question...)
		b = append(b, "</pre>"...)
		if v.QCut {
			b = append(b, "\n<p class=\"note\">The question is cut here; the bundle holds the full text.</p>"...)
		}
		b = append(b, "\n</section>"...)
	}
	return append(b, '\n')
}

// appendBody appends the systems' list and a section per system, with
// its output and its judges' verdicts, the bytes html/template would write
// for them: a task page can hold thousands of verdicts, too many for the
// template engine. Texts are escaped by appendEscaped; the links are
// slugs, [a-z0-9-], which no escaper changes.
func (v *taskView) appendBody(b []byte) []byte {
	b = append(b, "<section aria-labelledby=\"summary-h\"><h2 id=\"summary-h\">Systems</h2>\n<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\"summary-c\">\n<table class=\"sortable\" data-table=\"summary\">\n<caption id=\"summary-c\">Every system's score on this task and its judges' verdicts; each system links to its entry below</caption>\n<thead><tr><th scope=\"col\"><button type=\"button\">System</button></th><th scope=\"col\"><button type=\"button\">Score</button></th><th scope=\"col\"><button type=\"button\">Verdicts</button></th></tr></thead>\n<tbody>"...)
	for i, d := range v.details {
		b = append(b, "\n<tr><th scope=\"row\"><a href=\"#"...)
		b = append(b, v.anchors[i]...)
		b = append(b, `">`...)
		b = appendEscaped(b, d.System)
		b = append(b, `</a></th><td>`...)
		if d.Score != "" {
			b = appendEscaped(b, d.Score)
		} else {
			b = append(b, "not scored"...)
		}
		b = append(b, `</td><td>`...)
		b = appendVerdictSummary(b, d.Verdicts)
		b = append(b, `</td></tr>`...)
	}
	b = append(b, "\n</tbody>\n</table>\n</div>\n</section>"...)
	xs, vx, ox, owned := v.exchanges()
	xid := func(k int) string { return v.anchors[xs.owner[k]] + "-x" + itoa(k) }
	for i, d := range v.details {
		id := func(suffix string) {
			b = append(b, v.anchors[i]...)
			b = append(b, suffix...)
		}
		b = append(b, "\n<section class=\"entry\" id=\""...)
		id(`" aria-labelledby="`)
		id("-h\">\n<h2 id=\"")
		id(`-h">`)
		if v.hrefs[i] != "" {
			b = append(b, `<a href="`...)
			b = append(b, escapeHref(v.hrefs[i])...)
			b = append(b, `">`...)
			b = appendEscaped(b, d.System)
			b = append(b, `</a>`...)
		} else {
			b = appendEscaped(b, d.System)
		}
		b = append(b, "</h2>\n<p class=\"score\">Score: <strong>"...)
		if d.Score != "" {
			b = appendEscaped(b, d.Score)
		} else {
			b = append(b, "not scored"...)
		}
		b = append(b, "</strong></p>\n<h3>Output</h3>\n"...)
		if x := ox[i]; x >= 0 {
			b = append(b, `<p class="note">Written in the exchange <a class="xref" href="#`...)
			b = append(b, xid(x)...)
			b = append(b, `">`...)
			b = appendEscaped(b, keyPrefix(d.Call.Key, 8))
			b = append(b, "</a>.</p>\n"...)
		}
		var cut bool
		if len(d.Output) > foldOutput {
			// a long output waits in a JSON block until its fold opens
			b = append(b, "<details class=\"lazy\" data-text=\""...)
			id("-oj\"><summary>")
			b = strconv.AppendInt(b, int64(utf8.RuneCountInString(d.Output)), 10)
			b = append(b, " characters (shown when opened)</summary><pre class=\"text\"></pre></details>\n<script type=\"application/json\" id=\""...)
			id(`-oj">`)
			b, cut = appendJSONString(b, d.Output, v.limit)
			b = append(b, "</script>"...)
		} else {
			b = append(b, "<pre class=\"text\">"...)
			b, cut = appendEscapedCut(b, d.Output, v.limit)
			b = append(b, "</pre>"...)
		}
		if cut {
			b = append(b, "\n<p class=\"note\">The output is cut here; the bundle holds the full text.</p>"...)
		}
		folded := len(d.Verdicts) > foldVerdicts
		if folded {
			b = append(b, "\n<details class=\"lazy\" data-verdicts=\""...)
			id("-vj\"><summary>")
			b = strconv.AppendInt(b, int64(len(d.Verdicts)), 10)
			b = append(b, " judges' verdicts (shown when opened)</summary>"...)
		}
		b = append(b, "\n<div class=\"scroll\" tabindex=\"0\" role=\"region\" aria-labelledby=\""...)
		id("-v\">\n<table class=\"verdicts\">\n<caption id=\"")
		id("-v\">Judges' verdicts on the output of ")
		b = appendEscaped(b, d.System)
		withX := slices.ContainsFunc(d.Verdicts, func(vd analysis.Verdict) bool { return vd.Call != nil && vd.Call.Key != "" })
		cols := "3"
		b = append(b, "</caption>\n<thead><tr><th scope=\"col\">Judge</th><th scope=\"col\">Verdict</th><th scope=\"col\">Reasoning</th>"...)
		if withX {
			cols = "4"
			b = append(b, "<th scope=\"col\">Exchange</th>"...)
		}
		b = append(b, "</tr></thead>\n<tbody>"...)
		for k, vd := range d.Verdicts {
			if folded {
				break
			}
			b = append(b, "\n<tr><th scope=\"row\">"...)
			b = appendEscaped(b, vd.Judge)
			b = append(b, "</th><td>"...)
			b = appendEscaped(b, vd.Verdict)
			b = append(b, `</td><td><div class="reason">`...)
			b, cut = appendEscapedCut(b, vd.Reasoning, v.limit)
			b = append(b, "</div>"...)
			if cut {
				b = append(b, `<p class="note">Cut here; the bundle holds the full text.</p>`...)
			}
			b = append(b, "</td>"...)
			if withX {
				b = append(b, "<td>"...)
				if x := vx[i][k]; x >= 0 {
					b = append(b, `<a class="xref" href="#`...)
					b = append(b, xid(x)...)
					b = append(b, `">`...)
					b = appendEscaped(b, keyPrefix(vd.Call.Key, 8))
					b = append(b, "</a>"...)
				} else if vd.Call != nil && vd.Call.Key != "" {
					// past maxExchanges: the key, not listed
					b = appendEscaped(b, keyPrefix(vd.Call.Key, 8))
				} else {
					b = append(b, "none"...)
				}
				b = append(b, "</td>"...)
			}
			b = append(b, "</tr>"...)
		}
		if len(d.Verdicts) == 0 {
			b = append(b, "\n<tr><td colspan=\""+cols+"\">No verdicts.</td></tr>"...)
		}
		b = append(b, "\n</tbody>\n</table>\n</div>"...)
		if folded {
			// the rows as JSON, which site.js turns into table rows as
			// text when the fold opens: thousands of rows cost the
			// browser nothing until then
			b = append(b, "</details>\n<script type=\"application/json\" id=\""...)
			id(`-vj">[`)
			for k, vd := range d.Verdicts {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, '[')
				b, _ = appendJSONString(b, vd.Judge, -1)
				b = append(b, ',')
				b, _ = appendJSONString(b, vd.Verdict, -1)
				b = append(b, ',')
				b, cut = appendJSONString(b, vd.Reasoning, v.limit)
				// [judge, verdict, reasoning], then the cut flag (0 or 1)
				// when cut or linked, then the exchange's fold and key
				// (the fold "" for an exchange past maxExchanges)
				x := vx[i][k]
				keyed := vd.Call != nil && vd.Call.Key != ""
				if cut {
					b = append(b, ",1"...)
				} else if keyed {
					b = append(b, ",0"...)
				}
				if keyed {
					fold := ""
					if x >= 0 {
						fold = xid(x)
					}
					b = append(b, ',')
					b, _ = appendJSONString(b, fold, -1)
					b = append(b, ',')
					b, _ = appendJSONString(b, keyPrefix(vd.Call.Key, 8), -1)
				}
				b = append(b, ']')
			}
			b = append(b, "]</script>"...)
		}
		if len(owned[i]) > 0 {
			b = append(b, "\n<h3>Exchanges</h3>\n<p class=\"note\">Each recorded exchange behind this entry: the request and the response as the cache holds them (shown when opened), with what the record says.</p>"...)
			for _, k := range owned[i] {
				b = xs.appendExchange(b, k, xid(k))
			}
		}
		b = append(b, "\n</section>"...)
	}
	if n := len(xs.left); n > 0 {
		b = append(b, "\n<p class=\"note\">"...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, " more exchanges behind this page's verdicts are not listed: a page lists at most "...)
		b = strconv.AppendInt(b, maxExchanges, 10)
		b = append(b, "; the cache holds them (<code>finrepro cache dump</code>).</p>"...)
	}
	if slices.ContainsFunc(xs.xs, func(px pageExchange) bool { return px.embedded }) {
		b = xs.appendBlock(b, "exchanges")
	}
	xs.free()
	return b
}

// exchanges gathers the page's exchanges: vx[i][k] is the index of the
// exchange of verdict k of detail i, ox[i] that of detail i's output (-1
// for none), and owned[i] the exchanges detail i's entry lists (each
// exchange is listed by the first entry naming it). The judges'
// exchanges are looked up and embedded first, then the outputs', as long
// as they fit.
func (v *taskView) exchanges() (xs *exchangeSet, vx [][]int, ox []int, owned [][]int) {
	xs = newExchangeSet(v.lookup)
	vx, ox, owned = make([][]int, len(v.details)), make([]int, len(v.details)), make([][]int, len(v.details))
	own := func(i, k int) {
		if k >= 0 && k == len(xs.owner) {
			xs.owner = append(xs.owner, i)
			owned[i] = append(owned[i], k)
		}
	}
	for i, d := range v.details {
		ox[i] = xs.add(d.Call, "output", d.System)
		own(i, ox[i])
		vx[i] = make([]int, len(d.Verdicts))
		for k, vd := range d.Verdicts {
			vx[i][k] = xs.add(vd.Call, "judge", vd.Judge)
			own(i, vx[i][k])
		}
	}
	for _, ks := range vx {
		for _, k := range ks {
			if k >= 0 {
				xs.fetch(k)
			}
		}
	}
	for _, k := range ox {
		if k >= 0 {
			xs.fetch(k)
		}
	}
	return xs, vx, ox, owned
}

// foldOutput is the longest output, in bytes, a task page shows
// unfolded.
const foldOutput = 8 << 10

// foldVerdicts is the most verdicts an entry of a task page shows as
// table rows; more are folded and drawn when the fold opens.
const foldVerdicts = 40

// appendJSONString appends text as a JSON string safe inside a script
// element (<, > and & escaped, so no "</script" or "<!--" can appear;
// U+2028 and U+2029 too, as in the chart options),
// cut where the encoded text would pass n bytes (n < 0: never), on a rune
// boundary, and reports whether it cut. Runs of bytes that need no escape
// are copied whole, ASCII found eight bytes at a time, and ASCII escapes
// come from a table: the exchanges embedded in task pages made this 11 %
// of a full-scale reproduce when it went rune by rune, and 3.8 % with
// runs found byte by byte (BenchmarkAppendJSONString: 1.6-1.9x faster
// than that on exchange text, min of 15 paired runs).
func appendJSONString(b []byte, text string, n int) ([]byte, bool) {
	b = append(b, '"')
	size := 0
	for i := 0; i < len(text); {
		j := i
		for j < len(text) {
			for j+8 <= len(text) {
				t := text[j : j+8]
				if jsonPlain[t[0]]&jsonPlain[t[1]]&jsonPlain[t[2]]&jsonPlain[t[3]]&
					jsonPlain[t[4]]&jsonPlain[t[5]]&jsonPlain[t[6]]&jsonPlain[t[7]] == 0 {
					break
				}
				j += 8
			}
			if j == len(text) {
				break
			}
			if c := text[j]; c < utf8.RuneSelf {
				if jsonPlain[c] == 0 {
					break
				}
				j++
				continue
			}
			if c := text[j]; c >= 0xe1 && c <= 0xef && c != 0xed && j+2 < len(text) &&
				text[j+1]&0xc0 == 0x80 && text[j+2]&0xc0 == 0x80 &&
				(c != 0xe2 || text[j+1] != 0x80 || text[j+2]&0xfe != 0xa8) {
				// a three-byte rune (most CJK): with these first bytes
				// valid whatever its continuation bytes; not U+2028 or
				// U+2029
				j += 3
				continue
			}
			r, w := utf8.DecodeRuneInString(text[j:])
			if r == utf8.RuneError && w == 1 || r == '\u2028' || r == '\u2029' {
				break
			}
			j += w
		}
		if j > i {
			if n >= 0 && size+j-i > n {
				k := i + n - size
				for k > i && !utf8.RuneStart(text[k]) {
					k--
				}
				return append(append(b, text[i:k]...), '"'), true
			}
			b = append(b, text[i:j]...)
			size += j - i
			i = j
			if i == len(text) {
				break
			}
		}
		// text[i] starts what the run stopped at: an escape
		var e string
		w := 1
		if c := text[i]; c < utf8.RuneSelf {
			e = jsonEscapes[c]
		} else {
			var r rune
			r, w = utf8.DecodeRuneInString(text[i:])
			switch r {
			case '\u2028':
				e = `\u2028`
			case '\u2029':
				e = `\u2029`
			default: // an invalid byte, written as U+FFFD
				e = "\uFFFD"
			}
		}
		if n >= 0 && size+len(e) > n {
			return append(b, '"'), true
		}
		b = append(b, e...)
		size += len(e)
		i += w
	}
	return append(b, '"'), false
}

// jsonPlain is 1 for the ASCII bytes appendJSONString copies as they
// are; jsonEscapes is what it writes for the other ASCII bytes.
var jsonPlain, jsonEscapes = func() (plain [256]uint8, esc [128]string) {
	const hexDigits = "0123456789abcdef"
	for c := range 128 {
		switch {
		case c == '"' || c == '\\':
			esc[c] = `\` + string(rune(c))
		case c == '\n':
			esc[c] = `\n`
		case c == '\r':
			esc[c] = `\r`
		case c == '\t':
			esc[c] = `\t`
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			esc[c] = `\u00` + string(hexDigits[c>>4]) + string(hexDigits[c&15])
		default:
			plain[c] = 1
		}
	}
	return plain, esc
}()

// maxSummaryVerdicts is the most verdicts a task page's summary lists
// for one system; more are counted.
const maxSummaryVerdicts = 4

// appendVerdictSummary appends a system's verdicts in one line ("judge:
// verdict; ..."), or their count when there are many.
func appendVerdictSummary(b []byte, vs []analysis.Verdict) []byte {
	if len(vs) == 0 {
		return append(b, "none"...)
	}
	if len(vs) > maxSummaryVerdicts {
		b = strconv.AppendInt(b, int64(len(vs)), 10)
		return append(b, " verdicts (in the entry)"...)
	}
	for i, vd := range vs {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = appendEscaped(b, vd.Judge)
		b = append(b, ": "...)
		b = appendEscaped(b, vd.Verdict)
	}
	return b
}

// label is the header shown for a column: System for a system,
// product or method column (the paper's word stays in the downloads);
// otherwise its title or field name with underscores as spaces and, when
// it is plain lower-case words, the first letter upper-case.
func label(c analysis.Column) string {
	switch c.Name {
	case "system", "product", "method":
		return "System"
	}
	l := strings.ReplaceAll(c.Header(), "_", " ")
	plain := l != ""
	for _, r := range l {
		plain = plain && (r >= 'a' && r <= 'z' || strings.ContainsRune(" ()%", r))
	}
	if plain {
		l = strings.ToUpper(l[:1]) + l[1:]
	}
	return l
}

// cut shortens text to n runes with an ellipsis.
func cut(text string, n int) (string, bool) {
	text = strings.Join(strings.Fields(text), " ")
	r := []rune(text)
	if len(r) <= n {
		return text, false
	}
	return string(r[:n]) + "…", true
}

// Row limits keep big tables from pushing a page over MaxPage; the
// downloads hold every row.
const (
	maxRows       = 2000 // any table
	maxIndexRows  = 100  // a table over all benchmarks on the index
	maxSystemRows = 200  // a table's rows naming one system, on its page
	maxChartRows  = 1000 // the rows a chart draws
	maxProblems   = 1000 // problems listed on a benchmark page
)

// capRows returns t cut to n rows, with a note saying where the rest is.
func capRows(t *analysis.Table, n int, rest string) *analysis.Table {
	if len(t.Rows) <= n {
		return t
	}
	c := *t
	c.Rows = t.Rows[:n]
	c.Notes = append(slices.Clone(t.Notes), fmt.Sprintf("Only the first %d of %d rows are shown; %s.", n, len(t.Rows), rest))
	return &c
}

// tableView renders t for a page; anchor prefixes the table's chart IDs
// so that they are unique on the page. link, when not nil, links row
// header cells (the first column) to a page. A cell of a task column
// (task, company, query) naming a task of the table's benchmark links
// to that task's page, at the entry of the row's system (system, method
// or product column) when there is one; root leads from the page to the
// site root.
func (s *site) tableView(t *analysis.Table, anchor string, linkRow func(string) string, root string, rows int) *tableView {
	full, drawn := t, t // drawn: the rows charts draw
	if len(t.Rows) > maxChartRows {
		c := *t
		c.Rows = t.Rows[:maxChartRows]
		drawn = &c
	}
	t = capRows(t, rows, "the CSV, JSON and XLSX downloads have them all")
	v := &tableView{Anchor: anchor, Title: t.Title, Caption: t.Caption, Notes: t.Notes, Sortable: len(t.Rows) > 1, Matrix: pairMatrix(full)}
	if v.Title == "" {
		v.Title = t.Name
	}
	marks := make([][]analysis.Mark, len(t.Columns))
	for j, c := range t.Columns {
		num := false
		for _, r := range t.Rows {
			num = num || r[j].IsNum || r[j].Undef
		}
		doc := c.Doc
		if label(c) != c.Header() {
			doc = strings.TrimPrefix(doc+" (field "+c.Name+")", " ")
		}
		v.Headers = append(v.Headers, headView{Text: label(c), Unit: c.Unit, Doc: doc, Key: c.Name, Num: num})
		if len(t.Rows) > 1 {
			// one row is best at everything: no marks
			marks[j] = t.Marks(j)
		} else {
			marks[j] = make([]analysis.Mark, len(t.Rows))
		}
	}
	taskCol, sysCol := -1, -1
	if s.tasks[t.Benchmark] != nil {
		for j, c := range t.Columns {
			switch c.Name {
			case "task", "company", "query":
				if taskCol < 0 {
					taskCol = j
				}
			case "system", "method", "product":
				if sysCol < 0 {
					sysCol = j
				}
			}
		}
	}
	for i, r := range t.Rows {
		row := make([]cellView, len(r))
		for j, c := range r {
			cv := cellView{Text: c.Format(c.DecimalsIn(t.Columns[j])), Best: marks[j][i] == analysis.Best, Sec: marks[j][i] == analysis.Second, Row: j == 0}
			switch {
			case c.IsNum && !finite(c.Num):
				cv.Text, cv.Undef, cv.Num, cv.Title = "n/a", true, true, "not a number"
			case c.Undef:
				cv.Undef, cv.Num, cv.Title = true, true, c.Text
			case c.IsNum:
				cv.Num = true
				cv.Sort = strconv.FormatFloat(c.Num, 'g', -1, 64)
			}
			if j == 0 && linkRow != nil && !c.IsNum && !c.Undef {
				cv.Href = linkRow(c.Text)
			}
			if j == taskCol && !c.Undef {
				system := ""
				if sysCol >= 0 && !r[sysCol].IsNum {
					system = r[sysCol].Text
				}
				if href, ok := s.entryHref(t.Benchmark, c.Format(0), system, root); ok {
					cv.Href = href
				}
			}
			row[j] = cv
		}
		v.Rows = append(v.Rows, row)
	}
	for _, d := range []string{"csv/" + t.Benchmark + "/" + t.Name + ".csv", "json/" + t.Benchmark + "/" + t.Name + ".json", "xlsx/" + t.Benchmark + ".xlsx"} {
		if s.downloads[d] {
			v.Downloads = append(v.Downloads, link{Href: root + "../" + d, Text: strings.ToUpper(path.Ext(d)[1:]), Note: d})
		}
	}
	if len(t.Charts) > 0 && drawn != full {
		v.Notes = append(v.Notes, fmt.Sprintf("The charts draw the first %d of %d rows.", maxChartRows, len(full.Rows)))
	}
	for _, c := range t.Charts {
		opt, err := chartOption(drawn, c)
		dom := anchor + "_" + c.ID
		if err != nil {
			s.fail(fmt.Errorf("benchmark %s: %w", t.Benchmark, err))
			continue
		}
		h := 360
		if c.Kind == analysis.Heatmap || c.Kind == analysis.Mirror {
			h = max(h, 140+28*len(drawn.Rows))
		}
		v.Charts = append(v.Charts, chartView{DOMID: "chart_" + dom, DataID: "data_" + dom, Title: c.Title,
			Kind: string(c.Kind), Height: h, JSON: template.JS(opt)})
	}
	return v
}

// HasCharts reports whether the page draws any chart, so that pages
// without charts do not load the ECharts script.
func (p *page) HasCharts() bool {
	var tables []*tableView
	if p.Bench != nil {
		tables = append(tables, p.Bench.Tables...)
		tables = append(tables, p.Bench.Comparisons...)
	}
	if p.Index != nil {
		tables = append(tables, p.Index.Comparisons...)
	}
	tables = append(tables, p.Tables...)
	if p.System != nil {
		for _, b := range p.System.Benchmarks {
			tables = append(tables, b.Tables...)
		}
	}
	for _, t := range tables {
		if len(t.Charts) > 0 {
			return true
		}
	}
	return false
}

// hrefTemplate is html/template's escaping of a link, for escapeHref.
var hrefTemplate = template.Must(template.New("").Parse(`<a href="{{.}}">`))

// escapeHref escapes a relative link exactly as html/template escapes a
// string printed as the value of an href attribute. The site's own links
// (slugs, "../", ".html", "#") pass unchanged; any other is escaped by
// html/template itself.
func escapeHref(href string) string {
	plain := true
	for i := 0; i < len(href) && plain; i++ {
		c := href[i]
		plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '/' || c == '#'
	}
	if plain {
		return href
	}
	var b strings.Builder
	if err := hrefTemplate.Execute(&b, href); err != nil {
		return "#ZgotmplZ"
	}
	return strings.TrimSuffix(strings.TrimPrefix(b.String(), `<a href="`), `">`)
}

// htmlEscapes is what html/template writes in HTML text for each byte
// it escapes; other bytes ("" here) pass unchanged, whatever the UTF-8.
var htmlEscapes = [256]string{0: "\uFFFD", '"': "&#34;", '&': "&amp;", '\'': "&#39;", '+': "&#43;", '<': "&lt;", '>': "&gt;"}

// escapable is 1 for the bytes htmlEscapes escapes; maxEscape is the
// longest escape.
var escapable, maxEscape = func() (t [256]uint8, longest int) {
	for c, r := range htmlEscapes {
		if r != "" {
			t[c] = 1
			longest = max(longest, len(r))
		}
	}
	return t, longest
}()

// indexEscapable returns the index of the first byte of text that
// htmlEscapes escapes, or -1. Such bytes are rare in the texts, so it
// tests eight bytes per branch: three times as fast as strings.IndexAny
// on a task page's texts (BenchmarkAppendEscapedCut).
func indexEscapable(text string) int {
	i := 0
	for ; i+8 <= len(text); i += 8 {
		t := text[i : i+8]
		if escapable[t[0]]|escapable[t[1]]|escapable[t[2]]|escapable[t[3]]|
			escapable[t[4]]|escapable[t[5]]|escapable[t[6]]|escapable[t[7]] != 0 {
			break
		}
	}
	for ; i < len(text); i++ {
		if escapable[text[i]] != 0 {
			return i
		}
	}
	return -1
}

// escapeText escapes text exactly as html/template escapes a string
// printed in HTML text: a task page's long texts skip the template's
// escaper, which reads them rune by rune.
func escapeText(text string) template.HTML {
	if indexEscapable(text) >= 0 {
		return template.HTML(appendEscaped(make([]byte, 0, len(text)+len(text)/8+16), text))
	}
	return template.HTML(text)
}

// appendEscaped appends text escaped as escapeText does, copying each run
// of bytes between escapes in one append.
func appendEscaped(b []byte, text string) []byte {
	for {
		i := indexEscapable(text)
		if i < 0 {
			return append(b, text...)
		}
		b = append(b, text[:i]...)
		b = append(b, htmlEscapes[text[i]]...)
		text = text[i+1:]
	}
}

// appendEscapedCut appends text escaped as escapeText does, cut where
// the escaped form would pass n bytes, on a rune boundary, and reports
// whether it cut: appendEscaped of text[:escapedCut(text, n)].
func appendEscapedCut(b []byte, text string, n int) ([]byte, bool) {
	if len(text) <= n/maxEscape {
		// even every byte escaped fits
		return appendEscaped(b, text), false
	}
	i, cut := escapedCut(text, n)
	return appendEscaped(b, text[:i]), cut
}

// escapedCut returns where to cut text so that its escaped form is at
// most n bytes: before the byte whose escape would pass n, moved back to
// the start of its rune; and whether that is before the end of text.
func escapedCut(text string, n int) (int, bool) {
	n = max(n, 0)
	size, i := 0, 0 // size is the escaped size of text[:i]
	for {
		run := indexEscapable(text[i:]) // bytes that stay as they are
		if run < 0 {
			run = len(text) - i
		}
		if size+run > n {
			i += n - size
			break
		}
		size += run
		i += run
		if i == len(text) {
			return i, false
		}
		if size += len(htmlEscapes[text[i]]); size > n {
			break
		}
		i++
	}
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	return i, true
}
