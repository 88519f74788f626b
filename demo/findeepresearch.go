package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/hisrubric"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// FinDeepResearch returns the demo generator of FinDeepResearch
// (HisRubric): companies in the paper's eight markets and four languages
// (one per market at Small scale, eight times Options.Factor at Full), the
// paper's sixteen methods plus a hostile synthetic one, and a simulated
// judge. Simulated reports carry the faults real ones have (missing
// subsection, renamed table columns, a table without its alignment row,
// values in the wrong multiplier, Chinese section headers); the methods'
// accuracy is tuned to the paper's market table. Every report says it is
// synthetic.
func FinDeepResearch() Generator { return fdrGen{} }

type fdrGen struct{}

// Benchmark returns hisrubric.Benchmark.
func (fdrGen) Benchmark() analysis.Benchmark { return hisrubric.Benchmark{} }

// fdrSystem is a simulated method.
type fdrSystem struct {
	name, group, model string
	params             map[string]any
	faults             []string
	small              bool // part of the Small demo
	hostile            bool
	target             map[string]float64 // market -> expected accuracy (0-1)
	// tiltNorm keeps the system's expected marks on target under its tilt.
	tiltNorm float64
}

// fdrSystems are the paper's methods (Table 7 gives models and settings)
// with their report faults.
var fdrSystems = []fdrSystem{
	{name: "Gemini 2.5 Pro (T)", group: "thinking", model: "gemini-2.5-pro-preview-05-06", params: map[string]any{"thinking_budget": -1}, faults: []string{"renamed_table"}},
	{name: "Deepseek-v3.2 (T)", group: "thinking", model: "deepseek-v3.2-exp", params: map[string]any{"reasoning": map[string]any{"enabled": true}}, faults: []string{"chinese_header", "wrong_multiplier", "renamed_table"}, small: true},
	{name: "Claude-Sonnet-4.5 (T)", group: "thinking", model: "claude-sonnet-4-5-20250929", params: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 10000}}, faults: []string{"html_breaks"}},
	{name: "Grok 4 (T)", group: "thinking", model: "grok-4-0709", faults: []string{"missing_subsection"}},
	{name: "OpenAI GPT-5 (T)", group: "thinking", model: "gpt-5-2025-08-07", params: map[string]any{"reasoning": map[string]any{"effort": "high"}}},
	{name: "Gemini 2.5 Pro (T+S)", group: "thinking+search", model: "gemini-2.5-pro-preview-05-06", params: map[string]any{"thinking_budget": -1, "tools": []any{"google_search"}}, faults: []string{"renamed_table"}},
	{name: "Deepseek-v3.2 (T+S)", group: "thinking+search", model: "deepseek-v3.2-exp", params: map[string]any{"reasoning": map[string]any{"enabled": true}, "plugins": []any{"exa(max_results=8)"}}, faults: []string{"missing_subsection", "broken_table"}},
	{name: "Claude-Sonnet-4.5 (T+S)", group: "thinking+search", model: "claude-sonnet-4-5-20250929", params: map[string]any{"thinking": map[string]any{"type": "enabled", "budget_tokens": 10000}, "tools": []any{"web_search_20250305"}}, faults: []string{"html_breaks"}},
	{name: "Grok 4 (T+S)", group: "thinking+search", model: "grok-4-0709", params: map[string]any{"search_parameters": map[string]any{"mode": "on"}}, faults: []string{"renamed_table"}},
	{name: "OpenAI GPT-5 (T+S)", group: "thinking+search", model: "gpt-5-2025-08-07", params: map[string]any{"reasoning": map[string]any{"effort": "medium"}, "tools": []any{"web_search"}}, faults: []string{"billions"}, small: true},
	{name: "Perplexity Sonar Deep Research", group: "deep-research", model: "sonar-deep-research", params: map[string]any{"reasoning": map[string]any{"effort": "high"}}, faults: []string{"missing_subsection"}},
	{name: "Mistral Deep Research", group: "deep-research", model: "mistral-deep-research (web interface)", faults: []string{"broken_table", "wrong_multiplier", "missing_subsection"}, small: true},
	{name: "Tongyi Deep Research", group: "deep-research", model: "tongyi-deepresearch-30b-a3b", params: map[string]any{"temperature": 0.6, "top_p": 0.95, "presence_penalty": 1.1}, faults: []string{"chinese_header"}},
	{name: "Gemini 2.5 Pro Deep Research", group: "deep-research", model: "gemini-2.5-pro-deep-research (web interface)"},
	{name: "Grok 4 DeepSearch", group: "deep-research", model: "grok-4-deepsearch (web interface)", small: true},
	{name: "OpenAI o3-deep-research", group: "deep-research", model: "o3-deep-research-2025-06-26", params: map[string]any{"tools": []any{"web_search_preview", "code_interpreter"}}, small: true},
}

// fdrHostile is the demo-only system whose reports carry markup and
// spreadsheet formulas, one huge report and one malformed one.
var fdrHostile = fdrSystem{name: "Hostile-Demo (synthetic)", group: "synthetic", model: "hostile-demo", small: true, hostile: true}

// fdrMarket is a market's exchange, currency and language.
type fdrMarket struct{ code, exchange, currency, language, city, country string }

var fdrMarkets = []fdrMarket{
	{"US", "NYSE", "USD", "en", "Houston", "United States"},
	{"UK", "LSE", "GBP", "en", "London", "United Kingdom"},
	{"CN", "SSE", "CNY", "zh-CN", "Shanghai", "China"},
	{"HK", "HKEX", "HKD", "zh-HK", "Hong Kong", "China"},
	{"AU", "ASX", "AUD", "en", "Sydney", "Australia"},
	{"SG", "SGX", "SGD", "en", "Singapore", "Singapore"},
	{"MY", "Bursa Malaysia", "MYR", "en", "Kuala Lumpur", "Malaysia"},
	{"ID", "IDX", "IDR", "id", "Jakarta", "Indonesia"},
}

// fdrIndustries is the paper's Table 6: companies per industry and
// market (US UK CN HK AU SG MY ID).
var fdrIndustries = []struct {
	name   string
	counts [8]int
}{
	{"Communications", [8]int{0, 2, 2, 2, 2, 0, 2, 2}},
	{"Consumer Discretionary", [8]int{3, 0, 4, 0, 0, 0, 0, 0}},
	{"Consumer Staples", [8]int{0, 1, 1, 0, 1, 2, 2, 3}},
	{"Energy", [8]int{2, 3, 0, 3, 0, 0, 0, 2}},
	{"Health Care", [8]int{2, 0, 0, 0, 2, 2, 0, 0}},
	{"Industrials", [8]int{0, 2, 1, 2, 0, 3, 2, 0}},
	{"Materials", [8]int{0, 0, 0, 0, 1, 0, 0, 0}},
	{"Real Estate", [8]int{0, 0, 0, 1, 0, 1, 0, 1}},
	{"Technology", [8]int{1, 0, 0, 0, 1, 0, 0, 0}},
	{"Utilities", [8]int{0, 0, 0, 0, 1, 0, 2, 0}},
}

// fdrCapFactor shapes an accuracy target into per-capability success
// rates: Recognition easiest, Interpretation hardest (paper, Figure 5).
var fdrCapFactor = map[hisrubric.Capability]float64{
	hisrubric.Recognition: 1.75, hisrubric.Calculation: 1.4, hisrubric.Abstraction: 1.05, hisrubric.Interpretation: 0.45,
}

// fdrSecFactor shapes it further by section: Section 3 easier and
// Section 6 much harder than the rest (paper, Figure 6).
var fdrSecFactor = map[string]float64{"1": 1.1, "2": 1, "3": 2.1, "4": 1, "5": 0.9, "6": 0.45}

// fdrTilt leans some methods towards their strengths in the paper's
// text: Grok 4 DeepSearch best at Recognition and Calculation, o3 at
// Abstraction and Interpretation, Gemini Deep Research at Section 6.
var fdrTilt = map[string]map[string]float64{
	"Grok 4 DeepSearch":            {"recognition": 1.1, "calculation": 1.1, "abstraction": 0.9, "interpretation": 0.9},
	"OpenAI o3-deep-research":      {"recognition": 0.95, "calculation": 0.95, "abstraction": 1.1, "interpretation": 1.1},
	"Gemini 2.5 Pro Deep Research": {"6": 1.3},
}

// fdrFactor is item it's success rate relative to its system's target.
func fdrFactor(it *hisrubric.Item) float64 {
	sec, _, _ := strings.Cut(it.Subsection, ".")
	return fdrCapFactor[it.Capability] * fdrSecFactor[sec]
}

// tiltOf is system s's own factor for item it.
func tiltOf(s *fdrSystem, it *hisrubric.Item) float64 {
	sec, _, _ := strings.Cut(it.Subsection, ".")
	x := 1.0
	if v, ok := fdrTilt[s.name][string(it.Capability)]; ok {
		x *= v
	}
	if v, ok := fdrTilt[s.name][sec]; ok {
		x *= v
	}
	return x
}

const fdrJudgeModel = "sim-judge-1"

// fdrJudgeError is the simulated judge's error rate on each verdict,
// claim and criterion point.
const fdrJudgeError = 0.03

// fdrWorld is the generated benchmark: inputs and the oracle.
type fdrWorld struct {
	seed      uint64
	structure *hisrubric.Structure
	items     []hisrubric.Item
	companies []hisrubric.Company
	truth     map[string]map[string]hisrubric.Truth // until the inputs are written
	cell      map[string]map[string]string          // company -> item -> correct cell value
	board     map[string][]string                   // company -> its board members' names, rows @1 to @4
	systems   []fdrSystem
	byPrompt  map[string]int // research prompt -> company index
	bySystem  map[string]int // model and params -> system index
	capNorm   float64
}

// Generate writes the inputs into dir and returns the oracle.
func (fdrGen) Generate(dir string, opt Options) (replay.Oracle, error) {
	w, err := newFDRWorld(opt)
	if err != nil {
		return nil, fmt.Errorf("findeepresearch: %w", err)
	}
	files, err := w.files()
	if err != nil {
		return nil, fmt.Errorf("findeepresearch: %w", err)
	}
	// The oracle answers from the cells and the boards: the truth, a
	// quarter of the world at full scale, is in the files.
	w.truth = nil
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return nil, fmt.Errorf("findeepresearch: %w", err)
		}
	}
	return w, nil
}

func newFDRWorld(opt Options) (*fdrWorld, error) {
	w := &fdrWorld{seed: opt.Seed, structure: hisrubric.Default(), items: hisrubric.DefaultItems(),
		truth: map[string]map[string]hisrubric.Truth{}, cell: map[string]map[string]string{}, board: map[string][]string{},
		byPrompt: map[string]int{}, bySystem: map[string]int{}}
	targets, err := fdrTargets()
	if err != nil {
		return nil, err
	}
	for _, s := range fdrSystems {
		if opt.Scale == Full || s.small {
			s.target = targets[s.name]
			w.systems = append(w.systems, s)
		}
	}
	h := fdrHostile
	h.target = map[string]float64{}
	for _, m := range fdrMarkets {
		h.target[m.code] = 0.25
	}
	w.systems = append(w.systems, h)
	marks, norm := 0.0, 0.0
	for _, it := range w.items {
		wt := map[bool]float64{true: 2, false: 1}[it.Capability == hisrubric.Abstraction || it.Capability == hisrubric.Interpretation]
		marks += wt
		norm += wt * fdrFactor(&it)
	}
	w.capNorm = norm / marks
	perMarket := 1
	if opt.Scale == Full {
		perMarket = 8 * opt.factor()
	}
	for mi, m := range fdrMarkets {
		var inds []string
		for _, ind := range fdrIndustries {
			for k := 0; k < ind.counts[mi]; k++ {
				inds = append(inds, ind.name)
			}
		}
		for k := 0; k < perMarket; k++ {
			ind := inds[(k+3*mi)%len(inds)]
			if perMarket > 1 {
				ind = inds[k%len(inds)]
			}
			w.addCompany(m, k+1, ind)
		}
	}
	for i := range w.companies {
		w.byPrompt[hisrubric.ResearchPrompt(w.structure, &w.companies[i])] = i
	}
	for i := range w.systems {
		s := &w.systems[i]
		w.bySystem[fdrSystemKey(s.model, s.params)] = i
		num, den := 0.0, 0.0
		for k := range w.items {
			it := &w.items[k]
			wt := map[bool]float64{true: 2, false: 1}[it.Capability == hisrubric.Abstraction || it.Capability == hisrubric.Interpretation]
			num += wt * fdrFactor(it) * tiltOf(s, it)
			den += wt * fdrFactor(it)
		}
		s.tiltNorm = den / num
	}
	return w, nil
}

// fdrTargets reads the published market table: method -> market -> score / 100.
func fdrTargets() (map[string]map[string]float64, error) {
	f, err := assets.Open("assets/published/findeepresearch/markets.csv")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := results.ReadCSV(f, "markets.csv")
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]float64{}
	for _, row := range t.Rows {
		m := map[string]float64{}
		for _, mk := range fdrMarkets {
			v, err := strconv.ParseFloat(row[t.Col(mk.code)], 64)
			if err != nil {
				return nil, fmt.Errorf("markets.csv: %s %s: %w", row[0], mk.code, err)
			}
			m[mk.code] = v / 100
		}
		out[row[0]] = m
	}
	return out, nil
}

// fdrSystemKey identifies a system by model and parameters as the sim
// provider passes them back (after a JSON round trip).
func fdrSystemKey(model string, params map[string]any) string {
	b, _ := json.Marshal(params) // params hold JSON values only
	var v any
	_ = json.Unmarshal(b, &v) // b was just produced by json.Marshal
	b, _ = json.Marshal(v)
	return model + "\x00" + string(b)
}

// unit returns a number in [0, 1) from the seed and parts.
func (w *fdrWorld) unit(parts ...string) float64 {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], w.seed)
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return float64(binary.BigEndian.Uint64(h.Sum(nil)[:8])>>11) / (1 << 53)
}

var (
	fdrPrefixes = []string{"Northwind", "Bluegate", "Silverpeak", "Harbourline", "Redcliff", "Eastmere", "Goldleaf", "Stonebridge", "Lakeshore", "Ironbark"}
	fdrPeople   = []string{"Alex Morgan", "Jamie Chen", "Priya Nair", "Tomás Silva", "Siti Rahman", "Oliver Grant", "Mei Ling Wong", "Budi Santoso", "Hannah Clarke", "Rajesh Kumar", "Grace Tan", "Daniel Lee"}
	fdrRoles    = []string{"Chairman", "Chief Executive Officer", "Chief Financial Officer", "Independent Non-Executive Director"}
)

// fdrSentences are ground-truth sentence templates per language: {T}
// topic, {N} a number, {Y} the fiscal year.
var fdrSentences = map[string][]string{
	"en": {"{T}: revenue up {N}% in FY{Y}.", "{T} moved margin {N} bp.", "{T} added {N} sites.",
		"{T} FX exposure near {N}%.", "{T} beat peers {N} years running.", "{T} capex was {N} million."},
	"zh-CN": {"{T}：{Y}财年收入增长{N}%。", "{T}使利润率变动{N}个基点。", "{T}新增{N}个网点。",
		"{T}汇率敞口约{N}%。", "{T}连续{N}年领先同业。", "{T}资本开支{N}百万元。"},
	"zh-HK": {"{T}：{Y}財年收入增長{N}%。", "{T}使利潤率變動{N}個基點。", "{T}新增{N}個網點。",
		"{T}匯率敞口約{N}%。", "{T}連續{N}年領先同業。", "{T}資本開支{N}百萬元。"},
	"id": {"{T}: pendapatan naik {N}% pada TA{Y}.", "{T} mengubah margin {N} bp.", "{T} menambah {N} lokasi.",
		"Eksposur kurs {T} sekitar {N}%.", "{T} unggul {N} tahun beruntun.", "Belanja modal {T} {N} juta."},
}

// fdrConclusions are the internal-control conclusions per language:
// right, wrong.
var fdrConclusions = map[string][2]string{
	"en": {"Conclusion: effective.", "Conclusion: weak."}, "zh-CN": {"结论：有效。", "结论：存在缺陷。"},
	"zh-HK": {"結論：有效。", "結論：存在缺陷。"}, "id": {"Kesimpulan: efektif.", "Kesimpulan: lemah."},
}

// fdrFinRatios are the fin-table rows as shares of revenue.
var fdrFinRatios = map[string]float64{
	"Revenue": 1, "Cost of Goods Sold": 0.62, "Gross Profit": 0.38, "Operating Expenses": 0.22, "Operating Income": 0.16,
	"Net Profit": 0.10, "Income before income taxes": 0.13, "Income tax expense (benefit)": 0.03, "Interest Expense": 0.012,
	"Total Assets": 1.6, "Current Assets": 0.6, "Non-Current Assets": 1.0, "Total Liabilities": 0.9, "Current Liabilities": 0.4,
	"Non-Current Liabilities": 0.5, "Shareholders' Equity": 0.7, "Retained Earnings": 0.4, "Total Equity and Liabilities": 1.6,
	"Inventories": 0.15, "Prepaid Expenses": 0.02, "Net Cash Flow from Operations": 0.14, "Net Cash Flow from Investing": -0.08,
	"Net Cash Flow from Financing": -0.04, "Net Increase/Decrease in Cash": 0.02, "Dividends": 0.03,
}

var fdrPercentRows = map[string]bool{"Gross Profit Margin": true, "Operating Profit Margin": true, "Net Profit Margin": true,
	"Return on Equity": true, "Return on Assets": true, "Effective Tax Rate": true, "Dividend Payout Ratio": true,
	"Total Log Return": true, "Log Excess Return": true, "Maximum Drawdown": true, "Annualized Volatility": true}

func (w *fdrWorld) addCompany(m fdrMarket, k int, industry string) {
	id := fmt.Sprintf("%s-%d", m.code, k)
	u := func(parts ...string) float64 { return w.unit(append([]string{"company", id}, parts...)...) }
	noun := strings.Fields(industry)[0]
	c := hisrubric.Company{ID: id, Ticker: fmt.Sprintf("SYN%s%d", m.code, k), Exchange: m.exchange, Market: m.code,
		Language: m.language, Industry: industry, FY: 2024, CY: 2024, ValuationDate: "2025-09-20",
		Name: fmt.Sprintf("%s %s Holdings (synthetic)", fdrPrefixes[int(u("name")*float64(len(fdrPrefixes)))], noun)}
	w.companies = append(w.companies, c)
	truth, cells := map[string]hisrubric.Truth{}, map[string]string{}
	w.truth[id], w.cell[id] = truth, cells
	revenue := 500 + u("revenue")*40000
	growth := -0.05 + u("growth")*0.2
	members := append([]string(nil), fdrPeople...)
	for i := range members { // deterministic shuffle
		j := i + int(u("member", strconv.Itoa(i))*float64(len(members)-i))
		members[i], members[j] = members[j], members[i]
	}
	w.board[id] = slices.Clone(members[:4])
	p := c.Params()
	for _, it := range w.items {
		year := 0
		switch it.Column {
		case "{FY}", "{CY}":
		case "{FY_1}", "{CY_1}":
			year = 1
		case "{FY_2}":
			year = 2
		}
		uu := func(s string) float64 { return u(it.ID, s) }
		var ans, cell, row string
		switch {
		case it.Subsection == "1.1":
			switch it.Row {
			case "Company Name":
				ans = c.Name
			case "Establishment Date":
				ans = fmt.Sprintf("%d-%02d-%02d", 1950+int(uu("y")*60), 1+int(uu("m")*12), 1+int(uu("d")*28))
			default:
				ans = m.city + ", " + m.country
			}
			cell = ans
		case fdrFinRatios[it.Row] != 0:
			v := revenue * fdrFinRatios[it.Row] * math.Pow(1+growth, -float64(year)) * (0.9 + 0.2*uu("j"))
			cell = fdrThousands(v, 0)
			ans = cell + " Millions " + m.currency
		case it.Subsection == "2.4" || it.Subsection == "6.1":
			cell = w.metric(it.Row, uu("v"))
			ans = cell
		case it.Subsection == "5.1":
			n, _ := strconv.Atoi(strings.TrimPrefix(it.Row, "@"))
			row = members[n-1]
			if it.Column == "Position" {
				ans = fdrRoles[n-1]
			} else {
				ans = fdrThousands(200000+uu("pay")*3000000, 0) + " " + m.currency
			}
			cell = ans
		case it.Facet == "date":
			ans = fmt.Sprintf("%d-%02d-%02d", p.CY-year, 1+int(uu("m")*12), 1+int(uu("d")*28))
			cell = ans
		case it.Facet == "car":
			v := 1 + uu("car")*8
			if strings.Contains(it.Row, "Negative") {
				v = -v
			}
			ans = strconv.FormatFloat(v, 'f', 1, 64) + "%"
			cell = ans
		case it.Facet == "conclusion":
			ans = fdrConclusions[c.Language][0]
			cell = ans
		case it.Row == "Diluted EPS":
			cell = strconv.FormatFloat(0.2+uu("eps")*8, 'f', 2, 64)
			ans = cell
		case it.Row == "P/E Ratio":
			cell = strconv.FormatFloat(6+uu("pe")*30, 'f', 1, 64)
			ans = cell
		default:
			ans = w.sentences(c, it, p.FY-year)
			cell = ans
		}
		truth[it.ID] = hisrubric.Truth{Company: id, Item: it.ID, Answer: ans, Row: row}
		cells[it.ID] = cell
	}
}

// metric writes a ratio or market metric from u in [0, 1).
func (w *fdrWorld) metric(row string, u float64) string {
	if fdrPercentRows[row] {
		v := 2 + u*40
		if row == "Log Excess Return" || row == "Maximum Drawdown" {
			v = -v / 2
		}
		return strconv.FormatFloat(v, 'f', 1, 64) + "%"
	}
	if strings.Contains(row, "Price") {
		return strconv.FormatFloat(1+u*120, 'f', 2, 64)
	}
	return strconv.FormatFloat(0.3+u*4, 'f', 2, 64)
}

// sentences writes a 3-5 sentence ground truth in the company language.
func (w *fdrWorld) sentences(c hisrubric.Company, it hisrubric.Item, year int) string {
	bank := fdrSentences[c.Language]
	n := 3 + int(w.unit("n", c.ID, it.ID)*2)
	start := int(w.unit("start", c.ID, it.ID) * float64(len(bank)))
	topic := strings.ToLower(strings.Fields(it.Row)[0])
	if it.Facet == "judgement" {
		topic += " outlook"
	}
	var out []string
	for k := 0; k < n; k++ {
		num := 2 + int(w.unit("num", c.ID, it.ID, strconv.Itoa(k))*97)
		s := strings.NewReplacer("{T}", topic, "{N}", strconv.Itoa(num), "{Y}", strconv.Itoa(year)).Replace(bank[(start+k)%len(bank)])
		out = append(out, s)
	}
	sep := " "
	if strings.HasPrefix(c.Language, "zh") {
		sep = ""
	}
	return strings.Join(out, sep)
}

// fdrThousands formats v with thousands separators.
func fdrThousands(v float64, decimals int) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', decimals, 64)
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	out := b.String()
	if frac != "" {
		out += "." + frac
	}
	if v < 0 && strings.Trim(out, "0.,") != "" {
		out = "-" + out
	}
	return out
}

type fdrFile struct {
	name string
	data []byte
}

func (w *fdrWorld) files() ([]fdrFile, error) {
	cfg := hisrubric.Config{Version: hisrubric.ConfigVersion,
		Judge: hisrubric.Agent{Name: "Judge (synthetic)", Provider: "sim", Model: fdrJudgeModel, Params: map[string]any{"temperature": 0}}}
	for _, s := range w.systems {
		cfg.Systems = append(cfg.Systems, hisrubric.Agent{Name: s.name, Group: s.group, Provider: "sim", Model: s.model, Params: s.params})
	}
	js := func(v any) ([]byte, error) {
		b, err := json.MarshalIndent(v, "", "  ")
		return append(b, '\n'), err
	}
	jsonl := func(n int, f func(i int) any) ([]byte, error) {
		var buf bytes.Buffer
		for i := 0; i < n; i++ {
			b, err := json.Marshal(f(i))
			if err != nil {
				return nil, err
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
		return buf.Bytes(), nil
	}
	var files []fdrFile
	add := func(name string, b []byte, err error) error {
		if err != nil {
			return err
		}
		files = append(files, fdrFile{name, b})
		return nil
	}
	b, err := js(cfg)
	if err := add(hisrubric.ConfigFile, b, err); err != nil {
		return nil, err
	}
	b, err = js(w.structure)
	if err := add(hisrubric.StructureFile, b, err); err != nil {
		return nil, err
	}
	b, err = jsonl(len(w.items), func(i int) any { return w.items[i] })
	if err := add(hisrubric.ItemsFile, b, err); err != nil {
		return nil, err
	}
	b, err = jsonl(len(w.companies), func(i int) any { return w.companies[i] })
	if err := add(hisrubric.CompaniesFile, b, err); err != nil {
		return nil, err
	}
	var truths []hisrubric.Truth
	for _, c := range w.companies {
		for _, it := range w.items {
			truths = append(truths, w.truth[c.ID][it.ID])
		}
	}
	b, err = jsonl(len(truths), func(i int) any { return truths[i] })
	if err := add(hisrubric.TruthFile, b, err); err != nil {
		return nil, err
	}
	return files, nil
}

// Respond plays every system and the judge.
func (w *fdrWorld) Respond(p results.Prompt) (string, error) {
	if p.Model == fdrJudgeModel {
		return w.judge(p)
	}
	si, ok := w.bySystem[fdrSystemKey(p.Model, p.Params)]
	if !ok {
		return "", fmt.Errorf("findeepresearch demo: unknown system model %q", p.Model)
	}
	ci, ok := w.byPrompt[p.User]
	if !ok {
		return "", fmt.Errorf("findeepresearch demo: unknown research prompt for %s", p.Model)
	}
	return w.report(&w.systems[si], &w.companies[ci]), nil
}

func (s *fdrSystem) has(fault string) bool {
	for _, f := range s.faults {
		if f == fault {
			return true
		}
	}
	return false
}

// report writes system s's simulated report on company c.
func (w *fdrWorld) report(s *fdrSystem, c *hisrubric.Company) string {
	u := func(parts ...string) float64 { return w.unit(append([]string{"report", s.name, c.ID}, parts...)...) }
	if s.hostile {
		switch c.Market {
		case "CN":
			return "<<<|||>>> \x00 \u202e malformed synthetic output ||| ## ### |:-:|\n|a|b\n" + strings.Repeat("| | |\n", 50) + "<script>alert('synthetic')</script>"
		case "ID":
			return w.normalReport(s, c, u, "hostile") + strings.Repeat("\n| synthetic padding | "+strings.Repeat("x", 200)+" |", 6000)
		}
		return w.normalReport(s, c, u, "hostile")
	}
	return w.normalReport(s, c, u, "")
}

// fdrPayloads are the hostile system's cell contents.
var fdrPayloads = []string{
	`<script>alert("synthetic")</script>`, `<img src=x onerror="alert(1)">`, `[details](javascript:alert(1))`,
	`=HYPERLINK("http://example.invalid","synthetic")`, `+cmd|' /C calc'!A0`, `@SUM(1)`, `<a href="javascript:alert(2)">link</a>`,
}

func (w *fdrWorld) normalReport(s *fdrSystem, c *hisrubric.Company, u func(...string) float64, mode string) string {
	var b strings.Builder
	p := c.Params()
	fmt.Fprintf(&b, "# Synthetic demo report: %s (%s)\n\n_Synthetic: written by the finrepro demo simulator playing %s; not real financial data._\n\n", c.Name, c.Ticker, s.name)
	byCell := map[string][]*hisrubric.Item{}
	for i := range w.items {
		it := &w.items[i]
		byCell[it.Subsection+"\x00"+it.Row+"\x00"+it.Column] = append(byCell[it.Subsection+"\x00"+it.Row+"\x00"+it.Column], it)
	}
	target := s.target[c.Market] / (1 - w.faultLoss(s))
	ok := func(it *hisrubric.Item, part string) bool {
		// The simulated judge errs at fdrJudgeError either way: aim so
		// that what it reports lands on the target.
		q := (target*fdrFactor(it)*tiltOf(s, it)*s.tiltNorm/w.capNorm - fdrJudgeError) / (1 - 2*fdrJudgeError)
		q = min(max(q, 0.02), 0.98)
		return u("ok", it.ID, part) < q
	}
	missingSub := s.has("missing_subsection") && u("fault", "missing") < 0.5
	broken := s.has("broken_table") && u("fault", "broken") < 0.5
	zhHeader := s.has("chinese_header") && strings.HasPrefix(c.Language, "zh")
	hostileAt := 0
	for _, sec := range w.structure.Sections {
		title := sec.Title
		if zhHeader && sec.ID == "3" {
			title = "业务分析"
		}
		fmt.Fprintf(&b, "## Section %s: %s\n\n", sec.ID, title)
		for _, sub := range sec.Subsections {
			if missingSub && sub.ID == "6.3" {
				continue
			}
			fmt.Fprintf(&b, "### S%s: %s\n\n", sub.ID, sub.Title)
			cols := make([]string, len(sub.Table.Columns))
			for i, col := range sub.Table.Columns {
				cols[i] = p.Resolve(col)
			}
			if s.has("renamed_table") && sub.ID == "1.1" {
				cols[0] = "Item"
			}
			b.WriteString("| " + strings.Join(cols, " | ") + " |\n")
			if !(broken && sub.ID == "2.2") {
				b.WriteString("|" + strings.Repeat(" :-- |", len(cols)) + "\n")
			}
			rows := sub.Table.Rows
			var rowTruth []string // free rows: the row key each line stands for
			if sub.Table.FreeRows {
				for k := 1; k <= 4; k++ {
					rows = append(rows, fmt.Sprintf("@%d", k))
				}
			}
			billions := s.has("billions") && sub.ID == "2.3"
			thousandfold := s.has("wrong_multiplier") && sub.ID == "2.1"
			for _, row := range rows {
				cells := []string{row}
				if sub.Table.FreeRows {
					k, _ := strconv.Atoi(strings.TrimPrefix(row, "@"))
					name := w.board[c.ID][k-1]
					if !ok(byCell[sub.ID+"\x00"+row+"\x00Position"][0], "member") {
						name = fdrPeople[int(u("wrongname", row)*float64(len(fdrPeople)))] + " (unverified)"
					}
					cells[0] = name
					rowTruth = append(rowTruth, name)
				}
				for _, col := range sub.Table.Columns[1:] {
					var text string
					switch {
					case col == "Multiplier":
						text = "Millions"
						if billions {
							text = "Billions"
						}
					case col == "Currency":
						text = fdrMarkets[fdrMarketIndex(c.Market)].currency
					default:
						text = w.writeCell(c, byCell[sub.ID+"\x00"+row+"\x00"+col], row, col, ok, u, billions, thousandfold)
					}
					if mode == "hostile" && hostileAt < 40 && u("hostile", sub.ID, row, col) < 0.15 {
						text = fdrPayloads[hostileAt%len(fdrPayloads)] + " " + text
						hostileAt++
					}
					if s.has("html_breaks") && strings.Count(text, ". ") > 1 {
						text = strings.Replace(text, ". ", ".<br>", 1)
					}
					cells = append(cells, strings.ReplaceAll(text, "|", `\|`))
				}
				b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// fdrFaults are the subsections each fault loses and how often.
var fdrFaults = map[string]struct {
	sub  string
	rate float64
}{
	"broken_table": {"2.2", 0.5}, "missing_subsection": {"6.3", 0.5},
	"wrong_multiplier": {"2.1", 1}, "billions": {"2.3", 1}, // billions: right values the string-matching judge rejects
}

// faultLoss is the expected share of marks system s loses to its report
// faults, so that its success rate can make up for it.
func (w *fdrWorld) faultLoss(s *fdrSystem) float64 {
	lost, all := 0.0, 0.0
	for _, it := range w.items {
		wt := map[bool]float64{true: 2, false: 1}[it.Capability == hisrubric.Abstraction || it.Capability == hisrubric.Interpretation]
		x := wt * fdrFactor(&it)
		all += x
		for _, f := range s.faults {
			if fl, ok := fdrFaults[f]; ok && fl.sub == it.Subsection {
				lost += x * fl.rate
			}
		}
	}
	return lost / all
}

func fdrMarketIndex(code string) int {
	for i, m := range fdrMarkets {
		if m.code == code {
			return i
		}
	}
	return 0
}

// writeCell writes one table cell from the items graded on it.
func (w *fdrWorld) writeCell(c *hisrubric.Company, items []*hisrubric.Item, row, col string, ok func(*hisrubric.Item, string) bool, u func(...string) float64, billions, thousandfold bool) string {
	if len(items) == 0 {
		switch {
		case row == "Adjusted Closing Price":
			return strconv.FormatFloat(1+u("close")*120, 'f', 2, 64)
		}
		return "Synthetic: not assessed."
	}
	var parts []string
	for _, it := range items {
		right := w.cell[c.ID][it.ID]
		good := ok(it, "")
		switch {
		case it.Numeric && it.Subsection >= "2.1" && it.Subsection <= "2.3":
			v, _ := hisrubric.ParseQuantity(right)
			x := v.Value
			if !good {
				if u("na", it.ID) < 0.3 {
					parts = append(parts, "N/A")
					continue
				}
				x *= 1 + (0.05+u("err", it.ID)*0.25)*fdrSign(u("sign", it.ID))
			}
			switch {
			case thousandfold:
				parts = append(parts, fdrThousands(x*1000, 0))
			case billions:
				parts = append(parts, fdrThousands(x/1000, 3))
			case good:
				parts = append(parts, right)
			default:
				parts = append(parts, fdrThousands(x, 0))
			}
		case it.Numeric || it.Facet == "car":
			if good {
				parts = append(parts, right)
				continue
			}
			if u("na", it.ID) < 0.3 {
				parts = append(parts, "N/A")
				continue
			}
			parts = append(parts, fdrPerturb(right, 1+(0.05+u("err", it.ID)*0.3)*fdrSign(u("sign", it.ID))))
		case it.Facet == "date":
			if good {
				parts = append(parts, right)
			} else {
				parts = append(parts, fmt.Sprintf("%d-%02d-%02d", c.CY, 1+int(u("m", it.ID)*12), 1+int(u("d", it.ID)*28)))
			}
		case it.Protocol == hisrubric.Accuracy && it.Facet == "conclusion":
			if good {
				parts = append(parts, right)
			} else {
				parts = append(parts, fdrConclusions[c.Language][1])
			}
		case it.Protocol == hisrubric.Accuracy:
			if good {
				parts = append(parts, right)
			} else if it.Column == "Position" {
				parts = append(parts, "Director")
			} else {
				parts = append(parts, "N/A")
			}
		default:
			// Text items: each ground-truth sentence is written with the
			// item's success rate.
			var kept []string
			for k, sent := range fdrSplitSentences(right) {
				if ok(it, strconv.Itoa(k)) {
					kept = append(kept, sent)
				}
			}
			if len(kept) == 0 {
				kept = append(kept, "Synthetic: no finding on "+strings.ToLower(row)+".")
			}
			parts = append(parts, strings.Join(kept, " "))
		}
	}
	if len(items) > 0 && (items[0].Subsection == "6.3") {
		date := fmt.Sprintf("%d-%02d-%02d", c.CY, 1+int(u("d63m", row, col)*12), 1+int(u("d63d", row, col)*28))
		if len(parts) == 1 {
			car := strconv.FormatFloat((1+u("car63", row, col)*8)*map[bool]float64{true: -1, false: 1}[strings.Contains(row, "Negative")], 'f', 1, 64) + "%"
			return date + "; CAR " + car + "; " + parts[0]
		}
		return date + "; CAR " + parts[0] + "; " + parts[1]
	}
	if len(items) > 0 && items[0].Subsection == "6.2" && len(parts) == 1 {
		date := fmt.Sprintf("%d-%02d-%02d", c.CY, 1+int(u("d62m", row, col)*12), 1+int(u("d62d", row, col)*28))
		return date + ": " + parts[0]
	}
	if len(items) > 0 && items[0].Subsection == "6.2" {
		return parts[0] + ": " + parts[1]
	}
	return strings.Join(parts, " ")
}

func fdrSign(u float64) float64 {
	if u < 0.5 {
		return -1
	}
	return 1
}

// fdrPerturb scales the number in s by f, keeping its format.
func fdrPerturb(s string, f float64) string {
	q, ok := hisrubric.ParseQuantity(s)
	if !ok {
		return "N/A"
	}
	v := q.Value * f
	dec := 2
	if i := strings.LastIndex(s, "."); i >= 0 {
		dec = len(strings.TrimRight(s[i+1:], "%"))
	}
	out := strconv.FormatFloat(v, 'f', dec, 64)
	if q.Percent {
		out += "%"
	}
	return out
}

var (
	fdrSentenceRE = regexp.MustCompile(`[^.。]+[.。]`)
	fdrTagRE      = regexp.MustCompile(`<[^>]*>`)
	fdrStrip      = strings.NewReplacer(" ", "", ",", "", "\\", "", "*", "")
)

// fdrSplitSentences splits a generated ground truth into its sentences.
func fdrSplitSentences(s string) []string {
	var out []string
	for _, m := range fdrSentenceRE.FindAllString(s, -1) {
		if t := strings.TrimSpace(m); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		out = []string{s}
	}
	return out
}

// fdrNorm normalises text for the simulated judge's containment checks.
func fdrNorm(s string) string {
	s = fdrTagRE.ReplaceAllString(s, " ")
	return strings.ToLower(fdrStrip.Replace(s))
}

// judge plays the simulated judge: it checks containment of the ground
// truth (or its sentences) in the prediction, with a small error rate.
func (w *fdrWorld) judge(p results.Prompt) (string, error) {
	b, err := hisrubric.ParseBatch(p.User)
	if err != nil {
		return "", err
	}
	flip := func(it hisrubric.BatchItem, k int) bool {
		return w.unit("judge", string(b.Stage), b.Company, it.ID, it.Prediction, strconv.Itoa(k)) < fdrJudgeError
	}
	var r hisrubric.Reply
	for _, it := range b.Items {
		ri := hisrubric.ReplyItem{ID: it.ID}
		sents := fdrSplitSentences(it.Truth)
		if len(sents) > 5 {
			sents = sents[:5]
		}
		pred := fdrNorm(it.Prediction)
		switch b.Stage {
		case hisrubric.StageClaims:
			ri.Claims = sents
		case hisrubric.StageCriteria:
			left := 10.0
			for k, sent := range sents {
				pts := math.Floor(10 / float64(len(sents)))
				if k == len(sents)-1 {
					pts = left
				}
				left -= pts
				ri.Criterion = append(ri.Criterion, hisrubric.Point{Point: "States: " + sent, Max: pts})
			}
		case hisrubric.StageAccuracy:
			good := strings.Contains(pred, fdrNorm(it.Truth)) != flip(it, 0)
			ri.Verdict = map[bool]string{true: "correct", false: "incorrect"}[good]
			ri.Reason = "Synthetic judge: " + map[bool]string{true: "the prediction states the ground truth.", false: "the prediction does not state the ground truth."}[good]
		case hisrubric.StageCoverage:
			n := 0
			for k, cl := range it.Claims {
				cov := strings.Contains(pred, fdrNorm(cl)) != flip(it, k)
				ri.Covered = append(ri.Covered, cov)
				if cov {
					n++
				}
			}
			ri.Reason = fmt.Sprintf("Synthetic judge: %d of %d claims covered.", n, len(it.Claims))
		case hisrubric.StageGrading:
			pts := 0.0
			for k, pt := range it.Criterion {
				if strings.Contains(pred, fdrNorm(strings.TrimPrefix(pt.Point, "States: "))) != flip(it, k) {
					pts += pt.Max
				}
			}
			ri.Points = &pts
			ri.Reason = fmt.Sprintf("Synthetic judge: %g of 10 points.", pts)
		}
		r.Items = append(r.Items, ri)
	}
	out, err := json.Marshal(r)
	return string(out), err
}
