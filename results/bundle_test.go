package results

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sparseBundle returns a bundle folder whose one file is an 8 GiB sparse
// file, listed with its true size: hashing it takes seconds.
func sparseBundle(t *testing.T) *Bundle {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(8 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	m := &Manifest{Format: BundleFormat, Name: "sparse", Files: []File{{Path: "big.bin", Size: 8 << 30, SHA256: strings.Repeat("0", 64)}}}
	return &Bundle{Dir: dir, Manifest: m}
}

// TestVerifyInterrupt cancels a Verify that hashes 8 GiB: it returns
// within a second with the context's error.
func TestVerifyInterrupt(t *testing.T) {
	b := sparseBundle(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := b.Verify(ctx)
	if d := time.Since(start); d > 1100*time.Millisecond || !errors.Is(err, context.Canceled) {
		t.Errorf("verify returned %v after %v, want context.Canceled within a second", err, d)
	}
}

// TestVerifyReadsDeclaredSizeOnly lists the 8 GiB file as 10 bytes: the
// size mismatch is reported at once, without hashing it.
func TestVerifyReadsDeclaredSizeOnly(t *testing.T) {
	b := sparseBundle(t)
	b.Manifest.Files[0].Size = 10
	start := time.Now()
	probs, err := b.Verify(context.Background())
	if err != nil || len(probs) != 1 || !strings.Contains(probs[0].Msg, "manifest says 10") {
		t.Fatalf("problems %v, err %v", probs, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v: the file was read", d)
	}
}

// TestOpenBundleBoundedManifest gives OpenBundle a manifest larger than
// MaxManifestBytes: refused from its size, as an integrity failure.
func TestOpenBundleBoundedManifest(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(8 << 30)
	f.Close()
	_, err = OpenBundle(dir)
	var ie *IntegrityError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "limit") {
		t.Errorf("open: %v, want an integrity error about the limit", err)
	}
}
