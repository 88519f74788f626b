// Package trusttest keeps a test binary's trust records (cache/trust.go)
// out of the user's cache folder: they go to a temporary folder of the
// test binary's own.
package trusttest

import (
	"fmt"
	"os"
	"testing"
)

// Env is the variable naming the folder of trust records (the value of
// cache.TrustDirEnv, which cache's tests check).
const Env = "FINREPRO_TRUST_DIR"

// Main runs m's tests with Env set to a new temporary folder, removed
// afterwards, unless Env is set already, and exits with their status. A
// package calls it from its TestMain.
func Main(m *testing.M) {
	if os.Getenv(Env) != "" {
		os.Exit(m.Run())
	}
	d, err := os.MkdirTemp("", "finrepro-trust-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(Env, d)
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}
