package results

import "fmt"

// An InputError is a problem in a user's input file, located by file, line
// and field. Line is 0 when the whole file is at fault; Field is empty when
// the whole line is.
type InputError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats e as "file:line: field: msg".
func (e *InputError) Error() string {
	s := e.File
	if e.Line > 0 {
		s += fmt.Sprintf(":%d", e.Line)
	}
	if e.Field != "" {
		s += ": " + e.Field
	}
	return s + ": " + e.Msg
}

// Errorf returns an *InputError for file, line and field.
func Errorf(file string, line int, field, format string, args ...any) error {
	return &InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// An IntegrityError is a bundle that fails its own checks: a manifest
// that cannot be read or parsed, or files that do not match it. Every
// command reports it alike (finrepro exits 4).
type IntegrityError struct{ Err error }

func (e *IntegrityError) Error() string { return e.Err.Error() }

// Unwrap returns what failed.
func (e *IntegrityError) Unwrap() error { return e.Err }
