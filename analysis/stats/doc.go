// Package stats holds the statistics the benchmarks share: rank
// correlations with ties, agreement coefficients, calibration errors,
// seeded bootstrap intervals, and the statistics of means of clustered
// items (analytic cluster-robust CR1 standard errors, design effects,
// cluster bootstrap intervals, paired sign-flip tests, Holm adjustment,
// rank intervals, tie groups, Wilson intervals, minimum detectable
// differences). A function that returns an error returns an
// *UndefinedError (and a zero value, never NaN) when its statistic is not
// defined for the input: too few values, a constant input, or a NaN or
// infinite value among the inputs. Functions without an error result say
// in their comment what they do with such values.
package stats

// An UndefinedError says why a statistic is not defined for its input
// (too few values, a constant input, ...).
type UndefinedError struct{ Reason string }

func (e *UndefinedError) Error() string { return "undefined: " + e.Reason }

func undefined(reason string) error { return &UndefinedError{reason} }
