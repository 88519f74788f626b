package demo

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache/archive"
	"github.com/finrepro/finrepro/replay"
)

// FuzzKnobValues sets one knob of one benchmark (--set benchmark.knob=v)
// to any value and runs the benchmark on the built-in demo: a value is
// either refused with an error that names the knob, or scored into
// tables of finite numbers.
func FuzzKnobValues(f *testing.F) {
	benches := benchmarks
	for b, bm := range benches {
		for k, knob := range bm.Knobs() {
			for _, v := range append([]string{knob.Default, "", "-1", "NaN"}, knob.Sweep...) {
				f.Add(uint8(b), uint8(k), v)
			}
		}
	}
	dir := filepath.Join(f.TempDir(), "bundle")
	if err := archive.Read(context.Background(), bytes.NewReader(Embedded()), dir, archive.Limits{}); err != nil {
		f.Fatal(err)
	}
	bundle, store := openBundle(f, dir)
	ctx := context.Background()
	answer := replay.New(store, replay.Config{Mode: replay.Offline})
	cols := make([]analysis.Collection, len(benches))
	for i, bm := range benches {
		var err error
		if cols[i], err = bm.Collect(ctx, analysis.Input{Bundle: bundle, Answer: answer}); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, b, k uint8, v string) {
		bm := benches[int(b)%len(benches)]
		knob := bm.Knobs()[int(k)%len(bm.Knobs())]
		s := analysis.Settings{knob.Name: v}
		var res *analysis.Result
		var err error
		if knob.Calls {
			res, err = analysis.Run(ctx, bm, analysis.Input{Bundle: bundle, Answer: answer, Settings: s})
		} else {
			res, err = bm.Score(ctx, cols[int(b)%len(benches)], s)
		}
		if err != nil {
			if !strings.Contains(err.Error(), knob.Name) {
				t.Fatalf("%s.%s=%q: error %q does not name the knob", bm.Name(), knob.Name, v, err)
			}
			return
		}
		for _, tb := range res.Tables {
			for _, row := range tb.Rows {
				for j, c := range row {
					if c.IsNum && !c.Undef && (math.IsNaN(c.Num) || math.IsInf(c.Num, 0)) {
						t.Fatalf("%s.%s=%q: table %s column %s holds %v", bm.Name(), knob.Name, v, tb.Name, tb.Columns[j].Name, c.Num)
					}
				}
			}
		}
	})
}
