package stats

import (
	"cmp"
	"math"
	"math/big"
	"slices"
	"strconv"
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

// sortPredictions returns a copy of p sorted stably by confidence alone:
// tied confidences keep their order in p. That is what the ICBCBench
// authors' code does with the predictions in task-file order (it sorts by
// confidence only, np.argsort, which keeps the order of ties on inputs of
// the sizes they score; a stable sort keeps it always).
func sortPredictions(p []Prediction) []Prediction {
	s := slices.Clone(p)
	slices.SortStableFunc(s, func(a, b Prediction) int { return cmp.Compare(a.Confidence, b.Confidence) })
	return s
}

// CalibrationError returns the RMS calibration error of Humanity's Last
// Exam: predictions sorted by confidence are cut into consecutive bins of
// c.Beta (the last bin takes the remainder), and the result is the square
// root of the bin-size-weighted mean of (mean confidence - accuracy)^2
// over the bins, as a fraction (multiply by 100 for percent). Tied
// confidences keep their order in p (pass them in task-file order), so
// the error can depend on that order when a tie group straddles a bin
// edge; CalibrationErrorRange says by how much. It is undefined for no
// predictions, a bin size below 1 or a confidence that is not a number.
func CalibrationError(p []Prediction, c Calibration) (float64, error) {
	if err := c.check(p); err != nil {
		return 0, err
	}
	return c.sorted(sortPredictions(p)), nil
}

// check says why the calibration error of p is undefined.
func (c Calibration) check(p []Prediction) error {
	switch {
	case len(p) == 0:
		return undefined("no predictions")
	case c.Beta < 1:
		return undefined("bin size below 1")
	case c.SkipLast && len(p) < c.Beta:
		return undefined("fewer predictions than one bin")
	}
	for _, x := range p {
		if math.IsNaN(x.Confidence) {
			return undefined("a confidence is not a number")
		}
	}
	return nil
}

// sorted is the calibration error of predictions s already sorted by
// confidence, which check accepts.
func (c Calibration) sorted(s []Prediction) float64 {
	n := len(s)
	nb := max(n/c.Beta, 1)
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
	return math.Sqrt(sum)
}

// CalibrationErrorRange returns the smallest and largest calibration error
// over orders of the tied confidences: the order of p (CalibrationError's
// value) and perms random orders, each shuffling every group of equal
// confidences independently with a source seeded by seed. lo == hi when
// no tie group straddles a bin edge in any of them. It is undefined when
// CalibrationError is.
func CalibrationErrorRange(p []Prediction, c Calibration, perms int, seed uint64) (lo, hi float64, err error) {
	if err := c.check(p); err != nil {
		return 0, 0, err
	}
	s := sortPredictions(p)
	lo = c.sorted(s)
	hi = lo
	var groups [][2]int // [start, end) of every run of 2 or more equal confidences
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j].Confidence == s[i].Confidence {
			j++
		}
		if j-i > 1 {
			groups = append(groups, [2]int{i, j})
		}
		i = j
	}
	if len(groups) == 0 {
		return lo, hi, nil
	}
	r := NewRand(seed)
	for range perms {
		for _, g := range groups {
			t := s[g[0]:g[1]]
			r.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
		}
		e := c.sorted(s)
		lo, hi = min(lo, e), max(hi, e)
	}
	return lo, hi, nil
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
	Lo, Hi     float64 // the bin's confidence range (Lo, Hi]; the first bin includes 0
	Count      int
	Confidence float64 // mean confidence of the bin's predictions; 0 when empty
	Accuracy   float64 // share correct; 0 when empty
}

// Reliability cuts [0, 1] into bins equal-width bins, (lo, hi] with the
// first closed at 0 (a confidence of 0.3 falls in (0.2, 0.3] of 10 bins),
// and returns each bin's count, mean confidence and accuracy: the data of
// a reliability diagram. Bin membership is exact (see binIndex).
// Confidences outside [0, 1] are clamped; a NaN confidence falls in no
// bin (ECE is undefined then).
func Reliability(p []Prediction, bins int) []ReliabilityBin {
	if bins < 1 {
		bins = 1
	}
	out := make([]ReliabilityBin, bins)
	for i := range out {
		out[i].Lo, out[i].Hi = float64(i)/float64(bins), float64(i+1)/float64(bins)
	}
	for _, x := range p {
		if math.IsNaN(x.Confidence) {
			continue
		}
		c := min(max(x.Confidence, 0), 1)
		i := binIndex(c, bins)
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

// binIndex returns the bin (lo, hi] of bins equal-width bins of [0, 1]
// that holds confidence c in [0, 1], 0 for c = 0. It reads c as the
// shortest decimal that prints as c (0.29 for 29/100.0, whose binary value
// is a little below 0.29) and computes ceil(c*bins) - 1 in rational
// arithmetic, so a stated confidence of 29 % lands in (28, 29] of 100 bins
// and 58 % in (56, 58] of 50, where float products such as 0.29*100 =
// 28.999999999999996 or 0.07*100 = 7.000000000000001 would miss by one.
func binIndex(c float64, bins int) int {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(c, 'g', -1, 64))
	if !ok { // cannot happen for a finite float; fall back to the float edge
		return min(max(int(math.Ceil(c*float64(bins)))-1, 0), bins-1)
	}
	num := new(big.Int).Mul(r.Num(), big.NewInt(int64(bins)))
	q, m := new(big.Int).QuoRem(num, r.Denom(), new(big.Int))
	i := int(q.Int64())
	if m.Sign() == 0 {
		i-- // c*bins is an integer: c is the upper edge of the bin below
	}
	return min(max(i, 0), bins-1)
}

// ECE returns the expected calibration error with equal-width bins (as
// Reliability cuts them): the count-weighted mean of |accuracy - mean
// confidence| over the bins, as a fraction. It is undefined for no
// predictions or a confidence that is not a number.
func ECE(p []Prediction, bins int) (float64, error) {
	if len(p) == 0 {
		return 0, undefined("no predictions")
	}
	for _, x := range p {
		if math.IsNaN(x.Confidence) {
			return 0, undefined("a confidence is not a number")
		}
	}
	e := 0.0
	for _, b := range Reliability(p, bins) {
		e += float64(b.Count) / float64(len(p)) * math.Abs(b.Accuracy-b.Confidence)
	}
	return e, nil
}
