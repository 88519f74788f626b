package analysis

// A ChartKind is a kind of chart the site knows how to draw from a table.
type ChartKind string

// Chart kinds. Every chart draws columns of the table it belongs to; rows
// are the categories unless said otherwise.
const (
	// Bar: one bar group per row (category = X column), one series per
	// Y column. With Low and High set, Y[0] gets error bars.
	Bar ChartKind = "bar"
	// Line: X column values in row order on the x axis, one line per Y
	// column (a wide table: weeks as rows, systems as columns).
	Line ChartKind = "line"
	// Scatter: one point per row at (X, Y[0]) named by the Label column,
	// with an optional shaded Zone.
	Scatter ChartKind = "scatter"
	// Heatmap: rows (named by X) by Y columns, colour = value.
	Heatmap ChartKind = "heatmap"
	// Mirror: mirrored horizontal bars, Y[0] to the left and Y[1] to the
	// right of a shared axis, per row named by X, with Y[2] (a delta)
	// overlaid when present.
	Mirror ChartKind = "mirror"
)

// A Chart says how to draw a table's data.
type Chart struct {
	// ID is unique within the benchmark and a valid JavaScript
	// identifier ([a-z][a-z0-9_]*): the site uses it as the chart's DOM
	// and script name.
	ID    string
	Kind  ChartKind
	Title string
	// X is the category (or x value) column; Y the value columns.
	X string
	Y []string
	// Low and High name the columns of a confidence interval for Y[0].
	Low, High string
	// Label names the column that labels scatter points.
	Label string
	// Zone is a shaded rectangle on a scatter chart.
	Zone *Zone
	// XName and YName are the axis titles.
	XName, YName string
	// Counts, on a line chart, names for each Y column the column of how
	// many items each point stands on ("" for none); points on fewer than
	// MinCount items are drawn as unreliable.
	Counts   []string
	MinCount int
}

// A Zone is a shaded rectangle in data coordinates.
type Zone struct {
	XMin, XMax, YMin, YMax float64
	Label                  string
}
