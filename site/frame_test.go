package site

import (
	"sync"
	"testing"
)

// TestTaskPagesShareFrame checks that the task pages of a site share one
// frame, rendered once, and that it is the frame each page gets when
// rendered alone: a task page's own path marks no navigation entry, so
// its frame cannot depend on it.
func TestTaskPagesShareFrame(t *testing.T) {
	s, err := newSite(fixture(true))
	if err != nil {
		t.Fatal(err)
	}
	var shared sync.Map
	tasks := 0
	bt := s.tasks["icbcbench"]
	for i := range bt.tasks {
		p := s.taskPage(s.in.Results[0], bt, i)
		tasks++
		got, err := frame(p, &shared)
		if err != nil {
			t.Fatal(err)
		}
		var alone sync.Map
		want, err := frame(p, &alone)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%s: the shared frame differs from its own", p.Path)
		}
	}
	n := 0
	shared.Range(func(any, any) bool { n++; return true })
	if tasks < 2 || n != 1 {
		t.Errorf("%d task pages rendered %d frames, want 1", tasks, n)
	}
}
