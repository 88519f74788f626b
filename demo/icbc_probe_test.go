package demo

import (
	"fmt"
	"testing"
	"os"
	"bytes"
	"github.com/finrepro/finrepro/results"
	"github.com/finrepro/finrepro/analysis"
)

func TestICBCProbe(t *testing.T) {
	n := 0
	res := icbcRun(t, Scale(os.Getenv("SCALE")), &n)
	fmt.Println("calls", n, "missing", res.Missing, "problems", len(res.Problems))
	for i, p := range res.Problems { if i < 15 { fmt.Println("  P", p) } }
	for _, tb := range res.Tables {
		b, err := os.ReadFile("assets/published/icbcbench/" + tb.Name + ".csv")
		var pub *results.CSVTable
		if err == nil { pub, _ = results.ReadCSV(bytes.NewReader(b), tb.Name) }
		fmt.Println("==", tb.Name, len(tb.Rows))
		if pub != nil { c := analysis.Compare("icbcbench", pub, tb, 1.0); fmt.Println("  verdict", c.Verdict, c.Reason, c.Compared, len(c.Cells)); for i, d := range c.Cells { if i < 200 {fmt.Println("   ", d.Row, d.Column, d.Published, d.Computed)} } }
		if tb.Name == "human_consistency" || tb.Name=="calibration" || os.Getenv("ALL")!="" { for _, r := range tb.Rows { var s []string; for i, c := range r { s = append(s, c.Format(tb.Columns[i].Decimals)) }; fmt.Println("  ", s) } ; fmt.Println(tb.Notes)}
	}
}
