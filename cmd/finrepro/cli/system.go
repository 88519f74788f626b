package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

const systemDoc = `Add, list and remove the evaluated systems of a bundle folder. Subcommands:

  add BUNDLE --benchmark NAME --name SYSTEM (--provider P --model M [--base-url URL] | --outputs DIR)
          add a system to one benchmark's configuration and re-seal
  list BUNDLE [--benchmark NAME]
          every benchmark's systems with provider, model and provenance
  remove BUNDLE --benchmark NAME --name SYSTEM
          remove a system (its configuration, alias, provenance, reports and
          prediction-log entries) and re-seal; its exchanges stay in the cache

--provider adds a system that "finrepro requests" and "finrepro record" (or
"reproduce --mode record") then call. --outputs imports outputs collected by
hand or by another harness: DIR holds one file per task, named by the task id
("finrepro requests" lists the ids; an id with "/" is a path of folders) with
any extension, and provenance.json, {"where": ..., "when": ..., "product_version": ...}
(when: RFC 3339 or YYYY-MM-DD; FinDeepForecast, which checks every
prediction against its deadline, needs an RFC 3339 time). Imported outputs are stored in the bundle's
cache as the answers to the requests the benchmark makes (provider "import");
FinResearchBench II's reports go to its reports.jsonl. The provenance is kept
in the bundle's systems.jsonl and written into every output's provenance.
The bundle must verify before it is changed.`

// A systemsPlace says where a benchmark's configuration lists systems.
type systemsPlace struct {
	file, key, group string
}

var systemsPlaces = map[string]systemsPlace{
	"icbcbench":         {"config.json", "systems", "open"},
	"findeepresearch":   {"config.json", "systems", "deep-research"},
	"findeepforecast":   {"config.json", "systems", "deep-research"},
	"finresearchbench2": {"panel.json", "products", ""},
}

// SystemsName is the bundle file recording the provenance of the systems
// "finrepro system add" added: one JSON object a line.
const SystemsName = "systems.jsonl"

// A systemRecord is one line of systems.jsonl.
type systemRecord struct {
	Benchmark      string `json:"benchmark"`
	System         string `json:"system"`
	Display        string `json:"display,omitempty"`
	Provider       string `json:"provider"`
	Model          string `json:"model"`
	BaseURL        string `json:"base_url,omitempty"`
	Where          string `json:"where,omitempty"`
	When           string `json:"when,omitempty"`
	ProductVersion string `json:"product_version,omitempty"`
	Outputs        int    `json:"outputs,omitempty"`
}

// Describe says in one line where the system's outputs come from.
func (r systemRecord) Describe() string {
	if r.Where != "" {
		return fmt.Sprintf("%d outputs imported from %s, collected %s, product version %s", r.Outputs, r.Where, r.When, r.ProductVersion)
	}
	s := "recorded from provider " + r.Provider + " model " + r.Model
	if r.BaseURL != "" {
		s += " at " + r.BaseURL
	}
	return s
}

func runSystem(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "add":
			return runSystemAdd(ctx, env, args[1:])
		case "list":
			return runSystemList(ctx, env, args[1:])
		case "remove":
			return runSystemRemove(ctx, env, args[1:])
		}
	}
	fset := env.newFlags("system", "system (add|list|remove) BUNDLE ...", systemDoc)
	if err := parse(fset, args); err != nil {
		return err
	}
	return usageErr("want a subcommand: add, list or remove")
}

// openEditable opens and verifies a bundle folder that a command is about
// to change, and checks that it holds bench.
func openEditable(ctx context.Context, env *Env, dir, bench string) (*results.Bundle, error) {
	if dir != "" {
		if err := results.CheckBundlePath(dir); err != nil {
			return nil, err
		}
	}
	if dir == "" || strings.HasSuffix(dir, ".tar.zst") {
		return nil, usageErr("want a bundle folder (an archive cannot be changed; unpack it or use bundle create --from)")
	}
	b, err := results.OpenBundle(dir)
	if err != nil {
		return nil, &results.IntegrityError{Err: err}
	}
	if err := verifyOpened(ctx, env, b); err != nil {
		return nil, err
	}
	if bench != "" {
		if _, ok := systemsPlaces[bench]; !ok {
			return nil, usageErr("--benchmark %q: unknown benchmark (known: %s)", bench, strings.Join(benchmarkNames(), ", "))
		}
		if !b.Has(bench) {
			return nil, usageErr("bundle %s holds no %s (it holds %s)", b.Manifest.Name, bench, strings.Join(b.Manifest.Benchmarks, ", "))
		}
	}
	return b, nil
}

// A systemsFile is a benchmark's configuration file as read: its bytes,
// its members and its list of systems.
type systemsFile struct {
	path string
	raw  []byte
	ms   []member
	list []json.RawMessage
}

// readSystems reads the benchmark's configuration file.
func readSystems(b *results.Bundle, bench string) (systemsFile, error) {
	pl := systemsPlaces[bench]
	f := systemsFile{path: filepath.Join(b.Dir, results.InputsDir, bench, pl.file)}
	var err error
	if f.raw, err = os.ReadFile(f.path); err != nil {
		return f, err
	}
	if len(f.raw) > results.MaxLine {
		return f, results.Errorf(f.path, 0, "", "larger than %d bytes", results.MaxLine)
	}
	if f.ms, err = readMembers(f.raw); err != nil {
		return f, results.Errorf(f.path, 0, "", "%v", err)
	}
	if v := get(f.ms, pl.key); v != nil {
		if err := json.Unmarshal(v, &f.list); err != nil {
			return f, results.Errorf(f.path, 0, pl.key, "%v", err)
		}
	}
	return f, nil
}

func systemName(v json.RawMessage) string {
	var s struct {
		Name string `json:"name"`
	}
	json.Unmarshal(v, &s) // a list entry that is not an object has no name
	return s.Name
}

// snapshot keeps the bytes of the files a command changes, as the
// command read them (nil for a file that did not exist), to put them back
// when the change turns out to be invalid; its paths are also what the
// command wrote, which the reseal hashes again.
type snapshot map[string][]byte

// keep records old, the bytes of p as the caller read them, before the
// caller changes p; the first bytes kept for p stay.
func (s snapshot) keep(p string, old []byte) {
	if _, ok := s[p]; !ok {
		s[p] = old
	}
}

// read reads p as os.ReadFile does and keeps its bytes for a change: a
// p that does not exist is kept as absent (the error is returned all the
// same); after any other error nothing is kept.
func (s snapshot) read(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.keep(p, nil)
	case err == nil:
		s.keep(p, b)
	}
	return b, err
}

// written lists the kept paths relative to dir, with extra, for
// results.Reseal.
func (s snapshot) written(dir string, extra ...string) []string {
	out := slices.Clone(extra)
	for p := range s {
		if rel, err := filepath.Rel(dir, p); err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	slices.Sort(out)
	return out
}

func (s snapshot) restore() {
	for p, b := range s {
		if b == nil {
			os.Remove(p) // the file did not exist before
			continue
		}
		os.WriteFile(p, b, 0o644) // best effort: the error being reported matters more
	}
}

func runSystemAdd(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("system add", "system add BUNDLE --benchmark NAME --name SYSTEM (--provider P --model M [--base-url URL] | --outputs DIR)", systemDoc)
	bench := fset.String("benchmark", "", "the benchmark `NAME` (icbcbench, findeepresearch, findeepforecast, finresearchbench2)")
	name := fset.String("name", "", "the system's `NAME` in the benchmark's tables")
	provider := fset.String("provider", "", "provider that answers the system's requests (openai, anthropic, gemini, vllm, ollama, ...)")
	model := fset.String("model", "", "model name sent to --provider (with --outputs: default the product version)")
	baseURL := fset.String("base-url", "", "base URL of --provider, kept as provenance and printed for recording")
	outputs := fset.String("outputs", "", "import hand-collected outputs from `DIR` (one file per task id, and provenance.json)")
	display := fset.String("display", "", "the name shown across benchmarks (a row of aliases.csv); default --name")
	group := fset.String("group", "", "the group the benchmark's tables put it in (default deep-research; ICBCBench: open)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageErr("system add: want one BUNDLE")
	}
	switch {
	case *bench == "" || *name == "":
		return usageErr("system add: --benchmark and --name are required")
	case (*provider == "") == (*outputs == ""):
		return usageErr("system add: give either --provider and --model or --outputs")
	case *provider != "" && *model == "":
		return usageErr("system add: --provider needs --model")
	case *provider != "" && *bench == "finresearchbench2":
		return usageErr("system add: FinResearchBench II grades reports collected beforehand; add its products with --outputs")
	}
	if *provider != "" {
		if _, ok := replay.DefaultProviders()[*provider]; !ok || *provider == "sim" || *provider == replay.ImportProvider {
			return usageErr("system add: --provider %q: want a built-in provider (%s); an OpenAI-compatible server is vllm, ollama or llamacpp with --base-url", *provider, strings.Join(realProviders(), ", "))
		}
	}
	if *baseURL != "" {
		if err := checkBaseURL(*baseURL); err != nil {
			return usageErr("system add: --base-url %q: %v", *baseURL, err)
		}
	}
	b, err := openEditable(ctx, env, fset.Arg(0), *bench)
	if err != nil {
		return err
	}
	rec := systemRecord{Benchmark: *bench, System: *name, Display: *display, Provider: *provider, Model: *model, BaseURL: *baseURL}
	var outs map[string]string
	if *outputs != "" {
		var prov replay.Provenance
		if outs, prov, err = readOutputs(*outputs); err != nil {
			return err
		}
		if _, err := time.Parse(time.RFC3339, prov.When); err != nil && *bench == "findeepforecast" {
			return usageErr("system add: %s: when %q: FinDeepForecast checks every prediction against its task's deadline, so the collection time must be an RFC 3339 time (2025-10-01T09:00:00Z), not a date", filepath.Join(*outputs, "provenance.json"), prov.When)
		}
		rec.Provider, rec.Where, rec.When, rec.ProductVersion, rec.Outputs = replay.ImportProvider, prov.Where, prov.When, prov.ProductVersion, len(outs)
		if rec.Model == "" {
			rec.Model = prov.ProductVersion
		}
	}
	sf, err := readSystems(b, *bench)
	if err != nil {
		return err
	}
	for _, v := range sf.list {
		if systemName(v) == *name {
			return usageErr("system add: %s already has a system %q (system remove first)", *bench, *name)
		}
	}
	pl := systemsPlaces[*bench]
	g := cmpOrString(*group, pl.group)
	var entry json.RawMessage
	if *bench == "finresearchbench2" {
		entry, err = objectOf("name", *name)
	} else {
		entry, err = objectOf("name", *name, "group", g, "provider", rec.Provider, "model", rec.Model)
	}
	if err != nil {
		return err
	}
	snap := snapshot{}
	fail := func(err error) error {
		snap.restore()
		return err
	}
	snap.keep(sf.path, sf.raw)
	listJSON, err := json.Marshal(append(sf.list, entry))
	if err != nil {
		return err
	}
	out, err := writeMembers(set(sf.ms, pl.key, listJSON))
	if err != nil {
		return err
	}
	if err := os.WriteFile(sf.path, out, 0o644); err != nil {
		return fail(err)
	}
	if *display != "" {
		if err := addAlias(snap, b, *display, *bench, *name); err != nil {
			return fail(err)
		}
	}
	if err := addRecord(snap, b, rec); err != nil {
		return fail(err)
	}
	if *bench == "finresearchbench2" {
		if err := appendReports(snap, b, *name, outs); err != nil {
			return fail(err)
		}
	}
	calls, err := benchmarkCalls(ctx, b, *bench)
	if err != nil {
		return fail(fmt.Errorf("system add: the changed configuration does not load: %w", err))
	}
	var mine []results.Call
	for _, c := range calls {
		if c.Label.Role == results.RoleSystem && c.Label.Name == *name {
			mine = append(mine, c)
		}
	}
	var cacheWritten []string
	if outs != nil && *bench != "finresearchbench2" {
		if err := importOutputs(b, *outputs, mine, outs, rec); err != nil {
			return fail(err)
		}
		cacheWritten = []string{results.CacheDir + "/"}
	}
	m, changes, err := results.Reseal(b.Dir, b.Manifest.Files, snap.written(b.Dir, cacheWritten...))
	if err != nil {
		return err
	}
	w := env.Stdout
	fmt.Fprintf(w, "added %s system %q (%s)\n", *bench, *name, rec.Describe())
	for _, c := range changes {
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintf(w, "re-sealed %s (%d files)\n", b.Dir, len(m.Files))
	if *provider != "" {
		fmt.Fprintf(w, "It makes %d requests of its own (and then its judges' calls). Next:\n", len(mine))
		fmt.Fprintf(w, "  finrepro requests %s --benchmark %s --system %q --missing > requests.jsonl\n", b.Dir, *bench, *name)
		rf := ""
		if *baseURL != "" {
			rf = " --base-url " + *baseURL
		}
		fmt.Fprintf(w, "  finrepro record --requests requests.jsonl --provider %s%s --dir %s\n", *provider, rf, filepath.Join(b.Dir, results.CacheDir))
		fmt.Fprintf(w, "  finrepro bundle seal %s\n", b.Dir)
	}
	if *bench == "finresearchbench2" || outs != nil {
		judged := "its judges' calls"
		fmt.Fprintf(w, "Its outputs are in the bundle; %s are recorded with \"finrepro requests %s --benchmark %s --system %q --judges --missing\".\n", judged, b.Dir, *bench, *name)
	}
	return nil
}

func cmpOrString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// realProviders lists the built-in providers a system can be recorded
// from, sorted.
func realProviders() []string {
	var out []string
	for n := range replay.DefaultProviders() {
		if n != "sim" && n != replay.ImportProvider {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// checkBaseURL accepts an http or https URL with a host and no query.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return err
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http:// or https:// URL")
	case u.Host == "":
		return errors.New("no host")
	case u.RawQuery != "" || u.Fragment != "":
		return errors.New("a base URL has no query or fragment")
	}
	return nil
}

// addAlias appends "display,bench,name" to the bundle's aliases.csv,
// creating it with its header when absent.
func addAlias(snap snapshot, b *results.Bundle, display, bench, name string) error {
	p := filepath.Join(b.Dir, results.AliasesName)
	old, err := snap.read(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) == 0 {
		buf.WriteString("system,benchmark,name\n")
	} else if old[len(old)-1] != '\n' {
		buf.WriteByte('\n')
	}
	cw := csv.NewWriter(&buf)
	cw.Write([]string{display, bench, name})
	cw.Flush()
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

// readRecords reads the bundle's systems.jsonl, none when absent; snap
// keeps its bytes for a change.
func readRecords(snap snapshot, b *results.Bundle) ([]systemRecord, error) {
	raw, err := snap.read(filepath.Join(b.Dir, SystemsName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return results.ReadJSONL[systemRecord](bytes.NewReader(raw), SystemsName)
}

// writeRecords replaces systems.jsonl, which readRecords(snap, b)
// has read.
func writeRecords(b *results.Bundle, recs []systemRecord) error {
	p := filepath.Join(b.Dir, SystemsName)
	if len(recs) == 0 {
		err := os.Remove(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

func addRecord(snap snapshot, b *results.Bundle, r systemRecord) error {
	recs, err := readRecords(snap, b)
	if err != nil {
		return err
	}
	return writeRecords(b, append(recs, r))
}

// Bounds of an outputs folder: a deep-research report is at most a few
// hundred kilobytes, and a benchmark has at most a few thousand tasks.
const (
	maxOutput  = 16 << 20
	maxOutputs = 100000
)

// readOutputs reads an outputs folder: provenance.json and one file per
// task, keyed by task id (the slash path without its extension).
func readOutputs(dir string) (map[string]string, replay.Provenance, error) {
	var prov replay.Provenance
	pf := filepath.Join(dir, "provenance.json")
	f, err := os.Open(pf)
	if err != nil {
		return nil, prov, fmt.Errorf("--outputs: %w (a provenance note says where, when and which product version)", err)
	}
	var note struct {
		Where          string `json:"where"`
		When           string `json:"when"`
		ProductVersion string `json:"product_version"`
	}
	err = results.ReadJSON(f, pf, &note)
	f.Close()
	if err != nil {
		return nil, prov, err
	}
	for _, x := range [][2]string{{"where", note.Where}, {"when", note.When}, {"product_version", note.ProductVersion}} {
		if strings.TrimSpace(x[1]) == "" {
			return nil, prov, results.Errorf(pf, 0, x[0], "empty")
		}
	}
	if _, err := time.Parse(time.RFC3339, note.When); err != nil {
		if _, err := time.Parse(time.DateOnly, note.When); err != nil {
			return nil, prov, results.Errorf(pf, 0, "when", "%q is neither an RFC 3339 time nor YYYY-MM-DD", note.When)
		}
	}
	prov = replay.Provenance{Where: note.Where, When: note.When, ProductVersion: note.ProductVersion}
	outs := map[string]string{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == "provenance.json" {
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("--outputs: %s: not a regular file", rel)
		}
		id := strings.TrimSuffix(rel, path.Ext(rel))
		if _, dup := outs[id]; dup {
			return fmt.Errorf("--outputs: two files for task %q", id)
		}
		if info, err := d.Info(); err != nil {
			return err
		} else if info.Size() > maxOutput {
			return fmt.Errorf("--outputs: %s: larger than %d bytes", rel, maxOutput)
		}
		if len(outs) == maxOutputs {
			return fmt.Errorf("--outputs: %s: more than %d files", dir, maxOutputs)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return fmt.Errorf("--outputs: %s: empty", rel)
		}
		outs[id] = string(b)
		return nil
	})
	if err != nil {
		return nil, prov, err
	}
	if len(outs) == 0 {
		return nil, prov, fmt.Errorf("--outputs: %s holds no output file", dir)
	}
	return outs, prov, nil
}

// refuser answers no call: collecting through it loads a benchmark's
// inputs and lists its first round of calls without reading any cache.
type refuser struct{}

var errNotAsked = errors.New("not asked")

func (refuser) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	out := make([]results.Reply, len(calls))
	for i := range out {
		out[i].Err = errNotAsked
	}
	return out
}

// benchmarkCalls loads bench's inputs and returns its first round of
// calls (those that depend on no reply): the systems' own calls.
func benchmarkCalls(ctx context.Context, b *results.Bundle, bench string) ([]results.Call, error) {
	bm := findBenchmark(bench)
	log := &callLog{next: refuser{}}
	if _, err := bm.Collect(ctx, analysis.Input{Bundle: b, Answer: log}); err != nil {
		return nil, err
	}
	return log.all(), nil
}

// importOutputs stores every output as the answer to the system's call
// for its task. Every file must name a task the system is asked; this is
// checked before anything is stored.
func importOutputs(b *results.Bundle, dir string, calls []results.Call, outs map[string]string, rec systemRecord) error {
	byTask := map[string]results.Call{}
	for _, c := range calls {
		byTask[c.Label.Task] = c
	}
	ids := slices.Sorted(maps.Keys(outs))
	for _, id := range ids {
		if _, ok := byTask[id]; !ok {
			return fmt.Errorf("--outputs: %s: no task %q asks %s (tasks: %s)", dir, id, rec.System, strings.Join(firstN(slices.Sorted(maps.Keys(byTask)), 8), ", "))
		}
	}
	store, err := cache.Open(b.CachePath(), cache.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	c := replay.New(store, replay.Config{Mode: replay.Offline})
	for _, id := range ids {
		prov := replay.Provenance{Where: rec.Where, When: rec.When, ProductVersion: rec.ProductVersion, File: id}
		if _, err := c.ImportReport(byTask[id].Prompt, outs[id], prov); err != nil {
			return err
		}
	}
	_, err = store.GC()
	return err
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// appendReports appends FinResearchBench II reports of product name, one
// per query id, to reports.jsonl.
func appendReports(snap snapshot, b *results.Bundle, name string, outs map[string]string) error {
	p := filepath.Join(b.Dir, results.InputsDir, "finresearchbench2", "reports.jsonl")
	old, err := snap.read(p)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		buf.WriteByte('\n')
	}
	enc := json.NewEncoder(&buf)
	for _, id := range slices.Sorted(maps.Keys(outs)) {
		if err := enc.Encode(struct {
			Query   string `json:"query"`
			Product string `json:"product"`
			Text    string `json:"text"`
		}{id, name, outs[id]}); err != nil {
			return err
		}
	}
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

func runSystemList(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("system list", "system list BUNDLE [--benchmark NAME]", systemDoc)
	bench := fset.String("benchmark", "", "only this benchmark")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageErr("system list: want one BUNDLE")
	}
	b, err := results.OpenBundle(fset.Arg(0))
	if err != nil {
		return &results.IntegrityError{Err: err}
	}
	recs, err := readRecords(snapshot{}, b)
	if err != nil {
		return err
	}
	for _, name := range b.Manifest.Benchmarks {
		if *bench != "" && name != *bench {
			continue
		}
		if _, ok := systemsPlaces[name]; !ok {
			continue
		}
		sf, err := readSystems(b, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s: %d systems\n", name, len(sf.list))
		for _, v := range sf.list {
			var s struct {
				Name, Provider, Model, Group string
			}
			json.Unmarshal(v, &s) // entries were checked when the benchmark loaded
			line := "  " + s.Name
			if s.Provider != "" {
				line += fmt.Sprintf(" (%s %s", s.Provider, s.Model)
				if s.Group != "" {
					line += ", " + s.Group
				}
				line += ")"
			}
			for _, r := range recs {
				if r.Benchmark == name && r.System == s.Name {
					line += ": " + r.Describe()
				}
			}
			fmt.Fprintln(env.Stdout, line)
		}
	}
	return nil
}

func runSystemRemove(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("system remove", "system remove BUNDLE --benchmark NAME --name SYSTEM", systemDoc)
	bench := fset.String("benchmark", "", "the benchmark `NAME`")
	name := fset.String("name", "", "the system's `NAME`")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 || *bench == "" || *name == "" {
		return usageErr("system remove: want BUNDLE, --benchmark and --name")
	}
	b, err := openEditable(ctx, env, fset.Arg(0), *bench)
	if err != nil {
		return err
	}
	sf, err := readSystems(b, *bench)
	if err != nil {
		return err
	}
	list := sf.list
	i := slices.IndexFunc(list, func(v json.RawMessage) bool { return systemName(v) == *name })
	if i < 0 {
		var names []string
		for _, v := range list {
			names = append(names, systemName(v))
		}
		return usageErr("system remove: %s has no system %q (it has %s)", *bench, *name, strings.Join(names, ", "))
	}
	snap := snapshot{}
	fail := func(err error) error {
		snap.restore()
		return err
	}
	snap.keep(sf.path, sf.raw)
	listJSON, err := json.Marshal(slices.Delete(list, i, i+1))
	if err != nil {
		return err
	}
	out, err := writeMembers(set(sf.ms, systemsPlaces[*bench].key, listJSON))
	if err != nil {
		return err
	}
	if err := os.WriteFile(sf.path, out, 0o644); err != nil {
		return fail(err)
	}
	// Lines of JSONL inputs that name the system go with it.
	dropLines := func(rel, field string) error {
		p := filepath.Join(b.Dir, results.InputsDir, *bench, rel)
		old, err := snap.read(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		for _, line := range bytes.SplitAfter(old, []byte("\n")) {
			var v map[string]any
			if json.Unmarshal(line, &v) == nil && v[field] == *name {
				continue
			}
			buf.Write(line)
		}
		return os.WriteFile(p, buf.Bytes(), 0o644)
	}
	switch *bench {
	case "findeepforecast":
		err = dropLines("prediction_log.jsonl", "system")
	case "finresearchbench2":
		err = dropLines("reports.jsonl", "product")
	}
	if err != nil {
		return fail(err)
	}
	if err := removeAlias(snap, b, *bench, *name); err != nil {
		return fail(err)
	}
	recs, err := readRecords(snap, b)
	if err != nil {
		return fail(err)
	}
	recs = slices.DeleteFunc(recs, func(r systemRecord) bool { return r.Benchmark == *bench && r.System == *name })
	if err := writeRecords(b, recs); err != nil {
		return fail(err)
	}
	if _, err := benchmarkCalls(ctx, b, *bench); err != nil {
		return fail(fmt.Errorf("system remove: %s does not load without %q (left unchanged): %w", *bench, *name, err))
	}
	m, changes, err := results.Reseal(b.Dir, b.Manifest.Files, snap.written(b.Dir))
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "removed %s system %q; its exchanges stay in the cache\n", *bench, *name)
	for _, c := range changes {
		fmt.Fprintf(env.Stdout, "  %s\n", c)
	}
	fmt.Fprintf(env.Stdout, "re-sealed %s (%d files)\n", b.Dir, len(m.Files))
	return nil
}

// removeAlias drops the aliases.csv rows of (bench, name).
func removeAlias(snap snapshot, b *results.Bundle, bench, name string) error {
	p := filepath.Join(b.Dir, results.AliasesName)
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	t, err := results.ReadCSV(bytes.NewReader(raw), results.AliasesName)
	if err != nil {
		return err
	}
	cb, cn := t.Col("benchmark"), t.Col("name")
	if cb < 0 || cn < 0 {
		return nil // loadAliases reports a bad header
	}
	keep := t.Rows[:0:0]
	for _, r := range t.Rows {
		if r[cb] != bench || r[cn] != name {
			keep = append(keep, r)
		}
	}
	if len(keep) == len(t.Rows) {
		return nil
	}
	snap.keep(p, raw)
	var buf bytes.Buffer
	for _, c := range t.Comments {
		buf.WriteString("# " + c + "\n")
	}
	cw := csv.NewWriter(&buf)
	cw.Write(t.Header)
	cw.WriteAll(keep)
	return os.WriteFile(p, buf.Bytes(), 0o644)
}

// systemProvenance returns, for the provenance of every output, one
// "system.BENCHMARK.NAME" entry per system that systems.jsonl describes.
func systemProvenance(b *results.Bundle) [][2]string {
	recs, err := readRecords(snapshot{}, b)
	if err != nil {
		// The file is covered by the manifest; a bad one is shown, not hidden.
		return [][2]string{{"system provenance", "systems.jsonl unreadable: " + err.Error()}}
	}
	var out [][2]string
	for _, r := range recs {
		out = append(out, [2]string{"system." + r.Benchmark + "." + r.System, r.Describe()})
	}
	return out
}
