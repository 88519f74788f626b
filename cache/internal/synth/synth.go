// Package synth generates synthetic exchanges for the cache's benchmarks
// and tests: agent and judge calls whose prompts and answers are English
// or Chinese financial prose of 1-30 KB. Everything it produces is
// synthetic and labelled so (meta.source "sim", model names "synthetic-").
// The output depends only on the seed.
package synth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
)

var (
	enCompanies = []string{"Northbridge Bancorp", "Harbour Capital Markets", "Meridian Life Assurance", "Pacific Crest Holdings", "Evergreen Securities", "Lion City Insurance", "Kestrel Asset Management", "Atlas Federal Savings", "Blue Delta Energy", "Sterling Orchard Retail", "Granite Peak Mining", "Silverline Telecom", "Redwood Logistics", "Aurora Biotech", "Summit Reinsurance"}
	enMetrics   = []string{"net interest margin", "return on equity", "common equity tier 1 ratio", "combined ratio", "operating cash flow", "earnings per share", "loan-to-deposit ratio", "non-performing loan ratio", "gross written premiums", "assets under management", "free cash flow", "EBITDA margin", "cost-to-income ratio", "net revenue", "dividend payout ratio", "solvency ratio", "book value per share", "trading revenue"}
	enVerbs     = []string{"rose", "fell", "widened", "narrowed", "improved", "deteriorated", "stabilised", "rebounded", "declined", "expanded", "contracted", "held steady"}
	enReasons   = []string{"as deposit costs repriced faster than loan yields", "on the back of stronger fee income from wealth management", "because catastrophe losses in the third quarter exceeded the budget", "after the group released provisions on its commercial real estate book", "reflecting tighter monetary policy across the region", "as the company diversified its funding into longer-dated bonds", "driven by currency translation effects from its Hong Kong operations", "while management accelerated its cost-efficiency programme", "amid weaker demand for mortgage refinancing", "following the disposal of a non-core insurance subsidiary", "as regulators raised counter-cyclical capital buffers", "supported by higher investment yields on the fixed income portfolio"}
	enOpeners   = []string{"In fiscal year", "During the first half of", "Compared with", "For the twelve months ending December", "According to the annual report for", "In the quarter ended September", "Relative to the guidance issued in"}
	enAnalysis  = []string{"We view this as a sign that the franchise remains resilient.", "Investors should weigh this against rising credit risk in the consumer segment.", "The board expects the trend to persist into the next reporting period.", "Peers in the same market reported broadly similar movements.", "This compares favourably with the sector median.", "Management attributed the change to one-off items that are unlikely to recur.", "Analysts at several brokers revised their target prices after the release.", "The rating agencies kept their outlook unchanged.", "Liquidity coverage remains comfortably above the regulatory minimum.", "The result was below consensus estimates compiled before the announcement."}

	zhCompanies = []string{"招商银行", "中国平安", "工商银行", "中信证券", "兴业银行", "中国人寿", "华泰证券", "宁波银行", "浦发银行", "太平洋保险", "东方财富", "海通证券", "建设银行", "民生银行", "国泰君安"}
	zhMetrics   = []string{"净息差", "净资产收益率", "核心一级资本充足率", "综合成本率", "经营活动现金流", "每股收益", "存贷比", "不良贷款率", "原保险保费收入", "资产管理规模", "自由现金流", "成本收入比", "营业收入", "分红率", "偿付能力充足率", "每股净资产", "手续费及佣金净收入", "拨备覆盖率"}
	zhVerbs     = []string{"上升", "下降", "扩大", "收窄", "改善", "恶化", "企稳", "反弹", "回落", "增长", "减少", "保持稳定"}
	zhReasons   = []string{"主要由于存款成本重定价快于贷款收益率", "得益于财富管理业务手续费收入的增长", "原因是第三季度巨灾损失超出预算", "公司释放了部分商业地产贷款的拨备", "反映出区域内货币政策持续收紧", "公司通过发行长期债券优化了负债结构", "受香港业务汇率折算影响", "管理层加快推进降本增效计划", "住房按揭再融资需求明显减弱", "公司出售了一家非核心保险子公司", "监管部门上调了逆周期资本缓冲要求", "固定收益投资组合收益率有所提高"}
	zhOpeners   = []string{"在", "截至", "与上年同期相比，", "根据公司年报，", "从季度数据看，", "相对于年初指引，"}
	zhAnalysis  = []string{"我们认为这表明公司经营韧性较强。", "投资者需关注零售贷款信用风险的上升。", "董事会预计该趋势将在下一报告期延续。", "同一市场的可比公司也出现了类似变化。", "这一表现优于行业中位数。", "管理层表示该变化主要来自一次性因素。", "多家券商在公告后调整了目标价。", "评级机构维持展望不变。", "流动性覆盖率仍显著高于监管要求。", "该结果低于公告前的市场一致预期。"}
)

// A Gen draws synthetic exchanges from a seeded source.
type Gen struct {
	r    *rand.Rand
	zipf *rand.Zipf
	en   []string // vocabulary of filler words, most frequent first
	zh   []string // vocabulary of filler characters
	n    int
}

// vocab is the size of the filler vocabularies. Filler prose drawn from
// them with Zipf frequencies makes the text about as compressible as real
// prose (about 35-45% with zstd), which a few fixed sentences would not.
const vocab = 4000

// New returns a generator for seed.
func New(seed uint64) *Gen {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	g := &Gen{r: r, zipf: rand.NewZipf(r, 1.1, 2, vocab-1)}
	syll := []string{"ba", "ca", "de", "fi", "go", "hu", "ja", "ke", "li", "mo", "nu", "pa", "qui", "re", "si", "to", "ve", "wa", "xe", "yo", "za", "tion", "ment", "al", "er", "in", "on", "st", "tr", "pl", "an", "en", "ous", "ive", "ing", "ed", "th", "sh", "ch", "ph"}
	seen := map[string]bool{}
	for len(g.en) < vocab {
		var w strings.Builder
		for range 1 + r.IntN(4) {
			w.WriteString(syll[r.IntN(len(syll))])
		}
		if !seen[w.String()] {
			seen[w.String()] = true
			g.en = append(g.en, w.String())
		}
	}
	for i := range vocab {
		g.zh = append(g.zh, string(rune(0x4e00+(i*7919)%20900)))
	}
	return g
}

func (g *Gen) filler(zh bool) string {
	var b strings.Builder
	for range 8 + g.r.IntN(20) {
		w := g.zipf.Uint64()
		if zh {
			b.WriteString(g.zh[w])
			continue
		}
		b.WriteString(g.en[w])
		b.WriteByte(' ')
	}
	if zh {
		b.WriteString("。")
	} else {
		b.WriteString(". ")
	}
	return b.String()
}

func (g *Gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *Gen) num() string {
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%.2f%%", g.r.Float64()*40)
	case 1:
		return fmt.Sprintf("%d.%d billion", 1+g.r.IntN(900), g.r.IntN(10))
	}
	return fmt.Sprintf("%d", 1000+g.r.IntN(9000000))
}

func (g *Gen) enSentence() string {
	year := 2015 + g.r.IntN(10)
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%s %d, the %s of %s %s to %s from %s, %s.", g.pick(enOpeners), year, g.pick(enMetrics), g.pick(enCompanies), g.pick(enVerbs), g.num(), g.num(), g.pick(enReasons))
	case 1:
		return fmt.Sprintf("%s reported %s of %s, which %s by %s year on year. %s", g.pick(enCompanies), g.pick(enMetrics), g.num(), g.pick(enVerbs), g.num(), g.pick(enAnalysis))
	}
	return fmt.Sprintf("The %s %s %s; %s", g.pick(enMetrics), g.pick(enVerbs), g.pick(enReasons), g.pick(enAnalysis))
}

func (g *Gen) zhSentence() string {
	year := 2015 + g.r.IntN(10)
	switch g.r.IntN(3) {
	case 0:
		return fmt.Sprintf("%s%d年，%s的%s%s至%s，%s。", g.pick(zhOpeners), year, g.pick(zhCompanies), g.pick(zhMetrics), g.pick(zhVerbs), g.num(), g.pick(zhReasons))
	case 1:
		return fmt.Sprintf("%s披露的%s为%s，同比%s%s。%s", g.pick(zhCompanies), g.pick(zhMetrics), g.num(), g.pick(zhVerbs), g.num(), g.pick(zhAnalysis))
	}
	return fmt.Sprintf("%s%s，%s；%s", g.pick(zhMetrics), g.pick(zhVerbs), g.pick(zhReasons), g.pick(zhAnalysis))
}

// text returns about n bytes of prose in the language.
func (g *Gen) text(zh bool, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if g.r.IntN(10) < 7 {
			b.WriteString(g.filler(zh))
			continue
		}
		if zh {
			b.WriteString(g.zhSentence())
		} else {
			b.WriteString(g.enSentence())
			b.WriteByte(' ')
		}
		if g.r.IntN(6) == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// An Exchange is one synthetic exchange in the cache's JSONL load form.
type Exchange struct {
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
	Meta     map[string]any  `json:"meta"`
}

var providers = []struct{ provider, endpoint string }{
	{"openai", "chat/completions"},
	{"anthropic", "messages"},
	{"sim", "chat/completions"},
}

// Next returns the next exchange: a JSONL line without its newline.
func (g *Gen) Next() []byte {
	g.n++
	zh := g.r.IntN(2) == 0
	judge := g.r.IntN(3) == 0
	total := 1024 + g.r.IntN(29*1024)
	prov := providers[g.r.IntN(len(providers))]
	model := fmt.Sprintf("synthetic-%s-%d", prov.provider, 1+g.r.IntN(4))
	var prompt, answer string
	if judge {
		prompt = "You are a strict financial analyst grading a research report against a rubric. Reply with JSON {\"score\": 0-10, \"justification\": \"...\"}.\n\nReport:\n" + g.text(zh, total*3/4)
		answer = fmt.Sprintf(`{"score": %d, "justification": %q}`, g.r.IntN(11), g.text(zh, total/4))
	} else {
		prompt = fmt.Sprintf("Task %d. Write a concise equity research note on the question below, citing sources.\n\n", g.n) + g.text(zh, total/5)
		answer = g.text(zh, total*4/5)
	}
	body := map[string]any{
		"model":       model,
		"temperature": 0,
		"max_tokens":  4096,
		"seed":        g.n % 7,
		"messages": []map[string]string{
			{"role": "system", "content": "You are a careful financial research assistant."},
			{"role": "user", "content": prompt},
		},
	}
	resp := map[string]any{
		"id":      fmt.Sprintf("synthetic-%08d", g.n),
		"object":  "chat.completion",
		"model":   model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]string{"role": "assistant", "content": answer}}},
		"usage":   map[string]int{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(answer) / 4},
	}
	if prov.provider == "anthropic" {
		// The Messages API's shapes: the system prompt is a top-level
		// field, and the answer a list of content blocks.
		delete(body, "seed")
		body["system"] = "You are a careful financial research assistant."
		body["messages"] = []map[string]string{{"role": "user", "content": prompt}}
		resp = map[string]any{
			"id":          fmt.Sprintf("msg_synthetic_%08d", g.n),
			"type":        "message",
			"role":        "assistant",
			"model":       model,
			"content":     []map[string]string{{"type": "text", "text": answer}},
			"stop_reason": "end_turn",
			"usage":       map[string]int{"input_tokens": len(prompt) / 4, "output_tokens": len(answer) / 4},
		}
	}
	req := map[string]any{"provider": prov.provider, "endpoint": prov.endpoint, "body": body, "sample": g.r.IntN(3)}
	x := Exchange{Request: mustJSON(req), Response: mustJSON(resp), Meta: map[string]any{
		"provider": prov.provider, "model": model, "reported_model": model + "-0001",
		"input_tokens": len(prompt) / 4, "output_tokens": len(answer) / 4,
		"cost_usd": float64(g.r.IntN(100000)) / 1e6, "latency_ms": 200 + g.r.IntN(20000),
		"recorded_at": fmt.Sprintf("2026-01-%02dT%02d:%02d:00Z", 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60)),
		"attempts":    1, "source": "sim",
	}}
	return mustJSON(x)
}

func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps, slices and strings: cannot fail
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// Write writes n exchanges as JSONL to w.
func Write(w io.Writer, n int, seed uint64) error {
	g := New(seed)
	for range n {
		line := append(g.Next(), '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
