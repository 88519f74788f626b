package site

import (
	"context"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
)

// TestWriteTasksEarly writes the task pages of one benchmark of the
// fixture (two benchmarks: icbcbench, then findeepforecast, which is
// synthetic) before the rest of the site, from an input that knows only
// that benchmark's result and the other's name and title, then the
// whole site given those pages. The oracle is the whole site written
// in one go into another folder. Whether the pages written early are
// kept or written again is told by a page overwritten in between: kept,
// it stays as overwritten (and its sum is still the right page's);
// written again, it is the right page again. They must be written again
// exactly when what they take from the other benchmark differs at the
// end: the synthetic flag, the navigation (a title), a system's page (an
// alias), the listing of the benchmark's details when they are listed.
func TestWriteTasksEarly(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bench  string          // the benchmark written early
		final  func(in *Input) // makes the final input from the fixture
		early  func(in *Input) // changes the early input
		rewrit bool            // the early pages must be written again
		listed bool            // the details are handed as listings (see withListings)
	}{
		{name: "second benchmark first", bench: "findeepforecast"},
		{name: "first benchmark first", bench: "icbcbench"},
		// the fixture's provenance is synthetic: without it, icbcbench's
		// pages are made as not synthetic, and findeepforecast's result
		// turns the site synthetic
		{name: "synthetic turns out", bench: "icbcbench", final: func(in *Input) { in.Provenance.Synthetic = false }, rewrit: true},
		{name: "another title", bench: "findeepforecast", early: func(in *Input) { in.Results[0].Title = "ICBC" }, rewrit: true},
		{name: "aliases unknown early", bench: "findeepforecast", early: func(in *Input) { in.Aliases = nil }, rewrit: true},
		{name: "listed", bench: "icbcbench", listed: true},
		{name: "another listing", bench: "icbcbench", listed: true, rewrit: true, early: func(in *Input) {
			in.Listings = withListings(Input{Results: []*analysis.Result{fixture(false).Results[0]}}).Listings
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			final := fixture(false)
			if tc.listed {
				final = withListings(final)
			}
			if tc.final != nil {
				tc.final(&final)
			}
			oracle := filepath.Join(t.TempDir(), "site")
			if _, err := WriteHashed(oracle, final); err != nil {
				t.Fatal(err)
			}
			want := hashes(t, oracle)

			early := final
			if tc.listed {
				// the benchmarks not finished have no listing yet
				early.Listings = map[string]*Listing{tc.bench: final.Listings[tc.bench]}
			}
			early.Results = nil
			for _, r := range final.Results {
				if r.Benchmark != tc.bench {
					r = &analysis.Result{Benchmark: r.Benchmark, Title: r.Title}
				}
				early.Results = append(early.Results, r)
			}
			if tc.early != nil {
				tc.early(&early)
			}
			root := filepath.Join(t.TempDir(), "site")
			tasks, err := WriteTasksHashed(context.Background(), root, early, tc.bench)
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks.Sums) == 0 {
				t.Fatal("no task page written")
			}
			for _, s := range tasks.Sums {
				if filepath.Dir(filepath.Dir(s.Path)) != "tasks" || filepath.Base(filepath.Dir(s.Path)) != tc.bench {
					t.Errorf("%s written early, not a task page of %s", s.Path, tc.bench)
				}
			}
			victim := filepath.Join(root, tasks.Sums[0].Path)
			if err := os.WriteFile(victim, []byte("overwritten"), 0o644); err != nil {
				t.Fatal(err)
			}
			final.Written = []*Tasks{tasks}
			sums, err := WriteHashed(root, final)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, s := range sums {
				got[s.Path] = hex.EncodeToString(s.Sum[:])
			}
			if !maps.Equal(got, want) {
				t.Errorf("sums differ from the site written in one go: %d files, want %d", len(got), len(want))
			}
			files := hashes(t, root)
			b, _ := os.ReadFile(victim)
			if kept := string(b) == "overwritten"; kept == tc.rewrit {
				t.Errorf("early pages written again: %v, want %v", !kept, tc.rewrit)
			}
			if !tc.rewrit {
				files[tasks.Sums[0].Path] = want[tasks.Sums[0].Path]
			}
			if !maps.Equal(files, want) {
				diffHashes(t, files, want)
			}
			if !slices.IsSortedFunc(sums, func(a, b report.FileSum) int { return strings.Compare(a.Path, b.Path) }) {
				t.Error("sums not sorted by path")
			}
		})
	}
}
