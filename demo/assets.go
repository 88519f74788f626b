package demo

import "embed"

// assets holds the papers' published tables and the ICBCBench authors'
// public data (MIT; assets/icbcbench/LICENSE) shipped in the demo bundle.
//
//go:embed assets
var assets embed.FS
