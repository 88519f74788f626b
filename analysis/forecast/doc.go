// Package forecast implements FinDeepForecast, a live financial
// forecasting benchmark: recurrent numeric tasks (scheduled disclosures)
// scored against a relative-error tolerance, non-recurrent Yes/No tasks
// scored by exact match, a task lifecycle (resolved, pending, void) and a
// temporal-isolation audit of late predictions and post-deadline evidence.
//
// Inputs (inputs/findeepforecast/ in a bundle; see docs/findeepforecast.md):
//
//	config.json          systems, evaluation time
//	tasks.jsonl          tasks (or tasks.csv with the same field names)
//	prediction_log.jsonl optional: recorded_at per system and task
//	tolerances.csv       optional: the tolerance table (kind,key,applies_to,epsilon)
//
// A recurrent forecast yhat of ground truth y is correct iff
// |(yhat - y) / y| < eps_k, eps_k from the tolerance table by the task's
// indicator category, else its unit type. When y = 0 the zero_rule knob
// decides: "absolute" (default) reads eps_k as an absolute tolerance,
// |yhat| < eps_k; "exact" wants yhat = 0; "exclude" leaves the task out.
// Accuracy is correct / scored, in percent, over resolved tasks only.
package forecast
