// Package hisrubric implements FinDeepResearch's HisRubric evaluation: a
// rule-based structure score of each markdown research report against a
// fixed hierarchical template (sections, subsections and tables, held as
// data), and an accuracy score over grading items, each extracted from the
// report's tables and graded by a judge under one of three protocols
// (accuracy, claim-based, criterion-based), with a deterministic numeric
// cross-check for numeric items.
//
// Inputs (docs/findeepresearch.md gives every field):
//
//	config.json       systems and the judge
//	structure.json    the analytical structure (sections, subsections, tables)
//	items.jsonl       the grading items: cell, capability, protocol
//	companies.jsonl   companies with market, language, industry and fiscal years
//	truth.jsonl       one ground truth per company and item
//
// Collect makes two rounds of calls: first every system's report plus, per
// company, the claim extraction and criterion writing from the ground
// truths; then, per report, one batched judge call per protocol.
package hisrubric
