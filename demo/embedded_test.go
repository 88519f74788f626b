package demo

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/finrepro/finrepro/cache/archive"
)

// TestEmbeddedIsCurrent rebuilds the small demo bundle and checks that it
// is byte for byte the one built into finrepro: a generator or protocol
// change that alters any request or response must come with a refreshed
// bundle ("go generate ./demo"). It also shows that a demo build is
// deterministic.
func TestEmbeddedIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole small demo")
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, err := Build(context.Background(), dir, Options{Scale: Small, Seed: 1}, All(), nil); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := archive.Write(&buf, dir); err != nil {
		t.Fatal(err)
	}
	if got, want := sha256.Sum256(buf.Bytes()), sha256.Sum256(Embedded()); got != want {
		t.Fatalf("demo/small.tar.zst is stale (built %s, embedded %s): run go generate ./demo",
			short(got), short(want))
	}
}

func short(h [32]byte) string { return fmt.Sprintf("%x", h[:6]) }
