package demo

import _ "embed"

// small is the built-in demo bundle: "finrepro demo --scale small --seed 1"
// packed as .tar.zst. TestEmbeddedIsCurrent rebuilds it and fails when it
// is stale; refresh it with "go generate ./demo".
//
//go:generate go run ../cmd/finrepro demo --scale small --seed 1 --archive small.tar.zst
//go:embed small.tar.zst
var small []byte

// Embedded returns the built-in demo bundle as a .tar.zst archive.
func Embedded() []byte { return small }
