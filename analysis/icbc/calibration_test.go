package icbc

import (
	"math"
	"strconv"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestCalibrationTiesInTaskFileOrder: 20 objective answers, all at 50 %,
// correct alternating in the order of the questions file (the issue's
// example). The file lists the correct ones under ids 11-20 and the
// wrong ones under 1-10, so sorting the tasks by id, or the tied answers
// incorrect first, would put 10 wrong answers in the first bin of 10:
// |.5 - 0| = |.5 - 1| = .5, a calibration error of 50 %. In file order
// each bin holds 5 right of 10 at 50 %: 0. The tie range spans 0 and some
// |50 - 10k| for k right answers in bin 1 of a shuffled order, at most 50.
func TestCalibrationTiesInTaskFileOrder(t *testing.T) {
	in := &Inputs{}
	right, wrong := 11, 1
	correct := map[string]bool{}
	for i := range 20 {
		id := wrong
		if i%2 == 0 {
			id = right
			right++
		} else {
			wrong++
		}
		in.Objectives = append(in.Objectives, Objective{ID: strconv.Itoa(id), Language: "en"})
		correct[strconv.Itoa(id)] = i%2 == 0
	}
	c := &collection{in: in, systems: []System{{Model: Model{Name: "S"}}}}
	c.selectTasks()
	c.objRes = [][]objOutcome{make([]objOutcome, len(c.obj))}
	for ti, o := range c.obj {
		c.objRes[0][ti] = objOutcome{parsed: true, correct: correct[o.ID], conf: 50}
	}
	r := &run{collection: c, o: &settings{beta: 10, eceBins: 10, seed: 1}, res: &analysis.Result{}}
	tb := r.calibration([]trackScore{{}}, []trackScore{{}}, []int{0})
	get := func(col string) float64 {
		cell := tb.Rows[0][tb.Col(col)]
		if !cell.IsNum {
			t.Fatalf("%s = %+v, want a number", col, cell)
		}
		return cell.Num
	}
	if e := get("calibration_error"); e != 0 {
		t.Errorf("calibration_error = %v, want 0 (ties in task-file order)", e)
	}
	lo, hi := get("calibration_error_tie_low"), get("calibration_error_tie_high")
	if lo != 0 || hi <= 0 || hi > 50+1e-9 || math.Abs(hi/10-math.Round(hi/10)) > 1e-9 {
		t.Errorf("tie range = [%v, %v], want [0, 10k] with 0 < 10k <= 50", lo, hi)
	}
}
