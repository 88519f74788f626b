package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/consensus"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// FinResearchBench2 returns the demo generator of FinResearchBench II: ten
// products named as in the paper plus a hostile synthetic one, a panel of
// three simulated judges, queries in the paper's seven categories,
// candidate rubrics, repeated runs and a human-label sample. Every text is
// synthetic and says so.
func FinResearchBench2() Generator { return frb2Gen{hostile: true} }

type frb2Gen struct{ hostile bool }

// Benchmark returns consensus.Benchmark.
func (frb2Gen) Benchmark() analysis.Benchmark { return consensus.Benchmark{} }

// Generate writes the inputs into dir and returns the judges' oracle.
func (g frb2Gen) Generate(dir string, opt Options) (replay.Oracle, error) {
	w := newFRB2World(opt, g.hostile)
	files := w.files()
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			return nil, fmt.Errorf("finresearchbench2: %w", err)
		}
	}
	return w, nil
}

// frb2Product is a product and its simulated quality: the chance its
// report satisfies a discriminating rubric (the paper's gold item pass
// rate).
type frb2Product struct {
	name, vendor string
	quality      float64
}

var frb2Products = []frb2Product{
	{"Kimi", "Moonshot AI", 0.5858},
	{"Doubao", "ByteDance", 0.5350},
	{"Gemini", "Google", 0.5331},
	{"ChatGPT", "OpenAI", 0.4669},
	{"Qwen", "Alibaba", 0.4665},
	{"Metasota", "Metaso", 0.4058},
	{"AutoGLM", "Zhipu AI", 0.3381},
	{"Minimax", "MiniMax", 0.2646},
	{"Perplexity", "Perplexity", 0.2223},
	{"Internal System", "StepFun", 0.5065},
}

// hostileProduct is the demo-only product whose report carries markup and
// spreadsheet formulas, to exercise every output's escaping.
var hostileProduct = frb2Product{"Hostile-Demo (synthetic)", "", 0.30}

// A frb2Judge is a simulated judge; bias above 0 makes it more lenient
// (no-to-yes slips likelier than yes-to-no), and style picks its answer
// format.
type frb2Judge struct {
	name, vendor string
	bias         float64
	style        int
}

var frb2Judges = []frb2Judge{
	{"gpt-5.4", "OpenAI", 0.10, 0},
	{"claude-opus-4-7", "Anthropic", -0.10, 1},
	{"gemini-3-pro-preview", "Google", 0.20, 2},
}

var frb2Categories = []string{
	"Stock Comparison", "Stock Trend Prediction", "Fundamental Consultation", "Stock Trading Advice",
	"Theme/Sector Analysis", "Precious Metals Analysis", "Individual Stock Analysis",
}

// Fictional companies and themes for synthetic queries.
var frb2Entities = []string{
	"Northbridge Semiconductor", "Jade River Pharma", "Harbor Lane Motors", "Silver Pine Bank", "Redwood Grid Energy",
	"Eastgate Retail", "Blue Summit Robotics", "Golden Delta Foods", "Crescent Bay Logistics", "Ironleaf Mining",
}

var frb2Themes = []string{"AI application software", "new-energy vehicles", "semiconductor equipment", "innovative drugs", "consumer electronics", "cloud computing"}

var frb2QueryTemplates = map[string]string{
	"Stock Comparison":          "Which is more suitable for investment, %s or %s?",
	"Stock Trend Prediction":    "What is the latest analysis on whether %s stock will rise or fall tomorrow?",
	"Fundamental Consultation":  "What are the reasons for the change in %s's net profit this year?",
	"Stock Trading Advice":      "Does %s have long-term investment value at the current price?",
	"Theme/Sector Analysis":     "Give a comprehensive review of the %s sub-sectors.",
	"Precious Metals Analysis":  "When is the right time to buy gold after the recent price correction?",
	"Individual Stock Analysis": "Analyse %s in depth: can its investment logic become a market hotspot? Give a target price.",
}

// Rubric dimensions with their share of candidates and their run-to-run
// noise relative to the average (instruction following steadiest,
// insight least steady, as the paper reports).
var frb2Dimensions = []struct {
	name         string
	share, noise float64
	templates    []string
}{
	{"comprehensiveness", 0.25, 0.95, []string{
		"Does the report cover %s's revenue and profit trend over the last three years?",
		"Does the report discuss the main competitors of %s?",
		"Does the report list the key risks for %s?",
		"Does the report mention the valuation multiples of %s?",
	}},
	{"insight", 0.39, 1.12, []string{
		"Does the report explain how interest-rate changes affect %s?",
		"Does the report identify the main driver of %s's recent share-price move?",
		"Does the report connect industry policy to %s's outlook with a concrete mechanism?",
		"Does the report give a reasoned bull and bear case for %s?",
	}},
	{"instruction_following", 0.17, 0.75, []string{
		"Does the report answer the question about %s directly in its first section?",
		"Does the report give a clear recommendation on %s as the query asks?",
		"Does the report state a time horizon for its view on %s?",
	}},
	{"readability", 0.19, 1.03, []string{
		"Is the analysis of %s organised under clear headings?",
		"Are the figures about %s presented in a table or list?",
		"Does the report on %s avoid unexplained jargon?",
	}},
}

// Simulation constants, tuned so that at full scale the filtering, pass
// rates, stability and validation land near the published figures.
const (
	frb2AlwaysYes = 0.283 // rubrics every report satisfies
	frb2AlwaysNo  = 0.006 // rubrics no report satisfies
	frb2Clear     = 0.137 // rubrics every judge reads the same way
	frb2Hard      = 0.25  // share of hard items on ambiguous rubrics
	// Judge slips per label: systematic (same in every run) and per run.
	frb2SysClear, frb2RunClear = 0.0003, 0.0003
	frb2SysEasy, frb2RunEasy   = 0.005, 0.005
	frb2SysHard, frb2RunHard   = 0.218, 0.145
	// Human slips per label on easy and hard items.
	frb2HumanEasy, frb2HumanHard = 0.045, 0.38
)

// frb2Sizes are the sizes at a scale.
type frb2Sizes struct {
	queries        int
	rubrics        float64 // mean candidates per query
	stabilityItems int
	humanRate      float64 // share of rubric-report items in the human sample
	faultRate      float64 // share of answers that skip a rubric
	garbleRate     float64 // share of stability reruns that are unparsable
}

func frb2SizesOf(s Scale, factor int) frb2Sizes {
	if s == Full {
		return frb2Sizes{queries: 104 * factor, rubrics: 138.94, stabilityItems: 48, humanRate: 0.028, faultRate: 0.003}
	}
	return frb2Sizes{queries: 8, rubrics: 20, stabilityItems: 6, humanRate: 0.15, faultRate: 0.015, garbleRate: 0.2}
}

// frb2Rubric is a candidate rubric with its hidden nature.
type frb2Rubric struct {
	id, text, dim string
	noise         float64 // the dimension's run-noise factor
	kind          int     // 0 discriminating, 1 always yes, 2 always no
	clear         bool
}

// frb2World is the hidden state of the simulation; it is also the oracle.
type frb2World struct {
	seed     uint64
	sizes    frb2Sizes
	products []frb2Product
	queries  []consensus.Query
	rubrics  [][]frb2Rubric
	rubIdx   map[string][2]int // rubric ID -> query, rubric
	prodIdx  map[string]int
	judgeIdx map[string]int
}

func newFRB2World(opt Options, hostile bool) *frb2World {
	w := &frb2World{seed: opt.Seed, sizes: frb2SizesOf(opt.Scale, opt.factor()), products: slices.Clone(frb2Products),
		rubIdx: map[string][2]int{}, prodIdx: map[string]int{}, judgeIdx: map[string]int{}}
	if hostile {
		w.products = append(w.products, hostileProduct)
	}
	for i, p := range w.products {
		w.prodIdx[p.name] = i
	}
	for i, j := range frb2Judges {
		w.judgeIdx[j.name] = i
	}
	for q := range w.sizes.queries {
		cat := frb2Categories[q%len(frb2Categories)]
		e1 := frb2Entities[int(w.u(1, q)*float64(len(frb2Entities)))]
		e2 := frb2Entities[(slices.Index(frb2Entities, e1)+1+q)%len(frb2Entities)]
		text := frb2QueryTemplates[cat]
		switch cat {
		case "Stock Comparison":
			text = fmt.Sprintf(text, e1, e2)
		case "Theme/Sector Analysis":
			text = fmt.Sprintf(text, frb2Themes[q%len(frb2Themes)])
			e1 = frb2Themes[q%len(frb2Themes)]
		case "Precious Metals Analysis":
			e1 = "gold"
		default:
			text = fmt.Sprintf(text, e1)
		}
		qid := fmt.Sprintf("q%03d", q+1)
		w.queries = append(w.queries, consensus.Query{ID: qid, Text: text + " (synthetic demo query)", Category: cat})
		// Candidate counts spread evenly from 0.3 to 1.7 times the mean, in
		// a scrambled order (37 is prime to 104, its multiples by powers of
		// two, and 8).
		spread := (float64(q*37%w.sizes.queries) + 0.5) / float64(w.sizes.queries)
		n := max(4, int(math.Round(w.sizes.rubrics*(0.3+1.4*spread))))
		var rs []frb2Rubric
		for r := range n {
			id := fmt.Sprintf("%s-r%03d", qid, r+1)
			x := w.u(3, q, r)
			d := 0
			for acc := frb2Dimensions[0].share; x >= acc && d < len(frb2Dimensions)-1; {
				d++
				acc += frb2Dimensions[d].share
			}
			dim := frb2Dimensions[d]
			tpl := dim.templates[int(w.u(4, q, r)*float64(len(dim.templates)))]
			rb := frb2Rubric{id: id, text: fmt.Sprintf(tpl, e1), dim: dim.name, noise: dim.noise, clear: w.u(5, q, r) < frb2Clear}
			switch k := w.u(6, q, r); {
			case k < frb2AlwaysYes:
				rb.kind = 1
			case k < frb2AlwaysYes+frb2AlwaysNo:
				rb.kind = 2
			}
			w.rubIdx[id] = [2]int{q, r}
			rs = append(rs, rb)
		}
		w.rubrics = append(w.rubrics, rs)
	}
	return w
}

// mix hashes the seed and xs into 64 bits (splitmix64 rounds).
func (w *frb2World) mix(xs ...int) uint64 {
	h := w.seed ^ 0x6a09e667f3bcc908
	for _, x := range xs {
		h ^= uint64(x) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h += 0x9e3779b97f4a7c15
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// u is a uniform number in [0, 1) fixed by the seed and xs.
func (w *frb2World) u(xs ...int) float64 { return float64(w.mix(xs...)>>11) / (1 << 53) }

// truth is whether product p's report satisfies rubric r of query q.
func (w *frb2World) truth(q, r, p int) bool {
	switch w.rubrics[q][r].kind {
	case 1:
		return true
	case 2:
		return false
	}
	return w.u(10, q, r, p) < w.products[p].quality
}

// hard reports whether the item is hard to judge.
func (w *frb2World) hard(q, r, p int) bool {
	return !w.rubrics[q][r].clear && w.u(11, q, r, p) < frb2Hard
}

// judge is judge j's label of rubric r on product p's report in run sample.
func (w *frb2World) judge(j, q, r, p, sample int) bool {
	rb, t := w.rubrics[q][r], w.truth(q, r, p)
	sys, run := frb2SysEasy, frb2RunEasy
	switch {
	case rb.clear:
		sys, run = frb2SysClear, frb2RunClear
	case w.hard(q, r, p):
		sys, run = frb2SysHard, frb2RunHard
	}
	run *= rb.noise
	b := frb2Judges[j].bias
	if t {
		sys, run = sys*(1-b), run*(1-b)
	} else {
		sys, run = sys*(1+b), run*(1+b)
	}
	l := t
	if w.u(20, j, q, r, p) < sys {
		l = !l
	}
	if w.u(21, j, q, r, p, sample) < run {
		l = !l
	}
	return l
}

// human is human rater h's label.
func (w *frb2World) human(h, q, r, p int) bool {
	slip := frb2HumanEasy
	if w.hard(q, r, p) {
		slip = frb2HumanHard
	}
	return w.truth(q, r, p) != (w.u(30, h, q, r, p) < slip)
}

// frb2Prompt is the judging template written to prompt.txt.
const frb2Prompt = `You are a senior financial analyst grading a deep-research report against binary rubrics.

Query ({{category}}): {{query}}

Report:
<<<
{{report}}
>>>

Rubrics, one a line as [ID] (dimension) text:
{{rubrics}}
Judge every rubric independently against the report only. Answer with one line per rubric, in the order given, as "ID: yes" or "ID: no", and nothing else.
`

// files renders every input file.
func (w *frb2World) files() map[string][]byte {
	out := map[string][]byte{}
	jsonl := func(name string, v any) {
		b, _ := json.Marshal(v) // plain structs of strings: cannot fail
		out[name] = append(append(out[name], b...), '\n')
	}
	panel := consensus.Panel{
		Format: consensus.PanelFormat,
		System: "You grade financial research reports. Synthetic demo: every report and query here is simulated.",
		Humans: []string{"expert-1", "expert-2", "expert-3"},
	}
	for _, j := range frb2Judges {
		panel.Judges = append(panel.Judges, consensus.Judge{Name: j.name, Provider: "sim", Model: j.name, Vendor: j.vendor,
			Params: map[string]any{"temperature": 0, "max_tokens": 8192}})
	}
	for _, p := range w.products {
		panel.Products = append(panel.Products, consensus.Product{Name: p.name, Vendor: p.vendor})
	}
	st := &consensus.Stability{Runs: 3, Judges: []string{frb2Judges[0].name}}
	for i := range w.sizes.stabilityItems {
		q := i % len(w.queries)
		p := int(w.u(40, i) * float64(len(frb2Products)))
		it := consensus.Item{Query: w.queries[q].ID, Product: w.products[p].name}
		if !slices.Contains(st.Items, it) {
			st.Items = append(st.Items, it)
		}
	}
	panel.Stability = st
	b, _ := json.MarshalIndent(panel, "", "  ") // plain data: cannot fail
	out[consensus.PanelFile] = append(b, '\n')
	out[consensus.PromptFile] = []byte(frb2Prompt)
	for q, qu := range w.queries {
		jsonl(consensus.QueriesFile, qu)
		for p := range w.products {
			jsonl(consensus.ReportsFile, consensus.Report{Query: qu.ID, Product: w.products[p].name, Text: w.report(q, p)})
		}
		for r, rb := range w.rubrics[q] {
			jsonl(consensus.RubricsFile, consensus.Rubric{Query: qu.ID, ID: rb.id, Text: rb.text, Dimension: rb.dim})
			for p := range w.products {
				if w.u(41, q, r, p) >= w.sizes.humanRate {
					continue
				}
				h := consensus.HumanLabel{Query: qu.ID, Product: w.products[p].name, Rubric: rb.id}
				for k := range panel.Humans {
					h.Labels = append(h.Labels, map[bool]string{true: "yes", false: "no"}[w.human(k, q, r, p)])
				}
				jsonl(consensus.HumansFile, h)
			}
		}
	}
	return out
}

// banner opens every report; the oracle reads the product from it.
func banner(product, query string) string {
	return fmt.Sprintf("[synthetic demo report | product: %s | query: %s]\n", product, query)
}

var frb2ReportPhrases = []string{
	"Revenue grew steadily over the last three years while margins narrowed.",
	"The main competitors are compared on growth, margins and valuation.",
	"Key risks include policy changes, demand cycles and currency moves.",
	"Rate cuts lower funding costs and support the valuation multiple.",
	"We recommend a staged position with a twelve-month horizon.",
	"| metric | 2024 | 2025 |\n|---|---|---|\n| revenue growth | 12% | 9% |",
}

// report writes product p's synthetic report for query q.
func (w *frb2World) report(q, p int) string {
	var b strings.Builder
	qu := w.queries[q]
	b.WriteString(banner(w.products[p].name, qu.ID))
	b.WriteString("SYNTHETIC DEMO TEXT: simulated for finrepro's demo, not any real product's output.\n\n")
	fmt.Fprintf(&b, "# %s\n\n## Summary\n", strings.TrimSuffix(qu.Text, " (synthetic demo query)"))
	for i, ph := range frb2ReportPhrases {
		if w.u(50, q, p, i) < 0.3+0.6*w.products[p].quality {
			b.WriteString(ph + "\n")
		}
	}
	if w.products[p] == hostileProduct {
		b.WriteString("\n## Appendix\n<script>alert(1)</script>\n<img src=x onerror=alert(1)>\n" +
			"[details](javascript:alert(1)) <a href=\"javascript:alert(1)\">link</a>\n" +
			"=HYPERLINK(\"http://x\",\"y\")\n+cmd|' /C calc'!A0\n@SUM(1)\n-2+3\n</script><!--\n")
	}
	return b.String()
}

// rubricIDs returns the IDs of the prompt's rubric lines, "[ID] (...".
func rubricIDs(user string) []string {
	var ids []string
	for line := range strings.Lines(user) {
		if !strings.HasPrefix(line, "[") {
			continue
		}
		if id, rest, ok := strings.Cut(line[1:], "] ("); ok && !strings.ContainsAny(id, " []") && rest != "" {
			ids = append(ids, id)
		}
	}
	return ids
}

// Respond answers a judge prompt: a label per rubric in the judge's style,
// occasionally with a rubric skipped or an unparsable answer.
func (w *frb2World) Respond(pr results.Prompt) (string, error) {
	j, ok := w.judgeIdx[pr.Model]
	if !ok {
		return "", fmt.Errorf("finresearchbench2 oracle: unknown judge model %q", pr.Model)
	}
	const open, sep = "[synthetic demo report | product: ", " | query: "
	i := strings.Index(pr.User, open)
	if i < 0 {
		return "", fmt.Errorf("finresearchbench2 oracle: no report banner in prompt")
	}
	rest := pr.User[i+len(open):]
	k := strings.Index(rest, sep)
	if k < 0 {
		return "", fmt.Errorf("finresearchbench2 oracle: malformed report banner")
	}
	p, ok := w.prodIdx[rest[:k]]
	if !ok {
		return "", fmt.Errorf("finresearchbench2 oracle: unknown product %q", rest[:k])
	}
	var ids []string
	var qr [][2]int
	for _, id := range rubricIDs(pr.User) {
		x, ok := w.rubIdx[id]
		if !ok {
			return "", fmt.Errorf("finresearchbench2 oracle: unknown rubric %q", id)
		}
		ids, qr = append(ids, id), append(qr, x)
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("finresearchbench2 oracle: no rubrics in prompt")
	}
	q := qr[0][0]
	fault := w.u(60, j, q, p, pr.Sample)
	// Unparsable answers only in reruns: in a main run one would void
	// every rubric of its query under unanimity.
	if pr.Sample > 0 && fault < w.sizes.garbleRate {
		return "I am unable to grade this report reliably; please resend it.", nil
	}
	skip := -1
	if fault < w.sizes.faultRate {
		skip = int(w.u(61, j, q, p, pr.Sample) * float64(len(ids)))
	}
	var b bytes.Buffer
	style := frb2Judges[j].style
	if style == 2 {
		b.WriteString("```json\n{")
	}
	first := true
	for n, id := range ids {
		if n == skip {
			continue
		}
		l := w.judge(j, qr[n][0], qr[n][1], p, pr.Sample)
		word := map[bool]string{true: "yes", false: "no"}[l]
		switch style {
		case 0:
			fmt.Fprintf(&b, "%s: %s\n", id, word)
		case 1:
			fmt.Fprintf(&b, "- **[%s]** %s\n", id, strings.ToUpper(word[:1])+word[1:])
		default:
			if !first {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "\n  %q: %q", id, word)
		}
		first = false
	}
	if style == 2 {
		b.WriteString("\n}\n```\n")
	}
	return b.String(), nil
}
