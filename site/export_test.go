package site

// The browser harness, shared with the external test that builds the real
// demo site (it imports the command, which imports this package).
var (
	Chromium     = chromium
	EventProblem = eventProblem
	Artifacts    = artifacts
	WaitEmpty    = waitEmpty
)
