// Package analysis holds the result model every benchmark produces (named
// tables with charts, drill-down details and rankings) and the interface a
// benchmark implements. The benchmarks live in subpackages (consensus,
// icbc, hisrubric, forecast) over the shared statistics in analysis/stats.
//
// A benchmark works in two steps: Collect answers its calls and parses the
// replies, Score computes tables from what was collected under some
// settings. Sensitivity sweeps (Sweep) collect once and score every
// variant, so a sweep costs scoring, not reading and parsing the cache
// again.
//
// Analyses are pure: the same inputs and replies give the same result,
// byte for byte, whatever the map order, clock or machine.
package analysis
