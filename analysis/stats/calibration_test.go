package stats

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestCalibrationError(t *testing.T) {
	four := []Prediction{{0.9, true}, {0.9, false}, {0.5, true}, {0.1, false}}
	five := append([]Prediction{{1, true}}, four...)
	tests := []struct {
		name  string
		p     []Prediction
		c     Calibration
		want  float64
		undef bool
	}{
		// One bin (n < beta): mean confidence 0.6, accuracy 0.5 -> 0.1.
		{name: "one bin", p: four, c: Calibration{Beta: 100}, want: 0.1},
		// Sorted: (.1,F) (.5,T) | (.9,F) (.9,T). Bin 1: conf .3, acc .5,
		// d^2 = .04; bin 2: conf .9, acc .5, d^2 = .16. Weighted mean
		// .5*.04 + .5*.16 = .1 -> sqrt(.1).
		{name: "two bins", p: four, c: Calibration{Beta: 2}, want: math.Sqrt(0.1)},
		// HLE original skips the last bin but divides by all 4: .5*.04.
		{name: "skip last", p: four, c: Calibration{Beta: 2, SkipLast: true}, want: math.Sqrt(0.02)},
		// n = 5, beta = 2: bins [0,2) and [2,5). Bin 1 as above, weight
		// 2/5; bin 2 (.9,F) (.9,T) (1,T): conf 2.8/3, acc 2/3, d = 0.8/3,
		// weight 3/5. Sum .4*.04 + .6*(0.8/3)^2 = .016 + .042667.
		{name: "remainder", p: five, c: Calibration{Beta: 2}, want: math.Sqrt(0.016 + 0.6*(0.8/3)*(0.8/3))},
		// The original's single bin is skipped entirely: 0.
		{name: "skip only bin", p: four[:3], c: Calibration{Beta: 2, SkipLast: true}, want: 0},
		{name: "skip below beta", p: four, c: Calibration{Beta: 10, SkipLast: true}, undef: true},
		{name: "empty", p: nil, c: Calibration{Beta: 10}, undef: true},
		{name: "no beta", p: four, c: Calibration{}, undef: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CalibrationError(tc.p, tc.c)
			var ue *UndefinedError
			if tc.undef != errors.As(err, &ue) || (!tc.undef && !near(got, tc.want)) {
				t.Fatalf("CalibrationError = %v, %v; want %v (undefined %v)", got, err, tc.want, tc.undef)
			}
		})
	}
}

// alternating20 is the example: 20 answers all at 50 %, correct
// alternating (T F T F ...), in task-file order.
func alternating20() []Prediction {
	p := make([]Prediction, 20)
	for i := range p {
		p[i] = Prediction{0.5, i%2 == 0}
	}
	return p
}

func TestCalibrationTiesKeepInputOrder(t *testing.T) {
	// Bins of 10 in input order: each bin holds 5 correct of 10 at
	// confidence .5, so both differences are 0 and the error is 0. Sorting
	// incorrect first would put 10 wrong answers in bin 1 and 10 right in
	// bin 2: |.5 - 0| = |.5 - 1| = .5, error .5 (50 %).
	got, err := CalibrationError(alternating20(), Calibration{Beta: 10})
	if err != nil || got != 0 {
		t.Fatalf("CalibrationError(alternating) = %v, %v; want 0", got, err)
	}
	// The same answers in another task order: F F F F F T T T T T F ...
	// (5 wrong then 5 right, twice): bin 1 = 5 wrong + 5 right -> 0 again;
	// and all wrong first: .5.
	var allWrongFirst []Prediction
	for i := range 20 {
		allWrongFirst = append(allWrongFirst, Prediction{0.5, i >= 10})
	}
	if got, _ := CalibrationError(allWrongFirst, Calibration{Beta: 10}); !near(got, 0.5) {
		t.Fatalf("CalibrationError(wrong first) = %v; want 0.5", got)
	}
	// Ties keep their order even among different confidences: (.2,F)
	// (.5,T) (.5,F) (.8,T) with beta 2 -> bins {.2F,.5T} and {.5F,.8T}:
	// conf .35 acc .5 d=-.15; conf .65 acc .5 d=.15 -> sqrt(.0225) = .15.
	// Incorrect first would give {.2F,.5F} {.5T,.8T}: d=.35 and -.35.
	mixed := []Prediction{{0.5, true}, {0.8, true}, {0.2, false}, {0.5, false}}
	if got, _ := CalibrationError(mixed, Calibration{Beta: 2}); !near(got, 0.15) {
		t.Fatalf("CalibrationError(mixed) = %v; want 0.15", got)
	}
}

func TestCalibrationErrorRange(t *testing.T) {
	// Any order of the 20 tied answers puts k correct in bin 1 and 10-k in
	// bin 2: d1 = .5 - k/10, d2 = k/10 - .5, error |.5 - k/10|. The task
	// order gives 0, so lo = 0 and hi is some |.5 - k/10| in (0, .5].
	lo, hi, err := CalibrationErrorRange(alternating20(), Calibration{Beta: 10}, 200, 1)
	if err != nil || lo != 0 || hi <= 0 || hi > 0.5+1e-12 {
		t.Fatalf("range = [%v, %v], %v; want [0, h] with 0 < h <= .5", lo, hi, err)
	}
	if k := hi * 10; !near(k, math.Round(k)) {
		t.Fatalf("hi = %v is not |.5 - k/10|", hi)
	}
	lo2, hi2, _ := CalibrationErrorRange(alternating20(), Calibration{Beta: 10}, 200, 1)
	if lo2 != lo || hi2 != hi {
		t.Fatalf("same seed, different range: [%v, %v] vs [%v, %v]", lo, hi, lo2, hi2)
	}
	// Without ties (or with ties inside one bin) every order gives the
	// same error: the range is one point, CalibrationError's value.
	four := []Prediction{{0.9, true}, {0.9, false}, {0.5, true}, {0.1, false}}
	e, _ := CalibrationError(four, Calibration{Beta: 2})
	if lo, hi, err := CalibrationErrorRange(four, Calibration{Beta: 2}, 50, 7); err != nil || lo != e || hi != e {
		t.Fatalf("range without straddling ties = [%v, %v], %v; want [%v, %v]", lo, hi, err, e, e)
	}
	if _, _, err := CalibrationErrorRange(nil, Calibration{Beta: 2}, 50, 7); err == nil {
		t.Fatal("range of nothing: want undefined")
	}
}

func TestECEAndReliability(t *testing.T) {
	p := []Prediction{{0.9, true}, {0.9, false}, {0.5, true}, {0.1, false}}
	// Bins [0,.5] and (.5,1]. Bin 1: (.1,F) (.5,T): conf .3, acc .5,
	// |d| = .2, weight 1/2. Bin 2: (.9,T) (.9,F): conf .9, acc .5, |d| =
	// .4, weight 1/2. ECE = .1 + .2 = .3.
	e, err := ECE(p, 2)
	if err != nil || !near(e, 0.3) {
		t.Fatalf("ECE = %v, %v; want 0.3", e, err)
	}
	r := Reliability(append(p, Prediction{1, true}), 2)
	if r[0].Count != 2 || r[1].Count != 3 || !near(r[1].Accuracy, 2.0/3) || !near(r[1].Confidence, 2.8/3) {
		t.Fatalf("Reliability = %+v", r)
	}
	if _, err := ECE(nil, 10); err == nil {
		t.Fatal("ECE of nothing: want undefined")
	}
}

func TestReliabilityBinEdges(t *testing.T) {
	// Bins are (lo, hi], the first closed at 0. With b bins, a confidence
	// of p % lies in bin ceil(p*b/100) - 1 (0 for p = 0), by hand:
	// 10 bins: 0 -> 0; 30 -> 3-1 = 2, the (20,30] bin; 31 -> 4-1 = 3; 100 -> 9.
	// 50 bins (width 2): 29 -> ceil(14.5)-1 = 14; 57 -> ceil(28.5)-1 = 28;
	// 58 -> 29-1 = 28; 7 -> ceil(3.5)-1 = 3; 56 -> 28-1 = 27.
	// 100 bins: p -> p-1 for whole p: 29 -> 28, 57 -> 56, 58 -> 57, 7 -> 6,
	// 14 -> 13, 28 -> 27, 55 -> 54, 56 -> 55. Float products miss these
	// edges both ways (0.29*100 = 28.999999999999996, 0.07*100 =
	// 7.000000000000001, 0.58*50 = 28.999999999999996).
	tests := []struct {
		bins, pct, want int
	}{
		{10, 0, 0}, {10, 30, 2}, {10, 31, 3}, {10, 100, 9}, {10, 1, 0}, {10, 10, 0}, {10, 11, 1},
		{50, 29, 14}, {50, 57, 28}, {50, 58, 28}, {50, 7, 3}, {50, 56, 27},
		{100, 29, 28}, {100, 57, 56}, {100, 58, 57}, {100, 7, 6}, {100, 14, 13}, {100, 28, 27},
		{100, 55, 54}, {100, 56, 55}, {100, 1, 0}, {100, 100, 99},
	}
	for _, tc := range tests {
		p := []Prediction{{float64(tc.pct) / 100, true}}
		r := Reliability(p, tc.bins)
		got := slices.IndexFunc(r, func(b ReliabilityBin) bool { return b.Count == 1 })
		if got != tc.want {
			t.Errorf("%d %% in %d bins: bin %d, want %d", tc.pct, tc.bins, got, tc.want)
		}
	}
}

func TestNaNConfidence(t *testing.T) {
	p := []Prediction{{0.9, true}, {math.NaN(), false}, {0.5, true}}
	if _, err := ECE(p, 10); err == nil {
		t.Error("ECE with a NaN confidence: want undefined")
	}
	if _, err := CalibrationError(p, Calibration{Beta: 2}); err == nil {
		t.Error("CalibrationError with a NaN confidence: want undefined")
	}
	if _, _, err := CalibrationErrorRange(p, Calibration{Beta: 2}, 10, 1); err == nil {
		t.Error("CalibrationErrorRange with a NaN confidence: want undefined")
	}
	n := 0
	for _, b := range Reliability(p, 10) {
		n += b.Count
	}
	if n != 2 {
		t.Errorf("Reliability counted %d predictions, want the 2 with a confidence", n)
	}
}

func TestICC21(t *testing.T) {
	// Shrout and Fleiss (1979), Table 2: 6 targets, 4 judges. BMS =
	// 11.2417, JMS = 32.4861, EMS = 1.0194; ICC(2,1) = (BMS - EMS) /
	// (BMS + 3 EMS + 4 (JMS - EMS)/6) = 10.2222/35.2778 = 0.2898 (the
	// paper prints .29).
	sf := [][]float64{{9, 2, 5, 8}, {6, 1, 3, 2}, {8, 4, 6, 8}, {7, 1, 2, 6}, {10, 5, 6, 9}, {6, 2, 4, 7}}
	got, err := ICC21(sf)
	if err != nil || math.Abs(got-0.289763779527559) > 1e-9 {
		t.Fatalf("ICC21 = %v, %v; want 0.28976", got, err)
	}
	if got, _ := ICC21([][]float64{{1, 1}, {5, 5}, {3, 3}}); !near(got, 1) {
		t.Fatalf("ICC21 of identical raters = %v, want 1", got)
	}
	// Raters who order the targets oppositely: negative.
	if got, _ := ICC21([][]float64{{1, 5}, {5, 1}, {3, 3}}); got >= 0 {
		t.Fatalf("ICC21 of opposite raters = %v, want < 0", got)
	}
	// A constant matrix has every mean square 0: 0/0, undefined (the
	// sums of 0.7s used to leave rounding residues that made it 1.714).
	// So is a NaN rating.
	for _, bad := range [][][]float64{{{1, 2}}, {{1}, {2}}, {{1, 2}, {3}}, {{2, 2}, {2, 2}},
		{{0.7, 0.7, 0.7}, {0.7, 0.7, 0.7}, {0.7, 0.7, 0.7}}, {{0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}, {0.1, 0.1}},
		{{1, math.NaN()}, {2, 3}}} {
		if _, err := ICC21(bad); err == nil {
			t.Errorf("ICC21(%v): want undefined", bad)
		}
	}
}

func TestAgreement(t *testing.T) {
	if m, _ := MAE([]float64{1, 2, 3}, []float64{2, 2, 5}); !near(m, 1) { // (1+0+2)/3
		t.Fatalf("MAE = %v, want 1", m)
	}
	if _, err := MAE(nil, nil); err == nil {
		t.Fatal("MAE of nothing: want undefined")
	}
	tests := []struct {
		x, y []float64
		tie  float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{3, 2, 1}, 0, 0},
		// Pairs (0,1) and (0,2) agree (loss, loss); (1,2) tie vs loss.
		{[]float64{1, 2, 2}, []float64{1, 2, 3}, 0, 2.0 / 3},
		// tie = 1: (0,1) tie/tie, (1,2) tie/tie, (0,2) x tie, y loss.
		{[]float64{1, 2, 2}, []float64{1, 2, 2.5 + 0.5}, 1, 2.0 / 3},
	}
	for _, tc := range tests {
		if got, _ := PairwiseAgreement(tc.x, tc.y, tc.tie); !near(got, tc.want) {
			t.Errorf("PairwiseAgreement(%v, %v, %v) = %v, want %v", tc.x, tc.y, tc.tie, got, tc.want)
		}
	}
}
