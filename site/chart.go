package site

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"github.com/finrepro/finrepro/analysis"
)

// validID is the form of an analysis.Chart ID and of the DOM IDs built from
// it.
var validID = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// missing is how ECharts spells a missing value.
const missing = "-"

// chartOption builds the ECharts option of chart c over table t as JSON
// with <, >, & and U+2028/9 escaped, safe inside a <script> element.
//
// The option model comes from go-echarts; extras it does not model (error
// bars, the mirror axis, a scatter zone) are added to the decoded option,
// and the script of the site turns the "finrepro" key into ECharts
// settings. Encoding a decoded option sorts its keys, so the bytes do not
// depend on map order.
func chartOption(t *analysis.Table, c analysis.Chart) ([]byte, error) {
	col := func(name string) (int, error) {
		i := t.Col(name)
		if i < 0 {
			return 0, fmt.Errorf("chart %s: table %s has no column %q", c.ID, t.Name, name)
		}
		return i, nil
	}
	if !validID.MatchString(c.ID) {
		return nil, fmt.Errorf("chart %q: id is not of the form [a-z][a-z0-9_]*", c.ID)
	}
	if len(c.Y) == 0 {
		return nil, fmt.Errorf("chart %s: no Y columns", c.ID)
	}
	x, err := col(c.X)
	if err != nil {
		return nil, err
	}
	ys := make([]int, len(c.Y))
	for i, name := range c.Y {
		if ys[i], err = col(name); err != nil {
			return nil, err
		}
	}
	cats := make([]string, len(t.Rows))
	for i, r := range t.Rows {
		cats[i] = r[x].Format(t.Columns[x].Decimals)
	}
	// one configuration for every kind: the fixed ID keeps go-echarts from
	// drawing a random one, and the local assets host from naming a CDN
	init := charts.WithInitializationOpts(opts.Initialization{ChartID: c.ID, AssetsHost: "assets/"})
	xName, yName := c.XName, c.YName
	legend := charts.WithLegendOpts(opts.Legend{Show: opts.Bool(len(c.Y) > 1), Type: "scroll", Top: "0"})
	tooltip := charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "axis"})
	extra := map[string]any{}
	var base interface {
		JSON() map[string]any
	}
	switch c.Kind {
	case analysis.Bar:
		b := charts.NewBar()
		b.SetGlobalOptions(init, legend, tooltip,
			charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 30, HideOverlap: opts.Bool(true)}}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName}))
		b.SetXAxis(cats)
		for _, y := range ys {
			data := make([]opts.BarData, len(t.Rows))
			for j, r := range t.Rows {
				data[j] = opts.BarData{Value: value(r[y], t.Columns[y].Decimals)}
			}
			b.AddSeries(header(t.Columns[y]), data)
		}
		if c.Low != "" || c.High != "" {
			lo, err := col(c.Low)
			if err != nil {
				return nil, err
			}
			hi, err := col(c.High)
			if err != nil {
				return nil, err
			}
			var bars [][3]float64
			for j, r := range t.Rows {
				if isNum(r[lo]) && isNum(r[hi]) {
					d := t.Columns[ys[0]].Decimals
					bars = append(bars, [3]float64{float64(j), round(r[lo].Num, d), round(r[hi].Num, d)})
				}
			}
			extra["errorBars"] = map[string]any{"name": header(t.Columns[lo]) + " – " + header(t.Columns[hi]), "data": bars, "series": len(ys)}
			// a leaderboard: each run of rows in one tie group is a band,
			// so that "within noise" shows
			// (when the rows are in group order; otherwise each bar takes
			// its group's colour)
			if tc := t.Col("tier"); tc >= 0 {
				group := func(j int) string {
					if g := t.Rows[j][tc]; !g.Undef {
						return g.Format(t.Columns[tc].Decimals)
					}
					return ""
				}
				var bands []map[string]any
				var groups []string
				seen := map[string]bool{}
				contiguous := true
				for j := 0; j < len(t.Rows); {
					k := j
					for k+1 < len(t.Rows) && group(k+1) == group(j) {
						k++
					}
					g := group(j)
					contiguous = contiguous && !seen[g]
					seen[g] = true
					if g != "" {
						bands = append(bands, map[string]any{"name": "tie group " + g, "from": j, "to": k})
					}
					j = k + 1
				}
				for j := range t.Rows {
					groups = append(groups, group(j))
				}
				switch {
				case len(bands) == 0:
				case contiguous:
					extra["bands"] = bands
				default:
					extra["groups"] = groups
				}
			}
		}
		b.Validate()
		base = b
	case analysis.Line:
		l := charts.NewLine()
		l.SetGlobalOptions(init, legend, tooltip,
			charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, Data: cats}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName, Scale: opts.Bool(true)}))
		l.SetXAxis(cats)
		for _, y := range ys {
			data := make([]opts.LineData, len(t.Rows))
			for j, r := range t.Rows {
				data[j] = opts.LineData{Value: value(r[y], t.Columns[y].Decimals)}
			}
			l.AddSeries(header(t.Columns[y]), data)
		}
		if len(c.Counts) > 0 {
			// each point's item count: the marker's size, the tooltip, and
			// grey below MinCount
			counts := make([][]any, len(c.Counts))
			for k, name := range c.Counts {
				if name == "" {
					continue
				}
				n, err := col(name)
				if err != nil {
					return nil, err
				}
				counts[k] = make([]any, len(t.Rows))
				for j, r := range t.Rows {
					if isNum(r[n]) {
						counts[k][j] = r[n].Num
					}
				}
			}
			extra["counts"] = map[string]any{"series": counts, "min": c.MinCount}
		}
		l.Validate()
		base = l
	case analysis.Scatter:
		s := charts.NewScatter()
		s.SetGlobalOptions(init, charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
			charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: xName, Scale: opts.Bool(true)}),
			charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yName, Scale: opts.Bool(true)}))
		label := -1
		if c.Label != "" {
			if label, err = col(c.Label); err != nil {
				return nil, err
			}
		}
		var data []opts.ScatterData
		for _, r := range t.Rows {
			cx, cy := r[x], r[ys[0]]
			if !isNum(cx) || !isNum(cy) {
				continue
			}
			d := opts.ScatterData{Value: []float64{round(cx.Num, t.Columns[x].Decimals), round(cy.Num, t.Columns[ys[0]].Decimals)}}
			if label >= 0 {
				d.Name = r[label].Format(t.Columns[label].Decimals)
			}
			data = append(data, d)
		}
		s.AddSeries(header(t.Columns[ys[0]]), data)
		s.Validate()
		base = s
		if z := c.Zone; z != nil && finite(z.XMin, z.XMax, z.YMin, z.YMax) {
			extra["zone"] = map[string]any{"name": z.Label, "x": []float64{z.XMin, z.XMax}, "y": []float64{z.YMin, z.YMax}}
		}
	case analysis.Heatmap:
		h := charts.NewHeatMap()
		cols := make([]string, len(ys))
		var data []opts.HeatMapData
		lo, hi := math.Inf(1), math.Inf(-1)
		for i, y := range ys {
			cols[i] = header(t.Columns[y])
			for j, r := range t.Rows {
				v := value(r[y], t.Columns[y].Decimals)
				if f, ok := v.(float64); ok {
					lo, hi = min(lo, f), max(hi, f)
				}
				data = append(data, opts.HeatMapData{Value: []any{i, j, v}})
			}
		}
		switch {
		case lo > hi:
			lo, hi = 0, 1
		case lo < 0 && hi > 0:
			// changes and deltas: white at zero
			m := max(-lo, hi)
			lo, hi = -m, m
		}
		h.SetGlobalOptions(init, charts.WithLegendOpts(opts.Legend{Show: opts.Bool(false)}),
			charts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: "item"}),
			charts.WithXAxisOpts(opts.XAxis{Type: "category", Name: xName, Data: shortLabels(cols), AxisLabel: &opts.AxisLabel{Interval: "0", Rotate: 45}}),
			charts.WithYAxisOpts(opts.YAxis{Type: "category", Name: yName, Data: shortLabels(cats), Inverse: opts.Bool(true)}))
		h.AddSeries(c.Title, data, charts.WithLabelOpts(opts.Label{Show: opts.Bool(true)}))
		h.Validate()
		base = h
		extra["range"] = []float64{lo, hi}
		// the axes carry short labels; the tooltip names the cell in full
		extra["labels"] = map[string]any{"x": cols, "y": cats}
	case analysis.Mirror:
		if len(ys) < 2 {
			return nil, fmt.Errorf("chart %s: a mirror chart needs two Y columns", c.ID)
		}
		b := charts.NewBar()
		b.SetGlobalOptions(init, tooltip,
			charts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Top: "0"}),
			charts.WithXAxisOpts(opts.XAxis{Type: "value", Name: yName}),
			charts.WithYAxisOpts(opts.YAxis{Type: "category", Name: xName, Inverse: opts.Bool(true)}))
		b.SetXAxis(cats)
		for i, y := range ys[:2] {
			data := make([]opts.BarData, len(t.Rows))
			for j, r := range t.Rows {
				v := value(r[y], t.Columns[y].Decimals)
				if f, ok := v.(float64); ok && i == 0 {
					v = -f
				}
				data[j] = opts.BarData{Value: v}
			}
			b.AddSeries(header(t.Columns[y]), data, charts.WithBarChartOpts(opts.BarChart{Stack: "mirror"}))
		}
		b.XYReversal()
		b.Validate()
		base = b
		m := map[string]any{}
		if len(ys) > 2 {
			var delta [][2]any
			for j, r := range t.Rows {
				if v, ok := value(r[ys[2]], t.Columns[ys[2]].Decimals).(float64); ok {
					delta = append(delta, [2]any{v, j})
				}
			}
			m["name"] = header(t.Columns[ys[2]])
			m["data"] = delta
		}
		extra["mirror"] = m
	default:
		return nil, fmt.Errorf("chart %s: unknown kind %q", c.ID, c.Kind)
	}
	return encodeOption(base.JSON(), extra)
}

// encodeOption re-encodes a go-echarts option with our extras, dropping
// the entries that would pull assets or draw chrome we do not want.
func encodeOption(opt map[string]any, extra map[string]any) ([]byte, error) {
	raw, err := json.Marshal(opt)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	delete(m, "toolbox") // its save-as-image button is not needed offline
	m["aria"] = map[string]any{"enabled": true}
	m["animation"] = false
	m["grid"] = map[string]any{"containLabel": true, "left": 8, "right": 24, "top": 40, "bottom": 8}
	if len(extra) > 0 {
		m["finrepro"] = extra
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(true) // <, > and & as \u003c, \u003e, \u0026; U+2028/9 are always escaped
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// value returns a cell as a chart value: the number rounded to the
// column's decimals, or the missing marker.
func value(c analysis.Cell, decimals int) any {
	if !isNum(c) {
		return missing
	}
	return round(c.Num, decimals)
}

// round rounds x to the decimals the table prints, so that labels and
// tooltips read as the table does, and never returns negative zero.
func round(x float64, decimals int) float64 {
	p := math.Pow(10, float64(max(decimals, 0)))
	r := math.Round(x*p) / p
	if r == 0 {
		return 0
	}
	return r
}

// isNum reports whether c holds a finite number.
func isNum(c analysis.Cell) bool { return c.IsNum && finite(c.Num) }

func finite(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

func header(c analysis.Column) string {
	if c.Unit != "" {
		return c.Header() + " (" + c.Unit + ")"
	}
	return c.Header()
}

// maxLabel is the most characters of a heatmap axis label; a longer one
// is abbreviated, and the tooltip gives it in full.
const maxLabel = 12

// shortLabels abbreviates each label longer than maxLabel characters to
// its first maxLabel-1 and an ellipsis. Where two labels would read the
// same, both keep their start and end around the ellipsis instead, and
// where they still collide, they stay in full.
func shortLabels(labels []string) []string {
	head := func(s string) string {
		r := []rune(s)
		if len(r) <= maxLabel {
			return s
		}
		return string(r[:maxLabel-1]) + "…"
	}
	ends := func(s string) string {
		r := []rune(s)
		if len(r) <= maxLabel {
			return s
		}
		t := (maxLabel - 1) / 2
		return string(r[:maxLabel-1-t]) + "…" + string(r[len(r)-t:])
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		out[i] = head(l)
	}
	for _, short := range []func(string) string{ends, func(s string) string { return s }} {
		n := map[string]int{}
		for _, l := range out {
			n[l]++
		}
		clash := false
		for i, l := range out {
			if n[l] > 1 && l != labels[i] {
				out[i] = short(labels[i])
				clash = true
			}
		}
		if !clash {
			break
		}
	}
	return out
}
