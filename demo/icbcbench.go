package demo

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/icbc"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// ICBCBench returns the demo generator of ICBCBench: the authors' public
// tasks and rubrics as they are, the paper's 19 systems plus a hostile
// synthetic one, simulated objective, rubric and citation judges, and a
// simulated expert-score sample. At Full scale every system answers every
// task, tuned so that the tables land near the published ones; at Small
// scale three systems and the hostile one answer 32 of the 80 objective tasks
// and four report tasks. Every generated text says it is synthetic.
func ICBCBench() Generator { return icbcGen{} }

type icbcGen struct{}

// Benchmark returns icbc.Benchmark.
func (icbcGen) Benchmark() analysis.Benchmark { return icbc.Benchmark{} }

// icbcHostile is the hostile system's name.
const icbcHostile = "Hostile-Demo (synthetic)"

// icbcRefDate is the source-age reference date of the demo (the paper's
// experiments ran in April 2026).
const icbcRefDate = "2026-04-30"

// icbcAuthorFiles are the authors' files shipped unchanged, with their
// licence.
var icbcAuthorFiles = []string{icbc.ObjectiveFile, icbc.SubjectiveFile, icbc.PromptsFile, icbc.AuthorityFile, "LICENSE", "SOURCE.md"}

// icbcProfile is one system's published targets.
type icbcProfile struct {
	name, group string
	// by language: objective text-only and all (percent), expert,
	// citation and source (points; NaN when not reported).
	objText, objAll, expert, citation, source map[string]float64
	domain                                    map[string]float64 // percent per domain column
	accuracy, calErr                          float64
	failRate                                  float64 // share of reports that are planning traces, not reports
}

// icbcWorld is everything the oracle needs, computed up front so that
// answers never depend on call order.
type icbcWorld struct {
	seed     uint64
	in       *icbc.Inputs
	profiles map[string]*icbcProfile // by system name
	byModel  map[string]string       // sim model -> system or judge name
	objByQ   map[string]*icbc.Objective
	subByQ   map[string]*icbc.Subjective
	// subByText finds a subjective task by its question text.
	subByText map[string]*icbc.Subjective
	correct   map[[2]string]bool    // (system, objective id)
	conf      map[[2]string]int     // (system, objective id) -> confidence
	quality   map[[2]string]float64 // (system, subjective id) -> target expert score
	failed    map[[2]string]bool    // (system, subjective id) -> planning trace
	claims    map[string]string     // claim text -> verdict
	reports   map[[2]string]string  // (system, subjective id) -> report
	judges    []string              // rubric judge names, primary first
	// wrongFirst tunes the confidences with tied confidences ordered
	// wrong answers first, as the scoring did when the embedded Small
	// bundle was built; it is set at Small scale only, so that bundle stays
	// byte for byte the same (a rebuilt one can drop it). At Full scale the
	// tuning orders ties as the scoring does (task-file order), so that the
	// calibration table lands on the published one.
	wrongFirst bool
}

func icbcSlug(s string) string {
	s = strings.ToLower(s)
	s = regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(s, "-")
	return strings.Trim(s, "-")
}

func (w *icbcWorld) hash(parts ...string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d", w.seed)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return h.Sum64()
}

// unit is a uniform number in [0, 1) derived from the seed and parts.
func (w *icbcWorld) unit(parts ...string) float64 {
	return float64(w.hash(parts...)>>11) / (1 << 53)
}

// Generate writes the inputs into dir and returns the oracle.
func (icbcGen) Generate(dir string, opt Options) (replay.Oracle, error) {
	files := map[string][]byte{}
	for _, f := range icbcAuthorFiles {
		b, err := fs.ReadFile(assets, path.Join("assets/icbcbench", f))
		if err != nil {
			return nil, fmt.Errorf("icbcbench: %w", err)
		}
		files[f] = b
	}
	if f := opt.factor(); f > 1 {
		for _, n := range []string{icbc.ObjectiveFile, icbc.SubjectiveFile} {
			b, err := icbcRepeat(files[n], f)
			if err != nil {
				return nil, fmt.Errorf("icbcbench: %s: %w", n, err)
			}
			files[n] = b
		}
	}
	profiles, err := icbcProfiles()
	if err != nil {
		return nil, err
	}
	cfg := icbcConfig(opt, profiles)
	w := &icbcWorld{seed: opt.Seed, profiles: map[string]*icbcProfile{}}
	for _, p := range profiles {
		w.profiles[p.name] = p
	}
	w.profiles[icbcHostile] = &icbcProfile{name: icbcHostile, group: "open"}
	cb, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("icbcbench: %w", err)
	}
	files[icbc.ConfigFile] = append(cb, '\n')
	// Load the inputs back through the benchmark's own loader.
	mem := fstest.MapFS{}
	for n, b := range files {
		mem[n] = &fstest.MapFile{Data: b}
	}
	mem[cfg["human_scores"].(string)] = &fstest.MapFile{}
	w.in, err = icbc.Load(mem)
	if err != nil {
		return nil, fmt.Errorf("icbcbench: generated inputs: %w", err)
	}
	w.plan(opt)
	files[cfg["human_scores"].(string)] = w.humanScores(opt)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), files[n], 0o644); err != nil {
			return nil, fmt.Errorf("icbcbench: %w", err)
		}
	}
	return w, nil
}

// icbcRepeat appends factor-1 copies of every task in b (a JSON array
// of the authors' tasks) for scaling measurements: copy k of task 12 has
// the id "r<k>-12" (sorting after every numeric id) and a question marked
// as a synthetic copy, so that its prompts, and so its exchanges, are new.
func icbcRepeat(b []byte, factor int) ([]byte, error) {
	var tasks []map[string]json.RawMessage
	if err := json.Unmarshal(b, &tasks); err != nil {
		return nil, err
	}
	out := slices.Clone(tasks)
	for k := 2; k <= factor; k++ {
		for _, t := range tasks {
			var id, q string
			if err := json.Unmarshal(t["id"], &id); err != nil {
				return nil, fmt.Errorf("id: %w", err)
			}
			if err := json.Unmarshal(t["question"], &q); err != nil {
				return nil, fmt.Errorf("task %s: question: %w", id, err)
			}
			c := maps.Clone(t)
			c["id"], _ = json.Marshal(fmt.Sprintf("r%d-%s", k, id)) // a string always encodes
			c["question"], _ = json.Marshal(fmt.Sprintf("%s\n\n(Synthetic scaling copy %d of task %s.)", q, k, id))
			out = append(out, c)
		}
	}
	return json.MarshalIndent(out, "", "  ")
}

// icbcProfiles reads the targets from the published tables.
func icbcProfiles() ([]*icbcProfile, error) {
	read := func(name string) (*results.CSVTable, error) {
		b, err := fs.ReadFile(assets, "assets/published/icbcbench/"+name+".csv")
		if err != nil {
			return nil, fmt.Errorf("icbcbench: %w", err)
		}
		return results.ReadCSV(bytes.NewReader(b), name+".csv")
	}
	f := func(s string) float64 {
		if s == "" {
			return math.NaN()
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return math.NaN()
		}
		return x
	}
	byName := map[string]*icbcProfile{}
	var out []*icbcProfile
	for _, l := range []string{"en", "zh"} {
		t, err := read(l + "_detail")
		if err != nil {
			return nil, err
		}
		for _, row := range t.Rows {
			p := byName[row[0]]
			if p == nil {
				p = &icbcProfile{name: row[0], group: row[t.Col("group")], objText: map[string]float64{}, objAll: map[string]float64{},
					expert: map[string]float64{}, citation: map[string]float64{}, source: map[string]float64{}, domain: map[string]float64{}}
				byName[row[0]] = p
				out = append(out, p)
			}
			p.objText[l] = f(row[t.Col("objective_text_only")])
			p.objAll[l] = f(row[t.Col("objective_all")])
			p.expert[l] = f(row[t.Col("expert")])
			p.citation[l] = f(row[t.Col("citation")])
			p.source[l] = f(row[t.Col("source")])
		}
	}
	cal, err := read("calibration")
	if err != nil {
		return nil, err
	}
	for _, row := range cal.Rows {
		if p := byName[row[0]]; p != nil {
			p.accuracy, p.calErr = f(row[1]), f(row[2])
		}
	}
	dom, err := read("domains")
	if err != nil {
		return nil, err
	}
	for _, row := range dom.Rows {
		if p := byName[row[0]]; p != nil {
			for i, h := range dom.Header[2 : len(dom.Header)-1] {
				p.domain[h] = f(row[i+2])
			}
		}
	}
	// The paper reports report-generation failures (intermediate traces
	// instead of reports) for Kimi-k2.5 and unstable DeerFlow runs.
	for _, p := range out {
		switch {
		case p.name == "Kimi-k2.5":
			p.failRate = 0.1
		case strings.HasPrefix(p.name, "DeerFlow"):
			p.failRate = 0.05
		}
	}
	slices.SortFunc(out, func(a, b *icbcProfile) int { return strings.Compare(a.name, b.name) })
	return out, nil
}

// icbcSmallSystems answer at Small scale (with the hostile system).
var icbcSmallSystems = []string{"Gemini-deep-research", "OpenAI-o3-deep-research", "OpenClaw(+GPT-5.5)"}

// icbcSmallSubjective are the report tasks at Small scale: four heading
// styles, and rubric 36 whose points do not add up.
var icbcSmallSubjective = []string{"1", "12", "27", "36"}

func icbcConfig(opt Options, profiles []*icbcProfile) map[string]any {
	var systems []map[string]any
	for _, p := range profiles {
		if opt.Scale == Small && !slices.Contains(icbcSmallSystems, p.name) {
			continue
		}
		s := map[string]any{"name": p.name, "group": p.group, "provider": "sim", "model": "sim-" + icbcSlug(p.name)}
		if !math.IsNaN(p.citation["en"]) {
			s["citation"] = true
		}
		if !math.IsNaN(p.source["en"]) {
			s["source"] = true
		}
		systems = append(systems, s)
	}
	systems = append(systems, map[string]any{"name": icbcHostile, "group": "open", "provider": "sim", "model": "sim-hostile-demo", "citation": true, "source": true})
	judge := func(name, model string) map[string]any {
		return map[string]any{"name": name, "provider": "sim", "model": model, "params": map[string]any{"temperature": 0}}
	}
	cfg := map[string]any{
		"format":         icbc.ConfigFormat,
		"reference_date": icbcRefDate,
		"systems":        systems,
		// The objective judge is called as the authors' toolkit calls it
		// (no params: icbc.ToolkitJudgeParams).
		"objective_judge": map[string]any{"name": "Objective judge (synthetic)", "provider": "sim", "model": "sim-objective-judge"},
		"rubric_judges": []any{
			judge("Gemini-3.1-Pro-Preview judge (synthetic)", "sim-rubric-judge-gemini"),
			judge("GPT-5.4 judge (synthetic)", "sim-rubric-judge-gpt"),
			judge("Claude-opus-4-7 judge (synthetic)", "sim-rubric-judge-claude"),
		},
		"citation_judge": judge("Citation judge (synthetic)", "sim-citation-judge"),
		"domains": []any{
			map[string]string{"prefix": "BNK", "name": "banking"}, map[string]string{"prefix": "CAP", "name": "capital_markets"},
			map[string]string{"prefix": "INS", "name": "insurance"}, map[string]string{"prefix": "OTH", "name": "others"},
		},
		"tiers":        []float64{1, 0.85, 0.7, 0.2},
		"alpha":        0.002,
		"weights":      map[string]float64{"expert": 0.8, "citation": 0.1, "source": 0.1},
		"max_claims":   30,
		"human_scores": "human_scores.jsonl",
	}
	if opt.Scale == Small {
		cfg["objective_tasks"] = icbcSmallObjective()
		cfg["subjective_tasks"] = icbcSmallSubjective
	}
	return cfg
}

// icbcSmallObjective picks 32 objective tasks: per language every
// multimodal task, then text-only tasks in id order up to 16.
func icbcSmallObjective() []string {
	b, err := fs.ReadFile(assets, "assets/icbcbench/"+icbc.ObjectiveFile)
	if err != nil {
		return nil
	}
	var tasks []icbc.Objective
	if json.Unmarshal(b, &tasks) != nil {
		return nil
	}
	slices.SortFunc(tasks, func(a, b icbc.Objective) int {
		x, _ := strconv.Atoi(a.ID)
		y, _ := strconv.Atoi(b.ID)
		return cmp.Or(boolRank(a.TextOnly())-boolRank(b.TextOnly()), x-y)
	})
	var ids []string
	n := map[string]int{}
	for _, t := range tasks {
		if n[t.Language] < 16 {
			ids = append(ids, t.ID)
			n[t.Language]++
		}
	}
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return ids
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// icbcDomains maps classification_code prefixes to domain columns, as the
// demo configuration does.
var icbcDomains = map[string]string{"BNK": "banking", "CAP": "capital_markets", "INS": "insurance", "OTH": "others"}

func icbcDomain(o *icbc.Objective) string {
	p, _, _ := strings.Cut(o.ClassificationCode, "-")
	return icbcDomains[p]
}

// plan fixes every simulated outcome.
func (w *icbcWorld) plan(opt Options) {
	cfg := &w.in.Config
	w.wrongFirst = opt.Scale == Small
	w.byModel = map[string]string{}
	for _, s := range cfg.Systems {
		w.byModel[s.Model.Model] = s.Name
	}
	for _, j := range cfg.RubricJudges {
		w.judges = append(w.judges, j.Name)
	}
	w.objByQ, w.subByQ, w.subByText = map[string]*icbc.Objective{}, map[string]*icbc.Subjective{}, map[string]*icbc.Subjective{}
	var objs []*icbc.Objective
	for i := range w.in.Objectives {
		o := &w.in.Objectives[i]
		if len(cfg.ObjectiveTasks) == 0 || slices.Contains(cfg.ObjectiveTasks, o.ID) {
			objs = append(objs, o)
			w.objByQ[icbc.SolverPrompt(o, &w.in.Prompts)] = o
		}
	}
	var subs []*icbc.Subjective
	for i := range w.in.Subjectives {
		s := &w.in.Subjectives[i]
		if len(cfg.SubjectiveTasks) == 0 || slices.Contains(cfg.SubjectiveTasks, s.ID) {
			subs = append(subs, s)
			w.subByQ[icbc.ReportPrompt(s)] = s
			w.subByText[s.Question] = s
		}
	}
	w.correct, w.conf = map[[2]string]bool{}, map[[2]string]int{}
	w.quality, w.failed = map[[2]string]float64{}, map[[2]string]bool{}
	w.reports, w.claims = map[[2]string]string{}, map[string]string{}
	for _, s := range cfg.Systems {
		p := w.profiles[s.Name]
		w.assignCorrect(p, objs)
		w.assignConfidence(p, objs)
		for _, l := range []string{"en", "zh"} {
			var ts []*icbc.Subjective
			for _, t := range subs {
				if t.Language == l {
					ts = append(ts, t)
				}
			}
			w.assignQuality(p, l, ts)
			w.writeReports(p, &s, l, ts, opt)
		}
	}
}

// assignCorrect picks which tasks p answers correctly: the published
// counts per language over text-only and multimodal tasks, then swaps
// within those groups that bring the per-domain counts nearest the
// published domain accuracies.
func (w *icbcWorld) assignCorrect(p *icbcProfile, objs []*icbc.Objective) {
	if p.name == icbcHostile {
		for _, o := range objs {
			w.correct[[2]string{p.name, o.ID}] = w.unit(p.name, o.ID, "correct") < 0.2
		}
		return
	}
	groups := map[string][]*icbc.Objective{}
	var keys []string
	for _, o := range objs {
		k := o.Language + "/" + strconv.FormatBool(o.TextOnly())
		if groups[k] == nil {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], o)
	}
	slices.Sort(keys)
	size := map[string]float64{}
	for _, o := range objs {
		size[icbcDomain(o)]++
	}
	count := map[string]float64{}
	for _, k := range keys {
		g := groups[k]
		l, text := g[0].Language, strings.HasSuffix(k, "true")
		nText, nAll := 0, 0
		for _, o := range objs {
			if o.Language == l {
				nAll++
				if o.TextOnly() {
					nText++
				}
			}
		}
		kText := int(math.Round(p.objText[l] * float64(nText) / 100))
		want := kText
		if !text {
			want = int(math.Round(p.objAll[l]*float64(nAll)/100)) - kText
		}
		want = max(0, min(want, len(g)))
		slices.SortFunc(g, func(a, b *icbc.Objective) int {
			return cmp.Compare(w.hash(p.name, a.ID, "order"), w.hash(p.name, b.ID, "order"))
		})
		for i, o := range g {
			w.correct[[2]string{p.name, o.ID}] = i < want
			if i < want {
				count[icbcDomain(o)]++
			}
		}
	}
	cost := func() float64 {
		c := 0.0
		for d, n := range size {
			t := p.domain[d] / 100 * n
			c += (count[d] - t) * (count[d] - t)
		}
		return c
	}
	for range 200 {
		best, ba, bb := cost(), "", ""
		var bda, bdb string
		for _, k := range keys {
			for _, a := range groups[k] {
				if !w.correct[[2]string{p.name, a.ID}] {
					continue
				}
				for _, b := range groups[k] {
					da, db := icbcDomain(a), icbcDomain(b)
					if w.correct[[2]string{p.name, b.ID}] || da == db {
						continue
					}
					count[da]--
					count[db]++
					if c := cost(); c < best-1e-9 {
						best, ba, bb, bda, bdb = c, a.ID, b.ID, da, db
					}
					count[da]++
					count[db]--
				}
			}
		}
		if ba == "" {
			break
		}
		w.correct[[2]string{p.name, ba}], w.correct[[2]string{p.name, bb}] = false, true
		count[bda]--
		count[bdb]++
	}
}

// assignConfidence gives every answer an integer confidence, correct
// answers more confident than wrong ones (where the published error
// allows), shifted so that the calibration
// error in bins of icbcBeta lands on the published one (the published
// errors exceed what a single bin allows, e.g. 58.75% accuracy with 46.23%
// error, so the authors' figures use bins of 10).
func (w *icbcWorld) assignConfidence(p *icbcProfile, objs []*icbc.Objective) {
	if len(objs) == 0 {
		return
	}
	target := p.calErr / 100
	if p.name == icbcHostile {
		target = 0.85
	}
	base := make([]float64, len(objs))
	setBase := func(bonus float64) {
		for i, o := range objs {
			base[i] = 40 + 16*(2*w.unit(p.name, o.ID, "conf")-1)
			if w.correct[[2]string{p.name, o.ID}] {
				base[i] += bonus
			}
		}
	}
	vals := make([]int, len(objs))
	at := func(shift float64) float64 {
		pred := make([]stats.Prediction, len(objs))
		for i, o := range objs {
			vals[i] = int(math.Round(min(max(base[i]+shift, 0), 100)))
			pred[i] = stats.Prediction{Confidence: float64(vals[i]) / 100, Correct: w.correct[[2]string{p.name, o.ID}]}
		}
		// pred is in task-file order, which tied confidences keep in
		// stats.CalibrationError as in the scoring (see wrongFirst).
		if w.wrongFirst {
			slices.SortStableFunc(pred, func(a, b stats.Prediction) int {
				return cmp.Or(cmp.Compare(a.Confidence, b.Confidence), boolRank(a.Correct)-boolRank(b.Correct))
			})
		}
		e, _ := stats.CalibrationError(pred, stats.Calibration{Beta: icbcBeta})
		return e
	}
	// tune returns the shift of every confidence that brings the error
	// nearest the target.
	tune := func() float64 {
		// The error grows with the shift once confidence exceeds accuracy.
		lo, hi := -40.0, 100.0
		for range 60 {
			mid := (lo + hi) / 2
			if at(mid) < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		if w.wrongFirst {
			return hi
		}
		// In task-file order the error jumps where a tie group moves
		// across a bin edge, so the bisection's end can overshoot: take
		// the shift around it that lands closest to the target.
		best, bestD := hi, math.Abs(at(hi)-target)
		for k := -100; k <= 100; k++ {
			if sh := hi + float64(k)*0.05; math.Abs(at(sh)-target) < bestD {
				best, bestD = sh, math.Abs(at(sh)-target)
			}
		}
		return best
	}
	setBase(12)
	hi := tune()
	if !w.wrongFirst {
		// With ties in task-file order, confidences all at 100 still mix
		// right and wrong answers in a bin, which caps the error below
		// some published ones: then correct answers get less of a
		// confidence bonus (down to less confidence than wrong ones) until
		// the target is reached.
		bestBonus, bestD := 12.0, math.Abs(at(hi)-target)
		for _, bonus := range []float64{0, -12, -24, -36} {
			if bestD <= 0.002 {
				break
			}
			setBase(bonus)
			if sh := tune(); math.Abs(at(sh)-target) < bestD {
				bestBonus, bestD, hi = bonus, math.Abs(at(sh)-target), sh
			}
		}
		setBase(bestBonus)
	}
	at(hi)
	for i, o := range objs {
		w.conf[[2]string{p.name, o.ID}] = vals[i]
	}
}

// icbcBeta is the calibration bin size the demo's confidences are tuned
// for: the benchmark's default.
const icbcBeta = 10

// assignQuality sets each report's target expert score: the published
// expert score of the system plus task noise that sums to zero over the
// language's tasks, so the mean lands on the target; failed reports
// (planning traces) score 0 and are left out of the mean.
func (w *icbcWorld) assignQuality(p *icbcProfile, l string, ts []*icbc.Subjective) {
	target := p.expert[l]
	if p.name == icbcHostile {
		target = 30
	}
	var ok []*icbc.Subjective
	for _, t := range ts {
		key := [2]string{p.name, t.ID}
		if w.unit(p.name, t.ID, "fail") < p.failRate {
			w.failed[key] = true
			continue
		}
		ok = append(ok, t)
	}
	mean := 0.0
	for _, t := range ok {
		mean += w.unit(p.name, t.ID, "quality") / float64(len(ok))
	}
	for _, t := range ok {
		q := target + 32*(w.unit(p.name, t.ID, "quality")-mean)
		w.quality[[2]string{p.name, t.ID}] = min(max(q, 5), 98)
	}
}

// icbcTierDomains are example hosts per authority tier (tier 4: none of
// the authors' lists).
func (w *icbcWorld) tierHosts(tier int) []string {
	a := &w.in.Authority
	switch tier {
	case 1:
		return append(slices.Clone(a.HighTrustDomains), "data.stats.gov.cn", "www.treasury.gov", "econ.ox.ac.uk")
	case 2:
		return a.MediumHighTrustDomains
	case 3:
		return a.MediumTrustDomains
	}
	return []string{"finance-notes.example.net", "market-chatter.example.org", "quick-takes.example.com"}
}

// writeReports writes the reports of system p in language l, with
// references whose tiers and ages hit the published source quality and
// claims of which the published share is supported.
func (w *icbcWorld) writeReports(p *icbcProfile, s *icbc.System, l string, ts []*icbc.Subjective, opt Options) {
	nRefs, nClaims := 5, 6
	if opt.Scale == Small {
		nRefs, nClaims = 3, 4
	}
	srcTarget := p.source[l] / 100
	if math.IsNaN(srcTarget) || srcTarget <= 0 {
		srcTarget = 0.15
	}
	citTarget := p.citation[l] / 100
	if math.IsNaN(citTarget) {
		citTarget = 0.6
	}
	tiers := w.in.Config.Tiers
	supportedSoFar := 0
	for ti, t := range ts {
		key := [2]string{p.name, t.ID}
		code := func(i int) string { return fmt.Sprintf("%06x", w.hash(p.name, t.ID, strconv.Itoa(i))&0xffffff) }
		if w.failed[key] {
			w.reports[key] = icbcTrace(p.name, t, l)
			continue
		}
		var b strings.Builder
		title := t.ReportType
		if l == "zh" {
			title = t.ReportTypeZh
		}
		if l == "en" {
			fmt.Fprintf(&b, "# Synthetic demo report: %s\n\nPrepared by %s (synthetic demo output, not written by the real system).\n\n## Key findings\n\n", title, p.name)
		} else {
			fmt.Fprintf(&b, "# 合成演示报告：%s\n\n由 %s 生成（合成演示输出，并非真实系统所写）。\n\n## 主要发现\n\n", title, p.name)
		}
		if p.name == icbcHostile {
			b.WriteString(icbcHostileReport)
		}
		for i := range nClaims {
			ref := i%nRefs + 1
			if l == "en" {
				fmt.Fprintf(&b, "- Synthetic finding %d (code %s) on task %s: the cited source documents this development [%d].\n", i+1, code(i), t.ID, ref)
			} else {
				fmt.Fprintf(&b, "- 合成发现 %d（编号 %s，任务 %s）：所引来源记载了这一进展 [%d]。\n", i+1, code(i), t.ID, ref)
			}
		}
		if l == "en" {
			b.WriteString("\n## Analysis\n\nThis paragraph stands in for the analysis of a real report; it is synthetic and makes no factual claim.\n\n## References\n\n")
		} else {
			b.WriteString("\n## 分析\n\n本段代替真实报告的分析内容，为合成文本，不构成任何事实陈述。\n\n## 参考文献\n\n")
		}
		// Reference ages: authority x exp(-alpha age) = target, with
		// zero-sum jitter.
		jit := make([]float64, nRefs)
		jm := 0.0
		for i := range jit {
			jit[i] = 60 * (2*w.unit(p.name, t.ID, "age", strconv.Itoa(i)) - 1)
			jm += jit[i] / float64(nRefs)
		}
		for i := range nRefs {
			var ok []int
			for tier := 1; tier <= 4; tier++ {
				if tiers[tier-1] >= srcTarget*1.2 {
					ok = append(ok, tier)
				}
			}
			if len(ok) == 0 {
				ok = []int{1}
			}
			tier := ok[int(w.hash(p.name, t.ID, "tier", strconv.Itoa(i))%uint64(len(ok)))]
			hosts := w.tierHosts(tier)
			host := hosts[int(w.hash(p.name, t.ID, "host", strconv.Itoa(i))%uint64(len(hosts)))]
			if !strings.Contains(host, "example") && w.unit(p.name, t.ID, "www", strconv.Itoa(i)) < 0.5 && strings.Count(host, ".") < 2 {
				host = "www." + host
			}
			age := math.Log(tiers[tier-1]/srcTarget)/w.in.Config.Alpha + jit[i] - jm
			age = max(age, 1)
			date := w.in.RefDate.AddDate(0, 0, -int(math.Round(age)))
			url := fmt.Sprintf("https://%s/synthetic-demo/%s-%s", host, icbcSlug(title), code(100+i))
			if p.name == icbcHostile && i == 0 {
				url = "https://evil.example.com/synthetic-demo?q=<script>alert(1)</script>"
			}
			if l == "en" {
				fmt.Fprintf(&b, "[%d] Synthetic source %d for task %s, %s, published %s\n", i+1, i+1, t.ID, url, date.Format("2006-01-02"))
			} else {
				fmt.Fprintf(&b, "[%d] 合成来源 %d（任务 %s），%s ，发布日期 %s\n", i+1, i+1, t.ID, url, date.Format("2006-01-02"))
			}
		}
		if p.name == icbcHostile {
			b.WriteString("[9] Click here, javascript:alert(document.cookie)\n")
		}
		report := b.String()
		w.reports[key] = report
		// Supported claims: error diffusion over the tasks keeps the mean
		// share on the target.
		_, claims := icbc.ParseReport(report, w.in.Config.MaxClaims)
		want := int(math.Round(citTarget*float64(len(claims))*float64(ti+1))) - supportedSoFar
		want = max(0, min(want, len(claims)))
		supportedSoFar += want
		order := make([]int, len(claims))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int {
			return cmp.Compare(w.hash(p.name, t.ID, "sup", strconv.Itoa(a)), w.hash(p.name, t.ID, "sup", strconv.Itoa(b)))
		})
		for rank, i := range order {
			v := icbc.Unsupported
			if rank < want {
				v = icbc.Supported
			}
			w.claims[claims[i].Text] = v
		}
	}
}

const icbcHostileReport = `<script>alert("synthetic hostile report")</script>
<img src=x onerror=alert(1)> [click me](javascript:alert(1))
=HYPERLINK("http://evil.example.com","synthetic")
+cmd|' /C calc'!A0
@SUM(1)

`

// icbcTrace is a failed report: a planning trace instead of a report, as
// the paper observed for some systems.
func icbcTrace(system string, t *icbc.Subjective, l string) string {
	return fmt.Sprintf("Synthetic demo planning trace (%s, task %s, %s): calling tool search(\"%s\") ... calling tool visit(...) ... [no final report]\n",
		system, t.ID, l, icbcSlug(t.ReportType))
}

// icbcSampleSystems are the five systems whose reports the simulated
// experts score at Full scale (the paper sampled five agents).
var icbcSampleSystems = []string{"Gemini-deep-research", "OpenAI-o3-deep-research", "Kimi-deep-research", "Perplexity-deep-research", "Doubao-deep-research"}

// humanScores writes human_scores.jsonl: two or three simulated experts
// per sampled task score each sampled report around its quality with
// expert noise. Full scale samples 15 tasks (5 EN, 10 ZH), as the paper.
func (w *icbcWorld) humanScores(opt Options) []byte {
	systems := icbcSampleSystems
	if opt.Scale == Small {
		systems = icbcSmallSystems
	}
	var tasks []*icbc.Subjective
	n := map[string]int{}
	quota := map[string]int{"en": 5, "zh": 10}
	for i := range w.in.Subjectives {
		t := &w.in.Subjectives[i]
		if _, ok := w.subByQ[icbc.ReportPrompt(t)]; !ok {
			continue
		}
		if opt.Scale == Small || n[t.Language] < quota[t.Language] {
			tasks = append(tasks, t)
			n[t.Language]++
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, t := range tasks {
		// Experts as a group judge a task more or less harshly than the
		// LLM judges; each expert also has a bias and noise of their own.
		shared := 20 * (2*w.unit(t.ID, "shared") - 1)
		experts := 2 + int(w.hash(t.ID, "experts")%2)
		for e := range experts {
			expert := fmt.Sprintf("E%02d", 1+int(w.hash(t.ID, "expert", strconv.Itoa(e))%25))
			bias := 6 * (2*w.unit(t.ID, expert, "bias") - 1)
			for _, s := range systems {
				q, ok := w.quality[[2]string{s, t.ID}]
				if !ok {
					continue
				}
				score := q + shared + bias + 20*(2*w.unit(t.ID, expert, s, "noise")-1)
				score = math.Round(min(max(score, 0), 100))
				enc.Encode(icbc.HumanScore{Task: t.ID, System: s, Expert: expert, Score: score}) // encoding a plain struct cannot fail
			}
		}
	}
	return b.Bytes()
}

var (
	reIcbcSub    = regexp.MustCompile(`(?m)^(\d+\.\d+) .* \(max ([0-9.]+)\)$`)
	reIcbcBy     = regexp.MustCompile(`(?:Prepared by (.+?) \(synthetic demo output|由 (.+?) 生成（合成演示输出)`)
	reIcbcAnswer = regexp.MustCompile(`(?m)^(?:Exact Answer|确切答案)\s*[:：]\s*(.*)$`)
	reIcbcConf   = regexp.MustCompile(`(?m)^(?:Confidence|置信度)\s*[:：]\s*(\d+)`)
	reIcbcClaim  = regexp.MustCompile(`(?m)^(C\d+): (.*)$`)
	reIcbcChoice = regexp.MustCompile(`^[A-H](?:,\s*[A-H])*$|^[A-H]+$`)
)

// between returns the text of s between the first a and the next b.
func between(s, a, b string) string {
	_, rest, ok := strings.Cut(s, a)
	if !ok {
		return ""
	}
	out, _, _ := strings.Cut(rest, b)
	return out
}

// Respond plays every system and judge.
func (w *icbcWorld) Respond(p results.Prompt) (string, error) {
	switch p.Model {
	case "sim-objective-judge":
		return w.judgeObjective(p.User), nil
	case "sim-citation-judge":
		return w.judgeCitations(p.User), nil
	}
	for j, name := range w.in.Config.RubricJudges {
		if name.Model == p.Model {
			return w.judgeRubric(j, p.User), nil
		}
	}
	sys, ok := w.byModel[p.Model]
	if !ok {
		return "", fmt.Errorf("icbcbench demo: unknown model %q", p.Model)
	}
	if o, ok := w.objByQ[p.User]; ok {
		return w.solve(sys, o), nil
	}
	if t, ok := w.subByQ[p.User]; ok {
		return w.reports[[2]string{sys, t.ID}], nil
	}
	return "", fmt.Errorf("icbcbench demo: %s: unknown task", sys)
}

// wrongAnswer is a plausible wrong answer to o.
func (w *icbcWorld) wrongAnswer(sys string, o *icbc.Objective) string {
	a := o.Answer.String()
	if f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(a, "%")), 64); err == nil {
		return strconv.FormatFloat(f*1.13+1, 'f', 2, 64)
	}
	if reIcbcChoice.MatchString(a) {
		for _, c := range []string{"B", "AC", "D", "ABE", "C"} {
			if norm(c) != norm(a) {
				return c
			}
		}
	}
	return "Not determinable from the available sources"
}

func (w *icbcWorld) solve(sys string, o *icbc.Objective) string {
	key := [2]string{sys, o.ID}
	ans := w.wrongAnswer(sys, o)
	if w.correct[key] {
		ans = strings.Join(strings.Fields(o.Answer.String()), " ")
	}
	conf := w.conf[key]
	if sys == icbcHostile {
		return w.hostileAnswer(o, ans, conf)
	}
	if o.Language == "zh" {
		return fmt.Sprintf("解析：合成演示回答（%s），按题目要求整理数据并计算得到结果。\n确切答案：%s\n置信度：%d%%", sys, ans, conf)
	}
	return fmt.Sprintf("Explanation: Synthetic demo answer by %s; the figures were gathered and computed as the question asks.\nExact Answer: %s\nConfidence: %d%%", sys, ans, conf)
}

func (w *icbcWorld) hostileAnswer(o *icbc.Objective, ans string, conf int) string {
	id, _ := strconv.Atoi(o.ID)
	switch id % 6 {
	case 0:
		return fmt.Sprintf("Explanation: <script>alert('synthetic')</script>\nExact Answer: =HYPERLINK(\"http://evil.example.com\",\"%s\")\nConfidence: %d%%", ans, conf)
	case 1:
		return fmt.Sprintf("Explanation: <img src=x onerror=alert(1)> synthetic\nExact Answer: +cmd|' /C calc'!A0\nConfidence: %d%%", conf)
	case 2:
		return fmt.Sprintf("Explanation: [details](javascript:alert(1)) synthetic\nExact Answer: @SUM(1)\nConfidence: %d%%", conf)
	case 3:
		return "Synthetic malformed output {{{{ ```json \x00\x01 <<<" + strings.Repeat("]", 40)
	case 4:
		if id == 4 {
			// One huge output.
			return "Explanation: " + strings.Repeat("Synthetic hostile padding. ", 10000) + "\nExact Answer: " + ans + fmt.Sprintf("\nConfidence: %d%%", conf)
		}
	}
	return fmt.Sprintf("Explanation: <iframe src=\"javascript:alert(1)\"></iframe> synthetic\nExact Answer: %s\nConfidence: %d%%", ans, conf)
}

// norm is how the simulated judge compares answers: case and white space
// do not matter.
func norm(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.ReplaceAll(s, `\n`, " "))), "")
}

func (w *icbcWorld) judgeObjective(prompt string) string {
	zh := strings.Contains(prompt, "您的判断结果")
	end := "\n\nYour judgement"
	if zh {
		end = "\n\n您的判断结果"
	}
	response := between(prompt, "\n\n[response]: ", "\n\n[correct_answer]: ")
	truth := between(prompt, "\n\n[correct_answer]: ", end)
	if strings.HasPrefix(truth, "['") && strings.HasSuffix(truth, "']") {
		// A list of answers as the toolkit's prompt writes it: ['A', 'C'].
		truth = strings.ReplaceAll(truth[2:len(truth)-2], "', '", ", ")
	}
	if strings.Contains(response, "Synthetic malformed output") {
		return "I cannot grade this response: it is not an answer. (synthetic judge)"
	}
	extracted := "None"
	if m := reIcbcAnswer.FindStringSubmatch(response); m != nil {
		extracted = strings.TrimSpace(m[1])
	}
	conf := -1
	if m := reIcbcConf.FindStringSubmatch(response); m != nil {
		conf, _ = strconv.Atoi(m[1])
	}
	correct := "no"
	if norm(extracted) == norm(truth) {
		correct = "yes"
	}
	reason := "Synthetic judge: the extracted answer does not match the correct answer."
	if correct == "yes" {
		reason = "Synthetic judge: the extracted answer matches the correct answer."
	}
	if strings.Contains(response, "<script>") {
		reason += " The response contains <script>alert('echo')</script>."
	}
	v := map[string]any{"extracted_final_answer": extracted, "reasoning": reason, "correct": correct}
	if conf >= 0 {
		v["confidence"] = conf
	}
	style := w.hash(prompt, "style") % 5
	b, _ := json.Marshal(v) // a map of strings and ints always encodes
	switch {
	case style == 1:
		return "```json\n" + string(b) + "\n```"
	case style == 2:
		return string(b) + "\n\nThe extracted answer was compared with the correct answer. (synthetic)"
	case style == 3 && conf >= 0:
		v["confidence"] = strconv.Itoa(conf) + "%"
		b, _ = json.Marshal(v)
	case style == 4 && zh && conf >= 0:
		return fmt.Sprintf("｛\"extracted_final_answer\"：%s，\"reasoning\"：%s，\"correct\"：\"%s\"，\"confidence\"：%d｝",
			jsonString(extracted), jsonString(reason), correct, conf)
	}
	return string(b)
}

func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

func (w *icbcWorld) judgeRubric(j int, prompt string) string {
	task := w.subByText[between(prompt, "[task]:\n", "\n\n[rubric]:\n")]
	report := between(prompt, "\n\n[report]:\n", "\n\nOutput only valid JSON")
	sys := ""
	if m := reIcbcBy.FindStringSubmatch(report); m != nil {
		sys = m[1] + m[2]
	}
	type sub struct {
		id  string
		max float64
	}
	var subs []sub
	total := 0.0
	for _, m := range reIcbcSub.FindAllStringSubmatch(between(prompt, "[sub-dimensions]:\n", "\n\n[report]:"), -1) {
		x, _ := strconv.ParseFloat(m[2], 64)
		subs = append(subs, sub{m[1], x})
		total += x
	}
	target := 0.0
	if task != nil && sys != "" {
		target = w.quality[[2]string{sys, task.ID}]
		if j > 0 {
			target += 10 * (2*w.unit(w.judges[j], task.ID, sys, "judge") - 1)
		}
		target = min(max(target, 0), 100)
	}
	// Largest-remainder rounding: integer scores proportional to the
	// points, adding up to the rounded target.
	want := int(math.Round(target))
	scores := make([]float64, len(subs))
	rem := make([]float64, len(subs))
	got := 0
	for i, s := range subs {
		x := s.max * target / max(total, 1)
		scores[i] = math.Floor(x)
		rem[i] = x - scores[i]
		got += int(scores[i])
	}
	idx := make([]int, len(subs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
	for _, i := range idx {
		if got >= want {
			break
		}
		if scores[i] < subs[i].max {
			scores[i]++
			got++
		}
	}
	type out struct {
		ID            string  `json:"id"`
		Score         float64 `json:"score"`
		Justification string  `json:"justification"`
	}
	var res []out
	for i, s := range subs {
		why := fmt.Sprintf("Synthetic judgement: the report meets this sub-dimension's bands at %g of %g points.", scores[i], s.max)
		sc := scores[i]
		if sys == icbcHostile && i == 0 {
			sc, why = s.max+5, "Synthetic hostile case: score above the maximum <script>alert(1)</script>"
		}
		res = append(res, out{s.id, sc, why})
	}
	b, _ := json.Marshal(map[string]any{"scores": res}) // plain values always encode
	if w.hash(prompt, "fence")%3 == 0 {
		return "```json\n" + string(b) + "\n```"
	}
	return string(b)
}

func (w *icbcWorld) judgeCitations(prompt string) string {
	type out struct {
		ID      string `json:"id"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason"`
	}
	var res []out
	for _, m := range reIcbcClaim.FindAllStringSubmatch(prompt, -1) {
		v, ok := w.claims[m[2]]
		if !ok {
			v = icbc.Unknown
		}
		res = append(res, out{m[1], v, "Synthetic citation check."})
	}
	b, _ := json.Marshal(map[string]any{"verdicts": res}) // plain values always encode
	return string(b)
}
