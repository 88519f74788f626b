package site

import (
	"testing"
	"time"
)

func TestTiming(t *testing.T) {
	t0 := time.Now()
	in := demoInput()
	t1 := time.Now()
	files, _ := build(in)
	t2 := time.Now()
	dir := t.TempDir()
	Write(dir, in)
	t3 := time.Now()
	t.Logf("input %v build %v write %v files %d", t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), len(files))
}
