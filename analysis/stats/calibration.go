package stats

import (
	"math"
	"slices"
)

// A Prediction is one answer's stated confidence (a probability in
// [0, 1]) and whether the answer was correct.
type Prediction struct {
	Confidence float64
	Correct    bool
}

// A Calibration says how CalibrationError cuts predictions into bins.
type Calibration struct {
	// Beta is the number of predictions per bin (100 in Humanity's Last
	// Exam; the ICBCBench authors also use 10).
	Beta int
	// SkipLast reproduces the original HLE implementation, which leaves
	// the last bin (the one that takes the remainder) out of the sum while
	// still dividing by the total count. With SkipLast, fewer than Beta
	// predictions have no bin at all (the original fails) and exactly one
	// bin gives 0. Without it every bin counts and fewer than Beta
	// predictions form a single bin, as in the ICBCBench authors' code.
	SkipLast bool
}

// sortPredictions returns a copy of p sorted by confidence, incorrect
// before correct on equal confidence, so that bins do not depend on the
// order of the input.
func sortPredictions(p []Prediction) []Prediction {
	s := slices.Clone(p)
	slices.SortStableFunc(s, func(a, b Prediction) int {
		switch {
		case a.Confidence < b.Confidence:
			return -1
		case a.Confidence > b.Confidence:
			return 1
		case a.Correct == b.Correct:
			return 0
		case !a.Correct:
			return -1
		}
		return 1
	})
	return s
}

// CalibrationError returns the RMS calibration error of Humanity's Last
// Exam: predictions sorted by confidence are cut into consecutive bins of
// c.Beta (the last bin takes the remainder), and the result is the square
// root of the bin-size-weighted mean of (mean confidence - accuracy)^2
// over the bins, as a fraction (multiply by 100 for percent).
func CalibrationError(p []Prediction, c Calibration) (float64, error) {
	n := len(p)
	if n == 0 {
		return 0, undefined("no predictions")
	}
	if c.Beta < 1 {
		return 0, undefined("bin size below 1")
	}
	nb := n / c.Beta
	if nb == 0 {
		if c.SkipLast {
			return 0, undefined("fewer predictions than one bin")
		}
		nb = 1
	}
	s := sortPredictions(p)
	sum := 0.0
	for b := 0; b < nb; b++ {
		if c.SkipLast && b == nb-1 {
			break
		}
		lo, hi := b*c.Beta, (b+1)*c.Beta
		if b == nb-1 {
			hi = n
		}
		conf, acc := binMeans(s[lo:hi])
		d := conf - acc
		sum += float64(hi-lo) / float64(n) * d * d
	}
	return math.Sqrt(sum), nil
}

func binMeans(p []Prediction) (conf, acc float64) {
	for _, x := range p {
		conf += x.Confidence
		if x.Correct {
			acc++
		}
	}
	return conf / float64(len(p)), acc / float64(len(p))
}

// A ReliabilityBin is one equal-width confidence bin of a reliability
// diagram.
type ReliabilityBin struct {
	Lo, Hi     float64 // the bin's confidence range [Lo, Hi); the last bin includes 1
	Count      int
	Confidence float64 // mean confidence of the bin's predictions; 0 when empty
	Accuracy   float64 // share correct; 0 when empty
}

// Reliability cuts [0, 1] into bins equal-width bins and returns each
// bin's count, mean confidence and accuracy: the data of a reliability
// diagram. Confidences outside [0, 1] are clamped.
func Reliability(p []Prediction, bins int) []ReliabilityBin {
	if bins < 1 {
		bins = 1
	}
	out := make([]ReliabilityBin, bins)
	for i := range out {
		out[i].Lo, out[i].Hi = float64(i)/float64(bins), float64(i+1)/float64(bins)
	}
	for _, x := range p {
		c := min(max(x.Confidence, 0), 1)
		i := min(int(c*float64(bins)), bins-1)
		out[i].Count++
		out[i].Confidence += c
		if x.Correct {
			out[i].Accuracy++
		}
	}
	for i := range out {
		if n := float64(out[i].Count); n > 0 {
			out[i].Confidence /= n
			out[i].Accuracy /= n
		}
	}
	return out
}

// ECE returns the expected calibration error with equal-width bins: the
// count-weighted mean of |accuracy - mean confidence| over the bins, as a
// fraction.
func ECE(p []Prediction, bins int) (float64, error) {
	if len(p) == 0 {
		return 0, undefined("no predictions")
	}
	e := 0.0
	for _, b := range Reliability(p, bins) {
		e += float64(b.Count) / float64(len(p)) * math.Abs(b.Accuracy-b.Confidence)
	}
	return e, nil
}
