package site

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/results"
)

// payloads are hostile strings that must show as text wherever they go:
// each would set window.__pwned, open a dialog or load something if it
// reached the page as HTML or script.
var payloads = []string{
	`<script>window.__pwned="script"</script>`,
	`<img src=x onerror="window.__pwned='img'">`,
	`javascript:window.__pwned='link'`,
	`</script><script>window.__pwned="break"</script>`,
	`"><svg onload="window.__pwned='svg'">`,
	`<a href="javascript:alert('a')">click</a>`,
	"\u2028</script>\u2029<!--",
	`'; window.__pwned='quote'; ' {{.}} ${alert(1)}`,
	`<iframe srcdoc="<script>parent.__pwned='iframe'</script>"></iframe>`,
	`&lt;script&gt;alert(1)&lt;/script&gt; [x](javascript:alert(1))`,
}

// hostile is every payload in one string.
var hostile = strings.Join(payloads, " ")

// fixture returns a synthetic site input with every chart kind, confidence
// intervals, ties, undefined cells, CJK text, details, sweeps, comparisons
// and aliases. With evil set, hostile text goes into every place that
// holds model or user text: system, task and column names, chart titles,
// cells, notes, outputs, verdicts, provenance.
func fixture(evil bool) Input {
	x := func(normal string) string {
		if evil {
			return normal + " " + hostile
		}
		return normal
	}
	systems := []string{"OpenAI-o3-deep-research", "Gemini-2.5-Pro-Deep-Research", "文心一言 深度研究", "Perplexity-Deep-Research", x("Grok-3-DeepSearch")}
	overall := &analysis.Table{Benchmark: "icbcbench", Name: "overall", Title: "Overall scores", Caption: x("Objective and subjective tracks, EN and ZH."),
		Columns: []analysis.Column{
			{Name: "system", Title: "System"},
			{Name: "en_overall", Title: "EN overall", Decimals: 2, Better: analysis.Higher},
			{Name: "zh_overall", Title: "ZH overall", Decimals: 2, Better: analysis.Higher},
			{Name: "delta", Title: "Δ EN−ZH", Decimals: 2},
			{Name: "accuracy", Title: "Accuracy", Unit: "%", Decimals: 2, Better: analysis.Higher},
			{Name: "ci_low", Title: "CI low", Decimals: 2},
			{Name: "ci_high", Title: "CI high", Decimals: 2},
			{Name: "calibration_error", Title: x("Calibration error"), Unit: "%", Decimals: 2, Better: analysis.Lower, Doc: x("RMS calibration error")},
			{Name: "tier", Title: "Tier"},
		},
		Notes: []string{x("Synthetic numbers."), "Ties share a mark."},
		Charts: []analysis.Chart{
			{ID: "overall_mirror", Kind: analysis.Mirror, Title: x("EN vs ZH overall"), X: "system", Y: []string{"en_overall", "zh_overall", "delta"}, YName: "points"},
			{ID: "accuracy_ci", Kind: analysis.Bar, Title: "Accuracy with 95% CI", X: "system", Y: []string{"accuracy"}, Low: "ci_low", High: "ci_high", YName: "%"},
			{ID: "acc_vs_calib", Kind: analysis.Scatter, Title: "Accuracy vs calibration error", X: "calibration_error", Y: []string{"accuracy"}, Label: "system",
				Zone: &analysis.Zone{XMin: 0, XMax: 60, YMin: 30, YMax: 100, Label: x("ideal zone")}, XName: "calibration error (%)", YName: "accuracy (%)"},
		},
	}
	vals := [][]float64{
		{61.25, 58.5, 2.75, 42.5, 38.1, 46.9, 55.2},
		{61.25, 60.1, 1.15, 40, 35.6, 44.4, 62.9},
		{57.8, 63.4, -5.6, 37.5, 33, 42, 48.75},
		{49.9, 47.2, 2.7, 30, 25.5, 34.5, math.Inf(1)},
		{45.3, 40.05, 5.25, 25, 20.2, 29.8, 71.3},
	}
	tiers := []string{"A", "A", "A", "B", x("C")}
	for i, s := range systems {
		row := []analysis.Cell{analysis.Text(s)}
		for _, v := range vals[i] {
			if math.IsInf(v, 1) {
				row = append(row, analysis.Undefined(x("fewer than 10 confident answers")))
				continue
			}
			row = append(row, analysis.Number(v))
		}
		row = append(row, analysis.Text(tiers[i]))
		overall.AddRow(row...)
	}
	dims := &analysis.Table{Benchmark: "icbcbench", Name: "dimensions", Title: "Expert score by dimension",
		Columns: []analysis.Column{{Name: "system", Title: "System"},
			{Name: "accuracy", Decimals: 1, Better: analysis.Higher}, {Name: "depth", Title: x("Depth"), Decimals: 1, Better: analysis.Higher},
			{Name: "compliance", Title: "合规", Decimals: 1, Better: analysis.Higher}, {Name: "citations", Decimals: 1, Better: analysis.Higher}},
		Charts: []analysis.Chart{{ID: "dim_heat", Kind: analysis.Heatmap, Title: "System × dimension", X: "system", Y: []string{"accuracy", "depth", "compliance", "citations"}}},
	}
	for i, s := range systems {
		row := []analysis.Cell{analysis.Text(s)}
		for j := 0; j < 4; j++ {
			if i == 3 && j == 2 {
				row = append(row, analysis.Undefined("no rubric"))
				continue
			}
			row = append(row, analysis.Number(float64(40+(i*7+j*13)%50)+0.25))
		}
		dims.AddRow(row...)
	}
	// paired comparisons on request (the requested_pairs table); the
	// numbers are synthetic and set by hand, Holm over the two defined
	// p-values 0.004 and 0.08: 0.004*2 = 0.008, max(0.008, 0.08*1) = 0.08
	requested := &analysis.Table{Benchmark: "icbcbench", Name: "requested_pairs", Title: "Paired comparisons on request",
		Columns: uncertainty.PairColumns(2, "items both scored", "tasks of the shared items", "the shared items", "Holm-adjusted across the requested pairs")}
	pairRow := func(a, b string, diff, lo, hi, se, p float64, method string, holm float64, resolved string) {
		requested.AddRow(analysis.Text(a), analysis.Text(b), analysis.Int(40), analysis.Int(20), analysis.Number(diff), analysis.Number(lo), analysis.Number(hi),
			analysis.Number(se), analysis.Number(p), analysis.Text(method), analysis.Number(holm), analysis.Text(resolved))
	}
	pairRow(systems[0], systems[2], 3.45, 1.2, 5.7, 1.15, 0.004, "exact", 0.008, "yes")
	pairRow(systems[3], systems[4], 4.6, -0.5, 9.75, 2.6, 0.08, "sampled", 0.08, "no")
	u := analysis.Undefined(x("no shared items"))
	requested.AddRow(analysis.Text(systems[0]), analysis.Text(systems[4]), analysis.Int(0), analysis.Int(0), u, u, u, u, u, analysis.Text(""), u, analysis.Text("no"))
	var details []analysis.Detail
	for t, task := range []string{"en-001", "zh-007 上市银行", x("en-013")} {
		for i, s := range systems[:3] {
			details = append(details, analysis.Detail{
				Task: task, System: s,
				Question: x(fmt.Sprintf("What was the net interest margin of the bank in FY%d? 净息差是多少？", 2020+t)),
				Output:   x(fmt.Sprintf("## Answer\n\n| metric | value |\n|---|---|\n| NIM | %d.%02d%% |\n\nConfidence: %d%%\n", 1+i, 10*t+i, 60+10*i)),
				Score:    []string{"correct", "incorrect", "58.0/100"}[i],
				Verdicts: []analysis.Verdict{
					{Judge: "gpt-4.1", Verdict: "correct", Reasoning: x("The answer matches the ground truth within tolerance."), Call: fixtureCall(task, s, "gpt-4.1")},
					{Judge: x("claude-3.7-sonnet"), Verdict: x("incorrect"), Reasoning: "答案与标准答案不符。\n\nSecond paragraph.", Call: fixtureCall(task, s, "claude")},
				},
				Call: fixtureCall(task, s, ""),
			})
		}
	}
	icbc := &analysis.Result{Benchmark: "icbcbench", Title: "ICBCBench", Tables: []*analysis.Table{overall, dims, requested}, Headline: "overall",
		Ranking: []string{systems[0], systems[1], systems[2], systems[3], systems[4]},
		Scores:  map[string]float64{systems[0]: 61.25, systems[1]: 61.25, systems[2]: 57.8, systems[3]: 49.9, systems[4]: 45.3},
		Details: details, Problems: []string{x("en-013: judge gpt-4.1 verdict unparsable")}, Missing: 2}

	fsys := []string{"o3-deep-research", "gemini-deep-research", x("kimi-researcher")}
	weekly := &analysis.Table{Benchmark: "findeepforecast", Name: "weekly_accuracy", Title: "Weekly accuracy",
		Columns: []analysis.Column{{Name: "week", Title: "Week"}},
		Charts:  []analysis.Chart{{ID: "weekly", Kind: analysis.Line, Title: "Accuracy by week", X: "week", Y: fsys, XName: "week", YName: "accuracy (%)"}}}
	for _, s := range fsys {
		weekly.Columns = append(weekly.Columns, analysis.Column{Name: s, Decimals: 1, Unit: "%", Better: analysis.Higher})
	}
	for w := 1; w <= 6; w++ {
		row := []analysis.Cell{analysis.Text(fmt.Sprintf("W%d", w))}
		for i := range fsys {
			if w == 4 && i == 1 {
				row = append(row, analysis.Undefined("no resolved tasks"))
				continue
			}
			row = append(row, analysis.Number(float64(30+((w*11+i*17)%40))))
		}
		weekly.AddRow(row...)
	}
	types := &analysis.Table{Benchmark: "findeepforecast", Name: "task_types", Title: "Accuracy by task type",
		Columns: []analysis.Column{{Name: "system"}, {Name: "recurrent", Decimals: 1, Better: analysis.Higher}, {Name: "non_recurrent", Title: "non-recurrent", Decimals: 1, Better: analysis.Higher}},
		Charts:  []analysis.Chart{{ID: "types", Kind: analysis.Bar, Title: "Task types", X: "system", Y: []string{"recurrent", "non_recurrent"}}}}
	for i, s := range fsys {
		types.AddRow(analysis.Text(s), analysis.Number(20+float64(i)*5), analysis.Number(50-float64(i)*3))
	}
	// an audit table naming tasks: its task cells link to the entries
	isolation := &analysis.Table{Benchmark: "findeepforecast", Name: "isolation_flags", Title: "Temporal isolation",
		Columns: []analysis.Column{{Name: "task"}, {Name: "method"}, {Name: "reason"}}}
	isolation.AddRow(analysis.Text("fc-042"), analysis.Text(fsys[0]), analysis.Text(x("source after the deadline")))
	isolation.AddRow(analysis.Text("fc-999"), analysis.Text(fsys[1]), analysis.Text("no such task"))
	forecast := &analysis.Result{Benchmark: "findeepforecast", Title: "FinDeepForecast", Tables: []*analysis.Table{weekly, types, isolation}, Headline: "task_types",
		Ranking: fsys, Scores: map[string]float64{fsys[0]: 35, fsys[1]: 32, fsys[2]: 29}, Synthetic: true,
		Details: []analysis.Detail{{Task: "fc-042", System: fsys[0], Question: "Will the ECB cut rates in week 12?", Output: x(strings.Repeat("Yes, the ECB cuts rates in week 12. ", 300)), Score: "correct",
			Verdicts: manyVerdicts(x)}}}

	sweep := &analysis.Table{Benchmark: "icbcbench", Name: "sweep_judges", Title: "Judge panel sweep", Caption: "Rank change against the baseline.",
		Columns: []analysis.Column{{Name: "system"}, {Name: "gpt-4.1"}, {Name: "claude", Title: x("claude")}, {Name: "both"}},
		Notes:   []string{"Kendall τ 0.80, Spearman ρ 0.90 for the single-judge panels."},
		Charts:  []analysis.Chart{{ID: "sweep_heat", Kind: analysis.Heatmap, Title: "Rank change", X: "system", Y: []string{"gpt-4.1", "claude", "both"}}}}
	for i, s := range systems {
		sweep.AddRow(analysis.Text(s), analysis.Int(i%3-1), analysis.Int((i+1)%3-1), analysis.Int(0))
	}
	cmp := &analysis.Table{Benchmark: "icbcbench", Name: "published_vs_computed", Title: "Published vs computed",
		Columns: []analysis.Column{{Name: "table"}, {Name: "cells"}, {Name: "max_abs_diff", Decimals: 2, Better: analysis.Lower}, {Name: "verdict"}}}
	cmp.AddRow(analysis.Text("overall"), analysis.Int(95), analysis.Number(0.01), analysis.Text(x("match")))
	cmp2 := &analysis.Table{Name: "all_benchmarks", Title: "All comparisons",
		Columns: []analysis.Column{{Name: "benchmark"}, {Name: "verdict"}}}
	cmp2.AddRow(analysis.Text("icbcbench"), analysis.Text("match"))
	// a published table as the paper prints it: systems[0] en reproduced,
	// zh 58.49 against 58.5 (+0.01, twice the half-unit 0.005: within
	// twice the tolerance); systems[1] en 61.20 against 61.25 (+0.05:
	// differs); a system the bundle lacks; a column not computed
	pub := &results.CSVTable{File: "published/icbcbench/overall.csv", Header: []string{"system", "en_overall", "zh_overall", x("recall")},
		Rows: [][]string{{systems[0], "61.25", "58.49", "3"}, {systems[1], "61.20", "60.10", ""}, {x("Gone Research"), "50.00", "50.00", "1"}}}
	published := []analysis.Comparison{analysis.Compare("icbcbench", pub, overall, -1)}
	return Input{
		Published:   published,
		Results:     []*analysis.Result{icbc, forecast},
		Sensitivity: []*analysis.Table{sweep},
		Comparisons: []*analysis.Table{cmp, cmp2},
		Provenance: report.Provenance{Bundle: x("demo"), BundleSHA256: "3fa2c1d0e4b5a6978877665544332211ffeeddccbbaa99887766554433221100",
			Producer: "finrepro demo (synthetic)", Version: "0.1.0", CacheDigest: "9f86d081884c7d65", Synthetic: true,
			Settings: [][2]string{{"judges", x("all")}, {"tolerance_scale", "1"}}},
		Aliases: []Alias{
			{System: "OpenAI o3 Deep Research", Benchmark: "icbcbench", Name: systems[0]},
			{System: "OpenAI o3 Deep Research", Benchmark: "findeepforecast", Name: fsys[0]},
			{System: "Gemini Deep Research", Benchmark: "findeepforecast", Name: fsys[1]},
			{System: "Gemini Deep Research", Benchmark: "icbcbench", Name: systems[1]},
		},
		Downloads: []string{"xlsx/all.xlsx", "csv/icbcbench/overall.csv", "MANIFEST.json"},
		Exchanges: fixtureExchanges(x),
	}
}

// fixtureCall is the Call of a fixture exchange: judge's verdict on
// system's output of task, or with judge "" the output itself; a key
// ending in "dead" is one the fixture's lookup cannot give.
func fixtureCall(task, system, judge string) *analysis.Call {
	k := fmt.Sprintf("%x", sha256.Sum256([]byte(task+"\x00"+system+"\x00"+judge)))
	if strings.HasPrefix(task, "zh-007") && judge == "claude" {
		k = k[:60] + "dead"
	}
	return &analysis.Call{Key: k, Sample: len(judge) % 2, Model: judge + "-2025", Source: "sim"}
}

// fixtureReport is the long text every fixture judge request quotes (and
// so every page shares once).
var fixtureReport = strings.Repeat("The bank's net interest margin was 1.9% in FY2021. ", 20)

// fixtureExchanges looks up the fixture's exchanges: a request quoting
// fixtureReport and the key, and a response, as JSON (hostile text in
// both with evil).
func fixtureExchanges(x func(string) string) ExchangeLookup {
	return func(key string, _ bool, buf []byte) (*Exchange, []byte, error) {
		if strings.HasSuffix(key, "dead") {
			return nil, buf, errors.New(x("cache: get " + key[:8] + ": not found"))
		}
		req, _ := json.Marshal(map[string]any{"provider": "sim", "body": map[string]any{"model": "m", "messages": []any{
			map[string]any{"role": "user", "content": x("Grade this report.\n\n") + fixtureReport}}}})
		resp, _ := json.Marshal(map[string]any{"id": key, "choices": []any{map[string]any{"message": map[string]any{"content": x("Verdict: correct")}}}})
		return &Exchange{Request: req, Response: resp, Model: "m", ReportedModel: x("m-2025-01"), InputTokens: 1200, OutputTokens: 34,
			CostUSD: 0.0031, Source: "sim", Provenance: x(""), RecordedAt: "2025-03-01T12:00:00Z"}, buf, nil
	}
}

// manyVerdicts are more verdicts than a task page entry shows unfolded
// (foldVerdicts), so that the folded, JSON-held rows carry hostile text.
func manyVerdicts(x func(string) string) []analysis.Verdict {
	vs := []analysis.Verdict{{Judge: "rule", Verdict: "correct", Reasoning: "Resolved Yes."}}
	for i := range foldVerdicts {
		vs = append(vs, analysis.Verdict{Judge: x(fmt.Sprintf("item %d", i+1)), Verdict: x("pass"), Reasoning: x("Checked against the resolution source.")})
	}
	return vs
}
