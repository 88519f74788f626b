// Package site writes the static leaderboard site of a reproduction: an
// index of the benchmarks with a cross-benchmark view of systems, the
// provenance and the downloads; a page per benchmark with its tables and
// charts; a sensitivity page; a page per system; and a drill-down page per
// task with every system's output and every judge's verdict.
//
// The site is a folder of plain files that works from file:// and under
// any sub-path: every link is relative and no page loads anything from the
// network. Charts are drawn by Apache ECharts 5.4.3 (the version go-echarts
// v2.6.7 targets), which is embedded in this package with its licence and
// written once to assets/; assets/fetch-echarts.sh re-fetches it from the
// npm registry and checks its SHA-256.
//
// Chart options are built with go-echarts and written as JSON data blocks
// (<script type="application/json">) with <, > and & escaped, which a small
// script parses and hands to ECharts; no page has inline script, model text
// never reaches HTML unescaped, tooltips render as canvas text, and NaN or
// infinite values never reach a chart. Write is deterministic: two runs over
// the same Input give byte-identical files.
package site
