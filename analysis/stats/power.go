package stats

// MinDetectable returns the minimum detectable difference of a two-sided
// test at level alpha with the given power, for an estimate with standard
// error se: (t_{1-alpha/2} + t_{power})·se, with Student's t quantiles on
// df degrees of freedom (the number of clusters minus 1 for a clustered
// estimate), or normal quantiles when df <= 0. With normal quantiles,
// alpha 0.05 and power 0.8 this is the textbook 2.80·se (1.96 + 0.84). It
// is the usual approximation that ignores the lower rejection tail.
func MinDetectable(se, df, alpha, power float64) float64 {
	if df <= 0 {
		return (NormalQuantile(1-alpha/2) + NormalQuantile(power)) * se
	}
	return (StudentTQuantile(1-alpha/2, df) + StudentTQuantile(power, df)) * se
}
