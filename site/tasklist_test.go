package site

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestTaskListFits checks that a benchmark with so many tasks that its
// page's task list alone passes MaxPage (3,000 tasks, each listed with
// a question of 160 characters that escape to 5 bytes each: about 2.7
// MB) is remade with fewer tasks listed, saying so, instead of failing
// the site; every task keeps its page.
func TestTaskListFits(t *testing.T) {
	r := &analysis.Result{Benchmark: "b", Title: "B", Ranking: []string{"s1"}}
	q := strings.Repeat("<", 200)
	for k := range 3000 {
		r.Details = append(r.Details, analysis.Detail{Task: fmt.Sprintf("task-%04d", k), System: "s1", Question: q, Score: "1"})
	}
	dir := t.TempDir()
	if _, err := Write(dir, Input{Results: []*analysis.Result{r}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "b.html"))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > MaxPage {
		t.Fatalf("b.html: %d bytes", len(b))
	}
	if !bytes.Contains(b, []byte("Only the first 500 of 3000 tasks are listed")) {
		t.Error("the cut task list does not say so")
	}
	ents, err := os.ReadDir(filepath.Join(dir, "tasks", "b"))
	if err != nil || len(ents) != 3000 {
		t.Errorf("%d task pages, %v", len(ents), err)
	}
}
