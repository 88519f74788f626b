// Package results holds finrepro's data model: the provider-neutral
// requests that benchmarks send to agents and judges, the bundle that
// carries a benchmark's inputs and recorded exchanges, and loaders that
// report bad input by file, line and field.
//
// It imports nothing of finrepro's and only the standard library, so
// every other package can depend on it.
package results
