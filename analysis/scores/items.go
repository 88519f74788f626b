package scores

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// ItemBenchmarks are the benchmarks whose items export (reproduce's
// OUT/json/<benchmark>/items.jsonl, docs/outputs.md) ParseItems turns
// into a score matrix whose task means are the benchmark's headline
// means. The other two cannot be: ICBCBench's overall score is a weighted
// sum of ratios of totals over tasks (objective accuracy, expert, citation
// and source scores), not a mean of per-task scores; FinResearchBench II's
// records are judge labels, and a product's pass on a rubric exists only
// after the consistency and distinguishability filters, which are that
// benchmark's scoring.
var ItemBenchmarks = []string{"findeepforecast", "findeepresearch"}

// itemTaskCol is each benchmark's default task column: the unit its
// headline averages over.
var itemTaskCol = map[string]string{"findeepforecast": "task", "findeepresearch": "company"}

// ItemTaskCol returns the default task column of ParseItems for
// benchmark: "company" for FinDeepResearch, "task" for FinDeepForecast.
func ItemTaskCol(benchmark string) string { return itemTaskCol[benchmark] }

// ParseItems reads a benchmark's items.jsonl into a score matrix with one
// score per (task, system), in points out of 100:
//
//   - findeepresearch: the report accuracy 100·Σ weight·score / Σ weight
//     over the records of a company and system (weights of 0 or more,
//     scores in [0, 1]; missing when the weights sum to 0), the task being
//     the company (opt.TaskCol, "company" when empty); the system's mean
//     over companies is its accuracy;
//   - findeepforecast: 100 for a record with correct true, 0 for false,
//     missing for null (not scored), the task being the task; the mean is
//     the overall accuracy.
//
// opt.ClusterCol and opt.GroupCols name record fields (market, language,
// industry; kind, level, market, week); every record of a task must have
// the same values. The keys "synthetic" and the benchmark's other fields
// are ignored. Limits and errors are those of Parse.
func ParseItems(name string, r io.Reader, benchmark string, opt Options) (*Matrix, error) {
	def, ok := itemTaskCol[benchmark]
	if !ok {
		return nil, fmt.Errorf("scores: items of %q: not supported (supported: %s; see ItemBenchmarks for why)", benchmark, strings.Join(ItemBenchmarks, ", "))
	}
	if opt.TaskCol == "" {
		opt.TaskCol = def
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("scores: read %s: %w", name, err)
	}
	if len(data) > MaxBytes {
		return nil, &ParseError{name, 1, "", fmt.Sprintf("file larger than %d bytes", MaxBytes)}
	}
	b := newBuilder(name, opt)
	b.long = true // a task's records repeat its cluster and groups
	type cellKey struct {
		sys  string
		task int
	}
	num, den := map[cellKey]float64{}, map[cellKey]float64{}
	first := map[cellKey]int{} // line of the first record
	var order []cellKey
	err = b.eachObject(data, func(line int, obj map[string]any) error {
		t, err := b.objectTask(line, obj)
		if err != nil {
			return err
		}
		sys, ok := obj["system"].(string)
		if !ok || sys == "" {
			return b.errf(line, "system", "want a non-empty string")
		}
		k := cellKey{sys, t}
		if _, seen := first[k]; !seen {
			if len(order) >= MaxCells {
				return b.errf(line, "", "more than %d scores", MaxCells)
			}
			first[k] = line
			order = append(order, k)
		}
		switch benchmark {
		case "findeepresearch":
			w, err := b.itemNumber(line, "weight", obj["weight"])
			if err != nil {
				return err
			}
			s, err := b.itemNumber(line, "score", obj["score"])
			if err != nil {
				return err
			}
			if w < 0 || s < 0 || s > 1 {
				return b.errf(line, "weight", "want a weight of 0 or more and a score in [0, 1], got %g and %g", w, s)
			}
			num[k] += w * s
			den[k] += w
			if math.IsInf(den[k], 0) {
				return b.errf(line, "weight", "the weights of system %q on %q overflow", clip(sys), clip(b.tasks[t]))
			}
		case "findeepforecast":
			if line != first[k] {
				return b.errf(line, "system", "second record of system %q on task %q (line %d)", clip(sys), clip(b.tasks[t]), first[k])
			}
			c, present := obj["correct"]
			switch v := c.(type) {
			case bool:
				num[k], den[k] = 0, 1
				if v {
					num[k] = 1
				}
			case nil:
				if !present {
					return b.errf(line, "correct", "missing")
				}
				// not scored: den stays 0, the score missing
			default:
				return b.errf(line, "correct", "want true, false or null")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(b.tasks) == 0 {
		return nil, b.errf(1, "", "no records")
	}
	// one score per (task, system), in the order first seen
	slices.SortStableFunc(order, func(x, y cellKey) int { return first[x] - first[y] })
	for _, k := range order {
		v := math.NaN() // not scored, or no weight
		if den[k] != 0 {
			v = 100 * num[k] / den[k]
		}
		if err := b.score(first[k], k.sys, k.task, v, "system"); err != nil {
			return nil, err
		}
	}
	return b.matrix()
}

// itemNumber reads a finite number field of an item record.
func (b *builder) itemNumber(line int, field string, v any) (float64, error) {
	x, err := b.jsonScore(line, field, v)
	if err == nil && math.IsNaN(x) {
		err = b.errf(line, field, "want a number, not null")
	}
	if _, ok := v.(json.Number); !ok && err == nil {
		err = b.errf(line, field, "want a number")
	}
	return x, err
}
