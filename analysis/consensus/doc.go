// Package consensus implements FinResearchBench II: consensus-derived gold
// rubrics for financial deep-research reports.
//
// A panel of judges labels every candidate rubric of a query yes or no on
// every product's report, all of a query's rubrics batched in one prompt
// per report and judge. A rubric passes the consistency filter when the
// judges agree (unanimously, or k of n) on every report of its query, and
// the distinguishability filter when at least one report's majority label
// is yes and at least one is no. The survivors are the gold rubrics; a
// product's item pass rate is the share of gold rubrics it passes and its
// query macro pass rate the mean of its per-query pass rates.
//
// Run also measures within-model stability from repeated runs, validates
// the panel against human labels, and tests the ranking's robustness:
// leave one judge out, every held-out triple of products, and a filter
// ablation. The input schemas, the prompt and every table are documented
// in docs/finresearchbench2.md.
package consensus
