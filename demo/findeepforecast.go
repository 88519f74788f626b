package demo

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/forecast"
	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// FinDeepForecast returns the FinDeepForecast demo generator: a synthetic
// ten-week task set over the eight markets, the paper's 13 methods (tuned
// so that full-scale accuracies land near its task-type table) and one
// hostile system, with late predictions, post-deadline evidence and
// pending and void tasks for the lifecycle and the isolation audit.
func FinDeepForecast() Generator { return forecastGen{} }

type forecastGen struct{}

// Benchmark returns forecast.Benchmark.
func (forecastGen) Benchmark() analysis.Benchmark { return forecast.Benchmark{} }

// HostileForecastSystem is the demo's hostile system: its outputs carry
// markup, script links and spreadsheet formulas, one huge output and one
// malformed one.
const HostileForecastSystem = "Hostile-Demo (synthetic)"

// Demo calendar: the first batch is released on Thursday 30 October 2025;
// deadlines are the following Sunday 23:59 UTC+8; the evaluation is on
// Monday 2 February 2026.
var (
	fcFirstRelease = time.Date(2025, 10, 30, 2, 0, 0, 0, time.UTC)
	fcDeadlineLag  = 3*24*time.Hour + 13*time.Hour + 59*time.Minute
	fcEvaluatedAt  = time.Date(2026, 2, 2, 0, 0, 0, 0, time.UTC)
)

// fcCell is one task type of the paper's table.
type fcCell struct {
	kind, level string
	col         string // task_types.csv column
}

var fcCells = []fcCell{
	{forecast.NonRecurrent, forecast.Corporate, "nonrec_corporate"},
	{forecast.NonRecurrent, forecast.Macro, "nonrec_macro"},
	{forecast.Recurrent, forecast.Corporate, "rec_corporate"},
	{forecast.Recurrent, forecast.Macro, "rec_macro"},
}

// fcCounts are resolved tasks per cell (the paper's 247/128/723/296 at
// full scale, each multiplied by factor), then pending and void tasks.
func fcCounts(s Scale, factor int) (cells [4]int, pending, void int) {
	if s == Full {
		f := factor
		return [4]int{247 * f, 128 * f, 723 * f, 296 * f}, 24 * f, 24 * f
	}
	return [4]int{4, 3, 9, 4}, 2, 2
}

// fcSystem is one simulated method.
type fcSystem struct {
	name, group, model string
	// shift[c] is the logit shift of cell c; with a market's factor it
	// gives the chance of a correct forecast.
	shift   [4]float64
	factor  map[string]float64 // market accuracy / mean market accuracy
	search  bool
	hostile bool
}

// fcTask is a generated task with what the oracle needs.
type fcTask struct {
	forecast.Task
	cell  int
	y     float64
	yes   bool
	eps   float64
	index int // position in ID order
}

type fcOracle struct {
	seed    uint64
	tasks   map[string]*fcTask
	systems map[string]*fcSystem // by model
	leaks   map[[2]string]bool   // (model, task) pairs citing post-deadline evidence
}

var fcIndexes = map[string]string{"US": "S&P 500", "CN": "CSI 300", "HK": "HSI", "JP": "Nikkei 225", "UK": "FTSE 100", "DE": "DAX 40", "FR": "CAC 40", "SG": "STI"}
var fcCurrency = map[string]string{"US": "USD", "CN": "CNY", "HK": "HKD", "JP": "JPY", "UK": "GBP", "DE": "EUR", "FR": "EUR", "SG": "SGD"}

// Generate writes config.json, tasks.jsonl, prediction_log.jsonl and
// tolerances.csv into dir and returns the oracle playing every system.
func (forecastGen) Generate(dir string, opt Options) (replay.Oracle, error) {
	systems, mix, err := fcLoadSystems()
	if err != nil {
		return nil, err
	}
	o := &fcOracle{seed: opt.Seed, tasks: map[string]*fcTask{}, systems: map[string]*fcSystem{}, leaks: map[[2]string]bool{}}
	for _, s := range systems {
		o.systems[s.model] = s
	}
	tasks := fcTasks(opt, mix)
	for i, t := range tasks {
		t.index = i
		o.tasks[t.ID] = t
	}
	cfg := forecast.Config{Format: forecast.ConfigFormat, EvaluatedAt: fcEvaluatedAt.Format(time.RFC3339)}
	for _, s := range systems {
		params := map[string]any{"temperature": 0}
		if s.search {
			params["search"] = true
		}
		cfg.Systems = append(cfg.Systems, forecast.System{Name: s.name, Group: s.group, Provider: "sim", Model: s.model, Params: params})
	}
	cb, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return nil, err
	}
	var tb, lb bytes.Buffer
	for _, t := range tasks {
		line, err := json.Marshal(&t.Task)
		if err != nil {
			return nil, err
		}
		tb.Write(line)
		tb.WriteByte('\n')
	}
	// The prediction log: most predictions are recorded between release
	// and deadline; about 1.5% (and a fixed pair at every scale) after it.
	for _, t := range tasks {
		tg, _ := time.Parse(time.RFC3339, t.Generated)
		td, _ := time.Parse(time.RFC3339, t.Deadline)
		for si, s := range systems {
			at := tg.Add(time.Duration(1+int(60*o.unit("log", s.model, t.ID))) * time.Hour)
			if o.unit("late", s.model, t.ID) < 0.015 || (t.index == 1 && si == 0) {
				at = td.Add(time.Duration(1+int(30*o.unit("late-hours", s.model, t.ID))) * time.Hour)
			}
			if s.search && (o.unit("leak", s.model, t.ID) < 0.015 || (t.index == 2 && si == len(systems)-2)) {
				o.leaks[[2]string{s.model, t.ID}] = true
			}
			line, err := json.Marshal(forecast.LogEntry{System: s.name, Task: t.ID, RecordedAt: at.Format(time.RFC3339)})
			if err != nil {
				return nil, err
			}
			lb.Write(line)
			lb.WriteByte('\n')
		}
	}
	var tol strings.Builder
	tol.WriteString("# Synthetic demo inputs: the paper's tolerance table.\nkind,key,applies_to,epsilon\n")
	for _, tl := range forecast.DefaultTolerances() {
		fmt.Fprintf(&tol, "%s,%s,%s,%s\n", tl.Kind, tl.Key, tl.AppliesTo, strconv.FormatFloat(tl.Epsilon, 'g', -1, 64))
	}
	for _, f := range []struct {
		name string
		data []byte
	}{
		{forecast.ConfigFile, append(cb, '\n')},
		{forecast.TasksJSONLFile, tb.Bytes()},
		{forecast.LogFile, lb.Bytes()},
		{forecast.ToleranceFile, []byte(tol.String())},
	} {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			return nil, fmt.Errorf("findeepforecast: write %s: %w", f.name, err)
		}
	}
	return o, nil
}

// unit returns a number in [0, 1) from the seed and parts.
func (o *fcOracle) unit(parts ...string) float64 {
	return float64(fcHash(o.seed, parts...)>>11) / (1 << 53)
}

func fcHash(seed uint64, parts ...string) uint64 {
	h := sha256.New()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return binary.BigEndian.Uint64(h.Sum(nil)[:8])
}

// fcLoadSystems reads the 13 methods and their published accuracies from
// the embedded task-type and market tables, then adds the hostile system.
// It also returns, per task type, the distribution of tasks over the
// markets (in forecast.Markets order).
//
// The published market table is explained well by markets differing in
// their share of non-recurrent tasks: for market m, accuracy ~ s_m x
// non-recurrent accuracy + (1 - s_m) x recurrent accuracy, with s_m fitted
// by least squares over the 13 methods (residuals of 2-6 points). Market
// sizes then follow from the task counts: weights w_m = (1 - s_m)^k with k
// such that the non-recurrent and recurrent totals come out as published.
// What the mix leaves unexplained becomes a per-method market factor on
// the logit scale, and each method's chance per task type is calibrated
// over the type's market mix so that the task-type table is kept.
func fcLoadSystems() ([]*fcSystem, [4][]float64, error) {
	var mix [4][]float64
	read := func(name string) (*results.CSVTable, error) {
		b, err := assets.ReadFile("assets/published/findeepforecast/" + name)
		if err != nil {
			return nil, err
		}
		return results.ReadCSV(bytes.NewReader(b), name)
	}
	tt, err := read("task_types.csv")
	if err != nil {
		return nil, mix, err
	}
	mk, err := read("markets.csv")
	if err != nil {
		return nil, mix, err
	}
	num := func(t *results.CSVTable, row []string, col string) float64 {
		i := t.Col(col)
		if i < 0 {
			err = fmt.Errorf("findeepforecast: %s: no column %s", t.File, col)
			return 0
		}
		v, perr := strconv.ParseFloat(row[i], 64)
		if perr != nil {
			err = fmt.Errorf("findeepforecast: %s: %s: %w", t.File, col, perr)
		}
		return v
	}
	nm := len(forecast.Markets)
	type pub struct {
		nr, rec float64
		cells   [4]float64
		market  []float64
	}
	var pubs []pub
	for _, row := range tt.Rows {
		mi := slices.IndexFunc(mk.Rows, func(r []string) bool { return r[0] == row[0] })
		if mi < 0 {
			return nil, mix, fmt.Errorf("findeepforecast: %s: no market row for %q", mk.File, row[0])
		}
		p := pub{nr: num(tt, row, "nonrec_overall"), rec: num(tt, row, "rec_overall")}
		for c, cell := range fcCells {
			p.cells[c] = num(tt, row, cell.col)
		}
		for _, m := range forecast.Markets {
			p.market = append(p.market, num(mk, mk.Rows[mi], m))
		}
		pubs = append(pubs, p)
	}
	if err != nil {
		return nil, mix, err
	}
	share := make([]float64, nm)
	for m := range share {
		var sxy, sxx float64
		for _, p := range pubs {
			sxy += (p.market[m] - p.rec) * (p.nr - p.rec)
			sxx += (p.nr - p.rec) * (p.nr - p.rec)
		}
		share[m] = min(max(sxy/sxx, 0.02), 0.98)
	}
	counts, _, _ := fcCounts(Full, 1)
	target := float64(counts[2]+counts[3]) / float64(counts[0]+counts[1])
	weights := func(k float64) []float64 {
		w := make([]float64, nm)
		for m := range w {
			w[m] = math.Pow(1-share[m], k)
		}
		return w
	}
	ratio := func(k float64) float64 {
		var a, b float64
		for m, w := range weights(k) {
			a += w * (1 - share[m])
			b += w * share[m]
		}
		return a / b
	}
	lo, hi := -30.0, 30.0
	for range 60 {
		if k := (lo + hi) / 2; ratio(k) < target {
			lo = k
		} else {
			hi = k
		}
	}
	w := weights((lo + hi) / 2)
	for c, cell := range fcCells {
		mix[c] = make([]float64, nm)
		var sum float64
		for m := range mix[c] {
			mix[c][m] = w[m] * share[m]
			if cell.kind == forecast.Recurrent {
				mix[c][m] = w[m] * (1 - share[m])
			}
			sum += mix[c][m]
		}
		for m := range mix[c] {
			mix[c][m] /= sum
		}
	}
	var out []*fcSystem
	for i, row := range tt.Rows {
		p := pubs[i]
		s := &fcSystem{name: row[0], group: row[1], model: "sim-" + fcSlug(row[0]), factor: map[string]float64{}}
		s.search = s.group != "thinking"
		for m, name := range forecast.Markets {
			pred := share[m]*p.nr + (1-share[m])*p.rec
			s.factor[name] = min(max(p.market[m]/pred, 0.25), 4)
		}
		for c := range fcCells {
			s.shift[c] = fcCalibrate(p.cells[c]/100, s.factor, mix[c])
		}
		out = append(out, s)
	}
	h := &fcSystem{name: HostileForecastSystem, group: "synthetic", model: "sim-hostile-demo", hostile: true, search: true, factor: map[string]float64{}}
	for _, m := range forecast.Markets {
		h.factor[m] = 1
	}
	for c := range h.shift {
		h.shift[c] = fcCalibrate(0.3, h.factor, mix[c])
	}
	return append(out, h), mix, nil
}

var slugRE = regexp.MustCompile(`[^a-z0-9]+`)

func fcSlug(s string) string {
	return strings.Trim(slugRE.ReplaceAllString(strings.ToLower(s), "-"), "-")
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// fcCalibrate finds the logit shift a with sum over markets of
// mix x sigmoid(a + ln factor) = p: tasks spread over the markets by mix
// then have accuracy p, while each market keeps its factor.
func fcCalibrate(p float64, factor map[string]float64, mix []float64) float64 {
	p = min(max(p, 0.001), 0.999)
	lo, hi := -20.0, 20.0
	for range 60 {
		a := (lo + hi) / 2
		var m float64
		for i, mk := range forecast.Markets {
			m += mix[i] * sigmoid(a+math.Log(factor[mk]))
		}
		if m < p {
			lo = a
		} else {
			hi = a
		}
	}
	return (lo + hi) / 2
}

// Templates of the synthetic tasks.
var (
	fcMillionMetrics = []string{"Revenue", "Net Income", "Operating Income", "Total Assets", "Free Cash Flow", "EBITDA", "Cash From Operations"}
	fcRatioMetrics   = []struct{ name, unit string }{{"Gross Margin", "%"}, {"Return on Equity (ROE)", "%"}, {"Net Margin", "%"}, {"Current Ratio", "ratio"}, {"Debt-to-Equity Ratio", "ratio"}}
	fcMacro          = []struct{ name, category, unit string }{
		{"Interest Rate (3m)", "interest_rate", "%"}, {"Interest Rate (1yr)", "interest_rate", "%"}, {"Interbank Rate", "interest_rate", "%"},
		{"FX Rate", "fx_rate", "per USD"}, {"CPI (YoY change)", "other_macro", "%"}, {"Unemployment Rate", "other_macro", "%"},
		{"House Price Index", "other_macro", "index points"}, {"Stock Index", "other_macro", "index points"}, {"PPI (MoM change)", "other_macro", "%"},
	}
	fcCorpEvents  = []string{"announce an acquisition", "announce a change of CEO", "announce a share buyback", "issue a profit warning", "announce a new strategic partnership"}
	fcMacroEvents = []string{"raise its policy rate by at least 25 bps", "announce a fiscal stimulus above 1% of GDP", "tighten export controls", "cut its policy rate by at least 25 bps"}
)

// fcTasks generates the task set, sorted by ID: at full scale each task's
// market is drawn from its type's mix; at small scale the markets take
// turns, so that each has tasks.
func fcTasks(opt Options, mix [4][]float64) []*fcTask {
	r := stats.NewRand(opt.Seed ^ 0xf04eca57)
	counts, pending, void := fcCounts(opt.Scale, opt.factor())
	var out []*fcTask
	n := 0
	add := func(cell, week int) *fcTask {
		n++
		market := forecast.Markets[n%len(forecast.Markets)]
		if opt.Scale == Full {
			x := r.Float64()
			for i, p := range mix[cell] {
				if x -= p; x < 0 || i == len(mix[cell])-1 {
					market = forecast.Markets[i]
					break
				}
			}
		}
		t := fcMakeTask(r, fmt.Sprintf("fdf-w%02d-%04d", week, n), cell, week, market)
		out = append(out, t)
		return t
	}
	for c, k := range counts {
		for range k {
			t := add(c, fcWeek(r, c))
			fcResolve(r, t)
		}
	}
	for i := range pending {
		// Released in week 10 with t_e five days before the evaluation:
		// the validity window is still open.
		t := add(i%4, 10)
		te := fcEvaluatedAt.Add(-5 * 24 * time.Hour)
		old, _ := time.Parse(time.RFC3339, t.Evaluated)
		t.Question = strings.Replace(t.Question, old.Format(fcDateLayout), te.Format(fcDateLayout), 1)
		t.Evaluated = te.Format(time.RFC3339)
	}
	for i := range void {
		t := add(i%4, 3+i%6)
		// Half never resolve; the rest resolve 17 days after t_e: void with
		// the default two-week window, resolved with three weeks.
		if i%2 == 1 {
			te, _ := time.Parse(time.RFC3339, t.Evaluated)
			fcSetTruth(t)
			t.ResolvedAt = te.Add(17 * 24 * time.Hour).Format(time.RFC3339)
		}
	}
	// The first resolved recurrent macro task becomes a PPI change that
	// resolves to exactly zero, to exercise the zero rule.
	for _, t := range out {
		if t.cell == 3 && t.Truth != "" {
			te, _ := time.Parse(time.RFC3339, t.Evaluated)
			t.Metric, t.Category, t.Unit, t.eps = "PPI (MoM change)", "other_macro", "%", 0.01
			t.Question = fmt.Sprintf("What will the %s of %s be in the release of %s (%s)? (synthetic demo task)", t.Metric, t.Market, te.Format(fcDateLayout), t.Unit)
			t.y, t.Truth = 0, "0"
			break
		}
	}
	slices.SortFunc(out, func(a, b *fcTask) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// fcWeek draws a release week: recurrent corporate tasks crowd the early
// weeks (the reporting season), the rest spread evenly.
func fcWeek(r *rand.Rand, cell int) int {
	if cell != 2 {
		return 1 + r.IntN(10)
	}
	x := r.IntN(65) // weights 11, 10, ..., 2 over weeks 1..10 sum to 65
	for w := 1; ; w++ {
		if x -= 12 - w; x < 0 {
			return w
		}
	}
}

func fcMakeTask(r *rand.Rand, id string, cell, week int, market string) *fcTask {
	tg := fcFirstRelease.Add(time.Duration(week-1) * 7 * 24 * time.Hour)
	td := tg.Add(fcDeadlineLag)
	te := td.Add(time.Duration(24*(3+r.IntN(18))) * time.Hour)
	c := fcCells[cell]
	t := &fcTask{cell: cell}
	t.ID, t.Week, t.Kind, t.Level, t.Market = id, week, c.kind, c.level, market
	t.Generated, t.Deadline, t.Evaluated = tg.Format(time.RFC3339), td.Format(time.RFC3339), te.Format(time.RFC3339)
	company := fmt.Sprintf("Synthetic %s Co %03d", market, 1+r.IntN(400))
	date := te.Format(fcDateLayout)
	switch cell {
	case 0:
		t.Entity, t.Index = company, fcIndexes[market]
		t.Metric = fcCorpEvents[r.IntN(len(fcCorpEvents))]
		t.Question = fmt.Sprintf("Will %s %s by %s?", company, t.Metric, date)
	case 1:
		t.Entity = market
		t.Metric = fcMacroEvents[r.IntN(len(fcMacroEvents))]
		t.Question = fmt.Sprintf("Will the central bank or government of %s %s by %s?", market, t.Metric, date)
	case 2:
		t.Entity, t.Index = company, fcIndexes[market]
		if r.IntN(3) < 2 {
			t.Metric = fcMillionMetrics[r.IntN(len(fcMillionMetrics))]
			t.Unit, t.UnitType, t.Scale = fcCurrency[market]+" million", "million", 1e6
		} else {
			m := fcRatioMetrics[r.IntN(len(fcRatioMetrics))]
			t.Metric, t.Unit, t.UnitType = m.name, m.unit, "percent_ratio"
		}
		t.Question = fmt.Sprintf("What will %s report as its %s (%s) for the quarter, disclosed by %s?", company, t.Metric, t.Unit, date)
	case 3:
		t.Entity = market
		m := fcMacro[r.IntN(len(fcMacro))]
		if market == "US" && m.category == "fx_rate" {
			m = fcMacro[4]
		}
		t.Metric, t.Category, t.Unit = m.name, m.category, m.unit
		if m.category == "fx_rate" {
			t.Unit = fcCurrency[market] + " per USD"
		}
		t.Question = fmt.Sprintf("What will the %s of %s be in the release of %s (%s)?", t.Metric, market, date, t.Unit)
	}
	t.Question += " (synthetic demo task)"
	if t.Kind == forecast.Recurrent {
		t.eps = forecast.DefaultTolerances()[fcTolRow(t)].Epsilon
	}
	fcDrawTruth(r, t)
	return t
}

func fcTolRow(t *fcTask) int {
	for i, tl := range forecast.DefaultTolerances() {
		if (tl.Kind == forecast.ByCategory && tl.Key == t.Category) || (t.Category == "" && tl.Kind == forecast.ByUnit && tl.Key == t.UnitType) {
			return i
		}
	}
	return 0
}

// fcDrawTruth draws the outcome (kept by the oracle; written into the
// task only when it resolves).
func fcDrawTruth(r *rand.Rand, t *fcTask) {
	switch {
	case t.Kind == forecast.NonRecurrent:
		t.yes = r.Float64() < 0.4
	case t.UnitType == "million":
		t.y = math.Round(math.Exp(4+6*r.Float64())*10) / 10
		if (t.Metric == "Net Income" || t.Metric == "Free Cash Flow") && r.IntN(8) == 0 {
			t.y = -t.y
		}
	case t.UnitType == "percent_ratio":
		t.y = math.Round((0.3+40*r.Float64())*100) / 100
	case t.Category == "interest_rate":
		t.y = math.Round((0.1+5*r.Float64())*1000) / 1000
	case t.Category == "fx_rate":
		t.y = math.Round((0.7+150*r.Float64())*10000) / 10000
	case strings.Contains(t.Unit, "index"):
		t.y = math.Round((100+30000*r.Float64())*100) / 100
	default:
		t.y = math.Round((0.1+8*r.Float64())*100) / 100
	}
}

func fcSetTruth(t *fcTask) {
	if t.Kind == forecast.NonRecurrent {
		t.Truth = map[bool]string{true: "Yes", false: "No"}[t.yes]
		return
	}
	t.Truth = strconv.FormatFloat(t.y, 'f', -1, 64)
}

// fcResolve sets the ground truth: usually at the first weekly check
// after t_e, sometimes a week or so later (re-checked).
func fcResolve(r *rand.Rand, t *fcTask) {
	fcSetTruth(t)
	te, _ := time.Parse(time.RFC3339, t.Evaluated)
	at := te.Add(time.Duration(1+r.IntN(3)) * 24 * time.Hour)
	if r.IntN(10) == 0 {
		at = te.Add(time.Duration(8+r.IntN(4)) * 24 * time.Hour)
	}
	if at.After(fcEvaluatedAt) {
		at = te.Add(time.Hour)
	}
	t.ResolvedAt = at.Format(time.RFC3339)
}

// fcDateLayout is how task questions write dates.
const fcDateLayout = "2 January 2006"

var taskIDRE = regexp.MustCompile(`(?m)^Task ID: (\S+)$`)

// Respond plays the system behind p.Model on the task named in p.User.
func (o *fcOracle) Respond(p results.Prompt) (string, error) {
	s := o.systems[p.Model]
	if s == nil {
		return "", fmt.Errorf("findeepforecast demo: unknown model %q", p.Model)
	}
	m := taskIDRE.FindStringSubmatch(p.User)
	if m == nil || o.tasks[m[1]] == nil {
		return "", fmt.Errorf("findeepforecast demo: no known task in prompt")
	}
	t := o.tasks[m[1]]
	r := stats.NewRand(fcHash(o.seed, "respond", p.Model, p.System, p.User, strconv.Itoa(p.Sample)))
	if s.hostile {
		return o.hostile(r, t), nil
	}
	ok := r.Float64() < sigmoid(s.shift[t.cell]+math.Log(s.factor[t.Market]))
	var b strings.Builder
	fmt.Fprintf(&b, "Synthetic demo forecast by %s (simulated, not a real model output).\n\n", s.name)
	b.WriteString("Reasoning: synthetic placeholder reasoning over the simulated evidence below.\n\n")
	answer := o.answer(r, t, ok)
	if r.Float64() < 0.004 {
		answer = "unable to forecast with the available information"
	}
	fmt.Fprintf(&b, "Final answer: %s\n", answer)
	b.WriteString("\nEvidence:\n")
	tg, _ := time.Parse(time.RFC3339, t.Generated)
	td, _ := time.Parse(time.RFC3339, t.Deadline)
	if !s.search {
		b.WriteString("- none (no search; synthetic)\n")
		return b.String(), nil
	}
	for i := range 1 + r.IntN(3) {
		pub := tg.Add(-time.Duration(1+r.IntN(240)) * time.Hour)
		if i == 0 && o.leaks[[2]string{p.Model, t.ID}] {
			pub = td.Add(time.Duration(2+r.IntN(72)) * time.Hour)
		}
		url := fmt.Sprintf("https://example.com/synthetic/%s/%s/%d", strings.ToLower(t.Market), t.ID, i+1)
		if r.Float64() < 0.05 {
			fmt.Fprintf(&b, "- %s (date unknown)\n", url)
			continue
		}
		fmt.Fprintf(&b, "- %s (published %s)\n", url, pub.Format(time.RFC3339))
	}
	return b.String(), nil
}

// answer writes a correct or a wrong forecast for t in one of several
// styles, so that the parser sees units, separators, scientific notation,
// accounting negatives, Chinese units and full-width digits.
func (o *fcOracle) answer(r *rand.Rand, t *fcTask, ok bool) string {
	if t.Kind == forecast.NonRecurrent {
		yes := t.yes == ok
		switch {
		case (t.Market == "CN" || t.Market == "HK") && r.IntN(3) == 0:
			return map[bool]string{true: "是", false: "否"}[yes]
		case r.IntN(4) == 0:
			return map[bool]string{true: "**Yes**", false: "**No**"}[yes]
		}
		return map[bool]string{true: "Yes", false: "No"}[yes]
	}
	var v float64
	switch {
	case ok && t.y == 0:
		v = (2*r.Float64() - 1) * 0.5 * t.eps
	case ok:
		v = t.y * (1 + (2*r.Float64()-1)*0.95*t.eps)
	default:
		// Misses crowd just outside the tolerance, as near-misses do, so
		// that the tolerance sweep has something to move.
		sign := float64(1 - 2*r.IntN(2))
		u := r.Float64()
		v = t.y * (1 + sign*(1.05+19*u*u)*t.eps)
		if t.y == 0 {
			v = sign * (1.05 + 19*u*u) * t.eps
		}
	}
	num := strconv.FormatFloat(v, 'g', 9, 64)
	if t.Scale != 1e6 {
		switch r.IntN(4) {
		case 0:
			return fcFullWidth(num) + "％"
		case 1:
			return num + "%"
		}
		return num
	}
	abs := math.Abs(v)
	switch r.IntN(6) {
	case 0: // thousands separators with a scale word, accounting negatives
		s := fcThousands(strconv.FormatFloat(abs, 'f', 4, 64)) + " million"
		if v < 0 {
			return "(" + fcThousands(strconv.FormatFloat(abs, 'f', 4, 64)) + ") million"
		}
		return s
	case 1: // billions with a currency
		return fcCurrency[t.Market] + " " + strconv.FormatFloat(v/1000, 'g', 9, 64) + " billion"
	case 2: // Chinese units
		return strconv.FormatFloat(v/100, 'g', 9, 64) + "亿元"
	case 3: // scientific notation in the task's unit
		return strconv.FormatFloat(v, 'e', 8, 64)
	case 4:
		return fcFullWidth(num)
	}
	return num
}

func fcThousands(s string) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}

func fcFullWidth(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+':
			b.WriteRune(c + 0xFEE0)
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// hostile writes the hostile system's output: markup and formulas every
// time, a huge output for the first task and a malformed one for the
// second.
func (o *fcOracle) hostile(r *rand.Rand, t *fcTask) string {
	var b strings.Builder
	b.WriteString("Synthetic hostile demo output <script>alert('xss')</script>\n")
	b.WriteString("<img src=x onerror=alert(1)> [click me](javascript:alert(1))\n")
	b.WriteString("=HYPERLINK(\"https://evil.example/\",\"open\")\n+cmd|' /C calc'!A0\n@SUM(1)\n-2+3\n")
	switch t.index {
	case 0:
		line := "Synthetic hostile filler line to make a huge output. "
		b.WriteString(strings.Repeat(line, 300_000/len(line)))
		b.WriteString("\nFinal answer: " + o.answer(r, t, false) + "\n")
		return b.String()
	case 1:
		// Malformed: a replacement character (what invalid UTF-8 becomes in
		// the store), a right-to-left override, a NUL and unterminated JSON.
		b.WriteString("Final answer: \ufffd\u202e\x00 {\"answer\": [unterminated\n")
		return b.String()
	}
	if t.index%3 == 0 {
		b.WriteString("Final answer: =HYPERLINK(\"https://evil.example/\",\"Yes\")\n")
	} else {
		b.WriteString("Final answer: " + o.answer(r, t, r.IntN(3) == 0) + "\n")
	}
	b.WriteString("Evidence:\n- https://evil.example/<script>alert(1)</script> (published 2025-10-01T00:00:00Z)\n")
	b.WriteString("- javascript:alert(document.cookie) (published 2025-10-01T00:00:00Z)\n")
	return b.String()
}
