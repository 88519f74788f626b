//go:build !unix || solaris || aix

package batch

// lockState does nothing where flock is missing: there, one command at a
// time per folder is the user's to ensure (docs/batch.md).
func lockState(dir string) (func(), error) { return func() {}, nil }
