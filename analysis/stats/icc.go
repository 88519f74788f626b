package stats

// ICC21 returns the intraclass correlation ICC(2,1) of Shrout and Fleiss
// (two-way random effects, absolute agreement, single rater) of a
// complete ratings matrix: ratings[i][j] is rater j's score of target i.
// It is undefined with fewer than 2 targets or 2 raters, a ragged matrix,
// a value that is not a finite number, or no variance at all: a constant
// matrix, whose mean squares are all 0 and whose ratio is 0/0 (rounding
// would otherwise make it any number, 1.714 say).
func ICC21(ratings [][]float64) (float64, error) {
	n := len(ratings)
	if n < 2 {
		return 0, undefined("fewer than 2 targets")
	}
	k := len(ratings[0])
	if k < 2 {
		return 0, undefined("fewer than 2 raters")
	}
	constant := true
	for _, r := range ratings {
		if len(r) != k {
			return 0, undefined("ratings matrix is not complete")
		}
		if !allFinite(r) {
			return 0, undefined("a rating is not a number")
		}
		for _, x := range r {
			constant = constant && x == ratings[0][0]
		}
	}
	if constant {
		return 0, undefined("no variance: every rating is the same")
	}
	grand := 0.0
	rowMean := make([]float64, n)
	colMean := make([]float64, k)
	for i, r := range ratings {
		for j, x := range r {
			rowMean[i] += x / float64(k)
			colMean[j] += x / float64(n)
			grand += x
		}
	}
	grand /= float64(n * k)
	var ssr, ssc, sst float64
	for i := range rowMean {
		ssr += float64(k) * (rowMean[i] - grand) * (rowMean[i] - grand)
	}
	for j := range colMean {
		ssc += float64(n) * (colMean[j] - grand) * (colMean[j] - grand)
	}
	for _, r := range ratings {
		for _, x := range r {
			sst += (x - grand) * (x - grand)
		}
	}
	sse := sst - ssr - ssc
	msr := ssr / float64(n-1)
	msc := ssc / float64(k-1)
	mse := sse / float64((n-1)*(k-1))
	den := msr + float64(k-1)*mse + float64(k)*(msc-mse)/float64(n)
	if den == 0 {
		return 0, undefined("no variance")
	}
	return (msr - mse) / den, nil
}
