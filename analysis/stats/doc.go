// Package stats holds the statistics the benchmarks share: rank
// correlations with ties, agreement coefficients, seeded bootstrap
// intervals, and the statistics of means of clustered items (analytic
// cluster-robust CR1 standard errors, design effects, cluster bootstrap
// intervals, paired sign-flip tests, Holm adjustment, rank intervals, tie
// groups, Wilson intervals, minimum detectable differences). Functions
// return an *UndefinedError, never NaN, when a statistic is not defined
// for their input.
package stats

// An UndefinedError says why a statistic is not defined for its input
// (too few values, a constant input, ...).
type UndefinedError struct{ Reason string }

func (e *UndefinedError) Error() string { return "undefined: " + e.Reason }

func undefined(reason string) error { return &UndefinedError{reason} }
