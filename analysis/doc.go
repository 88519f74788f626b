// Package analysis holds the result model every benchmark produces (named
// tables with charts, drill-down details and rankings) and the interface a
// benchmark implements. The benchmarks live in subpackages (consensus,
// icbc, hisrubric, forecast) over the shared statistics in analysis/stats.
//
// Analyses are pure: the same inputs and replies give the same result,
// byte for byte, whatever the map order, clock or machine.
package analysis
