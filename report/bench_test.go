package report

import (
	"fmt"
	"io"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/stats"
)

// big is a table of n rows like a per-task table: a text column, five
// scores and a note.
func big(n int) *analysis.Table {
	rng := stats.NewRand(1)
	t := &analysis.Table{Benchmark: "bench", Name: "big", Title: "Big table", Columns: []analysis.Column{
		{Name: "task"}, {Name: "a", Decimals: 1, Better: analysis.Higher}, {Name: "b", Decimals: 2, Better: analysis.Lower},
		{Name: "c", Decimals: 1}, {Name: "d", Decimals: 3}, {Name: "e", Decimals: 0}, {Name: "note"},
	}}
	for i := range n {
		t.AddRow(analysis.Text(fmt.Sprintf("task-%04d", i)), analysis.Number(rng.Float64()*100), analysis.Number(rng.Float64()),
			analysis.Number(rng.NormFloat64()), analysis.Number(rng.Float64()), analysis.Int(i),
			analysis.Text("a short note written by a model, =with a formula"))
	}
	return t
}

// BenchmarkWriters times every writer on a 1,000-row table; CSV is the
// baseline to compare the others with.
func BenchmarkWriters(b *testing.B) {
	t := big(1000)
	for _, w := range []struct {
		name  string
		write func(io.Writer, *analysis.Table) error
	}{
		{"csv", WriteCSV},
		{"json", WriteJSON},
		{"latex", WriteLaTeX},
		{"terminal", func(w io.Writer, t *analysis.Table) error { return WriteTerminal(w, t, 120) }},
		{"xlsx", func(w io.Writer, t *analysis.Table) error {
			return WriteWorkbook(w, "x", []*analysis.Table{t}, Provenance{})
		}},
	} {
		b.Run(w.name, func(b *testing.B) {
			for b.Loop() {
				if err := w.write(io.Discard, t); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWorkbook writes the workbook of a large result: three per-task
// tables of thousands of rows (the sizes of an 8x demo bundle's
// structure_deductions, invalid_predictions and isolation_flags) among
// twenty small tables.
func BenchmarkWorkbook(b *testing.B) {
	var tables []*analysis.Table
	for i, n := range []int{7500, 4500, 3800} {
		t := big(n)
		t.Name = fmt.Sprintf("big%d", i)
		tables = append(tables, t)
	}
	for i := range 20 {
		t := plain()
		t.Name = fmt.Sprintf("small%02d", i)
		tables = append(tables, t)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteWorkbook(io.Discard, "large", tables, Provenance{}); err != nil {
			b.Fatal(err)
		}
	}
}
