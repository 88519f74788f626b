package cache

import (
	"bytes"
	"io"
	"path/filepath"
	"testing"
	"time"
)

func TestTmpTiming(t *testing.T) {
	data := benchData()
	dir := filepath.Join(t.TempDir(), "c")
	t0 := time.Now()
	s, _ := Open(dir, Options{})
	t.Logf("open %v", time.Since(t0))
	t0 = time.Now()
	st, err := s.Load(bytes.NewReader(data), LoadOptions{Strict: true})
	t.Logf("load %v %+v %v", time.Since(t0), st, err)
	t0 = time.Now()
	s.Close()
	s, _ = Open(dir, Options{})
	t.Logf("reopen %v", time.Since(t0))
	t0 = time.Now()
	err = s.Dump(io.Discard)
	t.Logf("dump %v %v", time.Since(t0), err)
}
