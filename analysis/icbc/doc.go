// Package icbc implements ICBCBench, the dual-track (objective and
// subjective, English and Chinese) financial deep-research benchmark of
// the ICBC-led industry consortium.
//
// Objective track: a system answers each question with an explanation,
// an exact answer and a confidence; a judge compares the answer with the
// ground truth (the authors' prompt) and returns JSON with the extracted
// answer, reasoning, a yes/no verdict and the extracted confidence.
// Accuracy is reported per language, over text-only tasks and over all
// tasks, per domain, and with the RMS calibration error of Humanity's
// Last Exam.
//
// Subjective track: a system writes a report per task; a judge scores it
// against the task's expert rubric (parsed from the authors' markdown into
// dimensions and sub-dimensions), a citation judge checks each cited claim
// against its source, and source quality combines the authority tier of
// each cited domain with an exponential decay in its age at a fixed
// reference date. Subjective = 0.8 expert + 0.1 citation + 0.1 source and
// Overall = (Objective + Subjective) / 2 per language.
//
// The input formats are described in docs/icbcbench.md.
package icbc
