package site

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

// MaxPage is the size no page may exceed; the shared ECharts script is
// not a page.
const MaxPage = 2 << 20

// minRows is the fewest rows per table a page is cut to when it would
// exceed MaxPage.
const minRows = 20

// Text limits on task pages: all the texts of a page (question, outputs,
// reasonings) share textBudget bytes, each between minText and maxText,
// so that a task page stays under MaxPage even with every character
// escaped; the bundle keeps the full texts.
const (
	textBudget = 1 << 20
	maxText    = 120 << 10
	minText    = 4 << 10
)

// An Alias says that a system appears in one benchmark under another name
// than its canonical one.
type Alias struct {
	System    string // canonical name, shown on the index and system pages
	Benchmark string // benchmark machine name
	Name      string // the name the benchmark uses
}

// An Input is everything the site shows.
type Input struct {
	// Results are one per benchmark, in display order.
	Results []*analysis.Result
	// Sensitivity are sweep tables, each with a heatmap of rank changes.
	Sensitivity []*analysis.Table
	// Comparisons are published-vs-computed verdict tables; each is shown
	// on the page of its Benchmark, or on the index when it has none.
	Comparisons []*analysis.Table
	// Published are the comparisons with the published tables, cell by
	// cell; each is laid out as the paper prints it, first on its
	// benchmark's page. When there are any, the comparison tables that
	// belong to no benchmark are left to the downloads.
	Published  []analysis.Comparison
	Provenance report.Provenance
	Aliases    []Alias
	// Downloads are paths relative to the output root, the parent of the
	// site folder ("xlsx/all.xlsx"), linked from the index.
	Downloads []string
	// Exchanges looks up the recorded exchanges the details name
	// (analysis.Call), which task pages show as stored; nil shows only
	// what the details say about them.
	Exchanges ExchangeLookup
	// TaskDetails, when not nil, returns the full details of one task of
	// a benchmark (every system's output and verdicts, in any order).
	// The Details of Results then need only their Task, System, Question
	// and Score, which the pages other than task pages show; each task
	// page loads its details when it is written and drops them after, so
	// that the site's memory does not grow with the bundle. release,
	// when not nil, is called once the page no longer reads them (their
	// texts may then be overwritten, as by a loader reusing its buffers).
	// It must be safe for concurrent use.
	TaskDetails func(benchmark, task string) (ds []analysis.Detail, release func(), err error)
	// Listings are the listings of benchmarks' details, by benchmark,
	// in place of their results' Details and LazyDetails, which are not
	// read then: the pages other than task pages show the listing, and
	// the task pages load their details through TaskDetails, which must
	// be set.
	Listings map[string]*Listing
	// Written are task pages written already (see WriteTasksHashed),
	// which are written again only if they changed.
	Written []*Tasks
}

//go:embed assets/echarts.min.js assets/echarts.LICENSE assets/echarts.NOTICE assets/echarts.LICENSE-d3 assets/site.css assets/site.js
var assets embed.FS

//go:embed templates/*.html
var templates embed.FS

// pageKinds are the page templates; each is parsed with layout.html.
var pageKinds = []string{"index", "benchmark", "sensitivity", "system", "task"}

var pageTemplates = func() map[string]*template.Template {
	base := template.Must(template.New("").ParseFS(templates, "templates/layout.html"))
	m := map[string]*template.Template{}
	for _, k := range pageKinds {
		m[k] = template.Must(template.Must(base.Clone()).ParseFS(templates, "templates/"+k+".html"))
	}
	return m
}()

// Write writes the site into dir: index.html, <benchmark>.html,
// sensitivity.html, systems/<system>.html, tasks/<benchmark>/<task>.html
// and assets/. The content of every file depends on in alone, so two runs
// give identical bytes; pages are rendered and written in parallel, each
// as soon as it is rendered. Write returns the files it wrote, relative to
// dir with forward slashes, sorted. It overwrites files in place, leaves
// a file that already holds the bytes it would write untouched, and
// leaves other files in dir alone: the caller removes what it did not
// write (see the pruning in reproduce), which on most file systems is far
// cheaper than emptying dir and creating every file anew.
func Write(dir string, in Input) ([]string, error) {
	sums, err := WriteHashed(dir, in)
	if err != nil {
		return nil, err
	}
	return report.Paths(sums), nil
}

// WriteHashed is Write that also returns the SHA-256 of every file, hashed
// from the bytes in memory, with the file's path relative to dir, sorted
// by path: what report.WriteSumsOf needs, without reading the files back.
// The task pages of in.Written are not written again when they are
// still those of in (see Tasks); their sums are among those returned.
func WriteHashed(dir string, in Input) ([]report.FileSum, error) {
	var kept []report.FileSum
	sums, err := writeHashed(dir, func(emit func(file) error) (err error) {
		kept, err = render(in, emit)
		return err
	})
	if err != nil {
		return nil, err
	}
	sums = append(sums, kept...)
	slices.SortFunc(sums, func(a, b report.FileSum) int { return strings.Compare(a.Path, b.Path) })
	return sums, nil
}

// Tasks are the task pages of one benchmark that WriteTasksHashed wrote
// ahead of the rest of the site, and what they were made from.
type Tasks struct {
	// Sums are the pages' SHA-256, as WriteHashed returns them.
	Sums []report.FileSum
	from taskContext
}

// WriteTasksHashed writes the task pages of benchmark bench of in into
// dir, as WriteHashed would write them, and returns their sums. in need
// not be the whole site yet: the results of benchmarks not finished may
// be stand-ins with their Benchmark and Title only. A task page takes
// from the rest of the site the navigation, the synthetic flag and the
// pages of bench's systems (their slugs, which depend on every
// benchmark's systems and on the aliases); given the Tasks in
// Input.Written, WriteHashed writes them again when any of these turns
// out otherwise, or when its result of bench is not the one given here.
// Pages are written until ctx is done, and the error is then ctx's. On
// an error, the Tasks returned, not nil, list the pages written (their
// files, for the caller to list; not to be given to WriteHashed).
func WriteTasksHashed(ctx context.Context, dir string, in Input, bench string) (*Tasks, error) {
	t := &Tasks{}
	sums, err := writeHashed(dir, func(emit func(file) error) error {
		s, err := newSite(in)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(s.in.Results, func(r *analysis.Result) bool { return r.Benchmark == bench })
		if i < 0 {
			return fmt.Errorf("no result of benchmark %s", bench)
		}
		t.from = s.taskContext(i)
		w := newPageWriter(emit)
		bt := s.tasks[bench]
		for k := range bt.tasks {
			if ctx.Err() != nil {
				break
			}
			w.goWrite(func() *page { return s.taskPage(s.in.Results[i], bt, k) })
		}
		return cmp.Or(w.wait(), ctx.Err())
	})
	slices.SortFunc(sums, func(a, b report.FileSum) int { return strings.Compare(a.Path, b.Path) })
	t.Sums = sums
	return t, err
}

// writeHashed writes the files that render hands to emit into dir, each
// through a root at dir so that no link inside it takes a write
// elsewhere, and returns their sums (in no order): on an error, those of
// the files written until then.
func writeHashed(dir string, render func(emit func(file) error) error) ([]report.FileSum, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	defer root.Close()
	var made sync.Map  // folders made
	var wmu sync.Mutex // held while writing a file
	var mu sync.Mutex
	var sums []report.FileSum
	err = render(func(f file) error {
		sum := report.FileSum{Path: f.name, Sum: sha256.Sum256(f.data)}
		p := filepath.FromSlash(f.name)
		if d := filepath.Dir(p); !loaded(&made, d) {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made.Store(d, true)
		}
		// Pages render in parallel but are written one at a time:
		// creating files in one folder at once makes the file system
		// spin on the folder's lock, which costs more than it saves.
		if !report.Unchanged(root, p, f.data) {
			wmu.Lock()
			err := root.WriteFile(p, f.data, 0o644)
			wmu.Unlock()
			if err != nil {
				return err
			}
		}
		mu.Lock()
		sums = append(sums, sum)
		mu.Unlock()
		return nil
	})
	if err != nil {
		return sums, fmt.Errorf("site: %w", err)
	}
	return sums, nil
}

// loaded reports whether m holds key.
func loaded(m *sync.Map, key string) bool {
	_, ok := m.Load(key)
	return ok
}

// A file is one output file, by slash-separated path relative to the site
// root.
type file struct {
	name string
	data []byte
}

// build renders every file of the site in memory, sorted by name; in
// has no Written.
func build(in Input) ([]file, error) {
	var mu sync.Mutex
	var files []file
	_, err := render(in, func(f file) error {
		mu.Lock()
		defer mu.Unlock()
		files = append(files, file{f.name, slices.Clone(f.data)})
		return nil
	})
	slices.SortFunc(files, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return files, err
}

// render renders every file of the site and hands each to emit, pages in
// parallel: emit must be safe for concurrent use, and may not keep the
// data it is given after it returns (page buffers are reused). The task
// pages of in.Written that are still those of in are not rendered: kept
// are their sums.
func render(in Input, emit func(file) error) (kept []report.FileSum, err error) {
	s, err := newSite(in)
	if err != nil {
		return nil, err
	}
	err = fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		return emit(file{p, b})
	})
	if err != nil {
		return nil, err
	}
	pages := s.pages()
	if s.err != nil {
		return nil, s.err
	}
	w := newPageWriter(emit)
	for i, p := range pages {
		pages[i] = nil // held by its goroutine alone, and let go once written
		w.goWrite(func() *page { return p })
	}
	// A task page is made when it is written, not before: what a site
	// holds at once of its task pages is the pages being written (goWrite
	// waits for a free goroutine), whatever the number of tasks.
	for i, r := range s.in.Results {
		if t := s.written(i); t != nil {
			kept = append(kept, t.Sums...)
			continue
		}
		bt := s.tasks[r.Benchmark]
		for k := range bt.tasks {
			w.goWrite(func() *page { return s.taskPage(r, bt, k) })
		}
	}
	return kept, w.wait()
}

// written returns the Tasks of in.Written whose pages are those of the
// benchmark of s's result i, if any.
func (s *site) written(i int) *Tasks {
	c := s.taskContext(i)
	for _, t := range s.in.Written {
		if t.from.equal(c) {
			return t
		}
	}
	return nil
}

// A taskContext is what the task pages of a benchmark depend on: its
// result and its listing, and what they take from the rest of the site.
type taskContext struct {
	result    *analysis.Result
	listing   *Listing // the one given, if any
	synthetic bool
	nav       []link
	// systems are the slugs of the result's systems' pages, in the
	// order of systemNames
	systems []string
}

// taskContext returns the context of the task pages of s's result i.
func (s *site) taskContext(i int) taskContext {
	r := s.in.Results[i]
	c := taskContext{result: r, listing: s.tasks[r.Benchmark].given, synthetic: s.synthetic, nav: s.nav}
	for _, name := range s.systemNames(r) {
		c.systems = append(c.systems, s.canonical(r.Benchmark, name).Slug)
	}
	return c
}

func (c taskContext) equal(d taskContext) bool {
	return c.result == d.result && c.listing == d.listing && c.synthetic == d.synthetic && slices.Equal(c.nav, d.nav) && slices.Equal(c.systems, d.systems)
}

// A pageWriter renders pages and hands them to emit, in parallel.
type pageWriter struct {
	g      errgroup.Group
	frames sync.Map // frameKey -> [3]string, for this site only
	emit   func(file) error
}

func newPageWriter(emit func(file) error) *pageWriter {
	w := &pageWriter{emit: emit}
	// twice the CPUs: a page's goroutine also waits on the disk
	w.g.SetLimit(2 * runtime.GOMAXPROCS(0))
	return w
}

// goWrite renders the page make returns and emits it, in a goroutine
// of its own once one is free.
func (w *pageWriter) goWrite(make func() *page) {
	w.g.Go(func() error { return w.write(make()) })
}

// wait waits for the pages and returns the first error.
func (w *pageWriter) wait() error { return w.g.Wait() }

func (w *pageWriter) write(p *page) error {
	buf := buffers.Get().(*pageBuffer)
	defer buffers.Put(buf)
	for {
		data, err := buf.render(p, &w.frames)
		if err != nil {
			return fmt.Errorf("page %s: %w", p.Path, err)
		}
		if len(data) <= MaxPage || p.remake == nil || p.rows <= minRows {
			break
		}
		// too big: the same page with a quarter of the rows per
		// table, the notes saying so
		rows := max(p.rows/4, minRows)
		p = p.remake(rows)
		p.rows = rows
	}
	if len(buf.page) > MaxPage {
		return fmt.Errorf("page %s: %d bytes, over the %d limit", p.Path, len(buf.page), MaxPage)
	}
	return w.emit(file{p.Path, buf.page})
}

// partMarker stands in a page's template output for the part the page
// appends itself (a task page's systems and verdicts, see appendBody), so
// that long texts skip the template engine, which would copy them
// several times.
const partMarker = "\x00finrepro-part\x00"

// A pageBuffer holds the template output and the page of one render,
// reused from page to page.
type pageBuffer struct {
	tmpl bytes.Buffer
	page []byte
}

// buffers keeps page buffers between pages: thousands of task pages are
// rendered, and growing a new buffer for each costs a tenth of a
// full-scale site's writing time (profile of reproduce, BenchmarkWrite).
var buffers = sync.Pool{New: func() any { return new(pageBuffer) }}

// titleMarker stands for the title in a task page's frame: letters
// and digits, which no escaper changes.
const titleMarker = "finreproTitle7c1f0e"

// A frameKey is what a task page's frame depends on besides its title.
// The layout uses the page's Current only to mark the navigation entry
// it equals, which a task page is not: its key holds "" then, so that
// the task pages of a site share one frame (a frame per page made the
// frames a tenth of the site's template work and memory that grew with
// the bundle).
type frameKey struct {
	root, current string
	synthetic     bool
	nav           int
}

// frame returns the frame of task page p: the layout before the title,
// between the title and the content, and after the content. frames
// holds the frames of one site, rendered with the templates once per
// frameKey.
func frame(p *page, frames *sync.Map) ([3]string, error) {
	current := p.Current
	if !slices.ContainsFunc(p.Nav, func(l link) bool { return l.Href == current }) {
		current = ""
	}
	k := frameKey{p.Root, current, p.Synthetic, len(p.Nav)}
	if f, ok := frames.Load(k); ok {
		return f.([3]string), nil
	}
	stub := *p
	stub.Title = titleMarker
	stub.Current = current
	var b bytes.Buffer
	if err := pageTemplates[p.Kind].ExecuteTemplate(&b, "layout", &stub); err != nil {
		return [3]string{}, err
	}
	before, rest, ok1 := strings.Cut(b.String(), titleMarker)
	middle, after, ok2 := strings.Cut(rest, partMarker)
	if !ok1 || !ok2 {
		return [3]string{}, fmt.Errorf("template wrote no title or no task body")
	}
	f := [3]string{before, middle, after}
	frames.Store(k, f)
	return f, nil
}

// render renders p into b.page and returns it. A task page is its
// frame around its title and content, which the page writes itself.
func (b *pageBuffer) render(p *page, frames *sync.Map) ([]byte, error) {
	b.page = b.page[:0]
	if p.Task != nil {
		if err := p.Task.prepare(); err != nil {
			return nil, err
		}
		defer p.Task.release()
		f, err := frame(p, frames)
		if err != nil {
			return nil, err
		}
		b.page = append(b.page, f[0]...)
		b.page = appendEscaped(b.page, p.Title)
		b.page = append(b.page, f[1]...)
		b.page = p.Task.appendTop(b.page)
		b.page = p.Task.appendBody(b.page)
		b.page = append(b.page, f[2]...)
		return b.page, nil
	}
	b.tmpl.Reset()
	if err := pageTemplates[p.Kind].ExecuteTemplate(&b.tmpl, "layout", p); err != nil {
		return nil, err
	}
	b.page = append(b.page, b.tmpl.Bytes()...)
	return b.page, nil
}

// site is the Input indexed for rendering.
type site struct {
	in        Input
	synthetic bool
	benchSlug map[string]string // benchmark -> page stem
	sysSlug   *slugger
	systems   []*system              // sorted by canonical name
	byName    map[[2]string]*system  // benchmark and name there -> system
	tasks     map[string]*benchTasks // by benchmark
	downloads map[string]bool        // in.Downloads
	nav       []link                 // every page's navigation
	mu        sync.Mutex
	err       error // the first error met while rendering
}

// fail records the first error met while building pages; remade pages
// call it from several goroutines.
func (s *site) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// A system is a canonical system and the names it has per benchmark.
type system struct {
	Name  string
	Slug  string
	Names map[string]string // benchmark -> name there
}

func newSite(in Input) (*site, error) {
	s := &site{in: in, synthetic: in.Provenance.Synthetic, benchSlug: map[string]string{},
		sysSlug: newSlugger(), tasks: map[string]*benchTasks{}}
	for i, r := range in.Results {
		if r == nil {
			return nil, fmt.Errorf("result %d is nil", i)
		}
		s.synthetic = s.synthetic || r.Synthetic
		slug := sanitize(r.Benchmark)
		if slug != r.Benchmark || slug == "index" || slug == "sensitivity" {
			return nil, fmt.Errorf("result %d: benchmark name %q is not a plain [a-z0-9] name", i, r.Benchmark)
		}
		if _, dup := s.benchSlug[r.Benchmark]; dup {
			return nil, fmt.Errorf("result %d: benchmark %s given twice", i, r.Benchmark)
		}
		s.benchSlug[r.Benchmark] = slug
		bt, err := listTasks(r, in)
		if err != nil {
			return nil, err
		}
		s.tasks[r.Benchmark] = bt
	}
	s.nav = s.navigation()
	s.downloads = map[string]bool{}
	for _, p := range in.Downloads {
		s.downloads[p] = true
		if p == "" || path.IsAbs(p) || path.Clean(p) != p || strings.HasPrefix(p, "../") || p == ".." ||
			strings.ContainsAny(p, ":\\") {
			return nil, fmt.Errorf("download %q is not a clean relative path", p)
		}
	}
	// canonical systems
	alias := map[[2]string]string{}
	for _, a := range in.Aliases {
		alias[[2]string{a.Benchmark, a.Name}] = a.System
	}
	byName := map[string]*system{}
	for _, r := range in.Results {
		for _, name := range s.systemNames(r) {
			canon := name
			if c, ok := alias[[2]string{r.Benchmark, name}]; ok {
				canon = c
			}
			sys := byName[canon]
			if sys == nil {
				sys = &system{Name: canon, Names: map[string]string{}}
				byName[canon] = sys
			}
			if prev, ok := sys.Names[r.Benchmark]; ok && prev != name {
				return nil, fmt.Errorf("benchmark %s: names %q and %q both alias system %q", r.Benchmark, prev, name, canon)
			}
			sys.Names[r.Benchmark] = name
		}
	}
	s.byName = map[[2]string]*system{}
	for _, name := range sortedKeys(byName) {
		sys := byName[name]
		sys.Slug = s.sysSlug.slug(name)
		s.systems = append(s.systems, sys)
		for bench, n := range sys.Names {
			s.byName[[2]string{bench, n}] = sys
		}
	}
	return s, nil
}

// benchTasks are the tasks of a benchmark, as the site shows them.
type benchTasks struct {
	*Listing
	given *Listing // the listing of Input.Listings, nil when made here
	slugs []string // the file stem of each task's page
	// details are the result's details when its task pages are made
	// from them (no Input.TaskDetails), order the index there of each
	// of the listing's entries
	details []analysis.Detail
	order   []int32
}

// listTasks returns the tasks of result r of in: its listing in
// in.Listings, or the listing of its details.
func listTasks(r *analysis.Result, in Input) (*benchTasks, error) {
	bt := &benchTasks{}
	if l := in.Listings[r.Benchmark]; l != nil {
		if in.TaskDetails == nil {
			return nil, fmt.Errorf("benchmark %s: a listing of its details, and no TaskDetails to load them", r.Benchmark)
		}
		bt.Listing, bt.given = l, l
	} else {
		var lr Lister
		if in.TaskDetails == nil {
			bt.details = r.AllDetails()
			for _, d := range bt.details {
				lr.Add(d)
			}
		} else {
			for d := range r.EachDetail() {
				lr.Add(d)
			}
		}
		bt.Listing, bt.order = lr.finish(in.TaskDetails == nil)
	}
	// slugs are given in sorted name order (see slugger.slug)
	byName := make([]int, len(bt.tasks))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(bt.tasks[a].name, bt.tasks[b].name) })
	ts := newSlugger()
	bt.slugs = make([]string, len(bt.tasks))
	for _, i := range byName {
		bt.slugs[i] = ts.slug(bt.tasks[i].name)
	}
	return bt, nil
}

// systemNames lists the systems of a result, from its ranking, scores and
// details, sorted.
func (s *site) systemNames(r *analysis.Result) []string {
	set := map[string]bool{}
	for _, n := range r.Ranking {
		set[n] = true
	}
	for n := range r.Scores {
		set[n] = true
	}
	for _, n := range s.tasks[r.Benchmark].systems {
		set[n] = true
	}
	return sortedKeys(set)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// canonical returns the canonical system of a benchmark's system name.
func (s *site) canonical(bench, name string) *system {
	return s.byName[[2]string{bench, name}]
}

func itoa(n int) string { return strconv.Itoa(n) }
