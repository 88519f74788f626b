package stats

import (
	"errors"
	"math"
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

func TestCalibrationOrderFree(t *testing.T) {
	a := []Prediction{{0.5, true}, {0.5, false}, {0.5, true}, {0.2, false}, {0.8, true}, {0.5, false}}
	b := []Prediction{a[5], a[1], a[4], a[0], a[3], a[2]}
	x, _ := CalibrationError(a, Calibration{Beta: 3})
	y, _ := CalibrationError(b, Calibration{Beta: 3})
	if x != y {
		t.Fatalf("input order changed the error: %v vs %v", x, y)
	}
}

func TestECEAndReliability(t *testing.T) {
	p := []Prediction{{0.9, true}, {0.9, false}, {0.5, true}, {0.1, false}}
	// Bin [0,.5): (.1,F): |0 - .1| weight 1/4. Bin [.5,1]: (.5,T) (.9,T)
	// (.9,F): conf 2.3/3, acc 2/3, |d| = .1, weight 3/4. ECE = .025+.075.
	e, err := ECE(p, 2)
	if err != nil || !near(e, 0.1) {
		t.Fatalf("ECE = %v, %v; want 0.1", e, err)
	}
	r := Reliability(append(p, Prediction{1, true}), 2)
	if r[0].Count != 1 || r[1].Count != 4 || !near(r[1].Accuracy, 0.75) || !near(r[1].Confidence, 3.3/4) {
		t.Fatalf("Reliability = %+v", r)
	}
	if _, err := ECE(nil, 10); err == nil {
		t.Fatal("ECE of nothing: want undefined")
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
	for _, bad := range [][][]float64{{{1, 2}}, {{1}, {2}}, {{1, 2}, {3}}, {{2, 2}, {2, 2}}} {
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
