package cli

import (
	"cmp"
	"context"
	"path/filepath"
	"slices"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/site"
)

// earlyPages writes the task pages of each finished benchmark into the
// site folder of an output folder, one benchmark after the other, in a
// goroutine of its own, while the benchmarks after it are collected and
// finished: the task pages are most of a site's work (about a quarter of
// a full-scale reproduce's CPU, perf of bench/reproduce.sh), which the
// core left idle by the pipeline of collectInTurn then does, instead of
// both cores after the last benchmark. The rest of the site, which needs
// every result, is written at the end (writeOutputs), given the pages
// written here (site.Input.Written), which it writes again only when
// what they took from the other benchmarks turns out otherwise (see
// site.WriteTasksHashed). What it holds at once is the pages of one
// benchmark being written, and the queue of results the run holds
// anyway.
type earlyPages struct {
	in     site.Input // Results: those added, stand-ins for the others
	added  int
	spill  *detailSpill // the listings of the results added
	queue  chan earlyJob
	cancel context.CancelFunc
	done   chan struct{} // closed when the goroutine returned
	// set by the goroutine, read once done is closed
	tasks []*site.Tasks
	err   error
}

// An earlyJob is the task pages of one benchmark to write.
type earlyJob struct {
	in    site.Input
	bench string
}

// startEarlyPages starts writing task pages into o's site folder for
// s's benchmarks, as they are handed to add, each listed in o's marker
// once written. The folder's SHA256SUMS must be gone already: it must
// not vouch for a half-written site. The caller must call wait.
func (s *session) startEarlyPages(ctx context.Context, o *outputFolder, a *analysisRun) (*earlyPages, error) {
	aliases, err := loadAliases(s.bundle)
	if err != nil {
		return nil, err
	}
	stand := make([]*analysis.Result, len(s.benches))
	for i, bm := range s.benches {
		stand[i] = &analysis.Result{Benchmark: bm.Name(), Title: bm.Title()}
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &earlyPages{spill: a.spill, queue: make(chan earlyJob, len(s.benches)), cancel: cancel, done: make(chan struct{}),
		in: site.Input{Results: stand, Provenance: report.Provenance{Synthetic: s.bundle.Manifest.Synthetic}, Aliases: aliases,
			TaskDetails: a.taskDetails, Exchanges: exchangeLookup(s.store)}}
	go func() {
		defer close(e.done)
		for job := range e.queue {
			if e.err != nil {
				continue
			}
			t, err := site.WriteTasksHashed(ctx, filepath.Join(o.dir, "site"), job.in, job.bench)
			if err == nil {
				e.tasks = append(e.tasks, t)
			}
			e.err = cmp.Or(err, o.note(sitePaths(t.Sums)))
		}
	}()
	return e, nil
}

// add hands on the result r of the next benchmark, in order: its task
// pages are written once those of the benchmarks before are. The
// results added must not change until wait returns.
func (e *earlyPages) add(r *analysis.Result) {
	e.in.Results[e.added] = r
	e.added++
	in := e.in
	in.Results = slices.Clone(e.in.Results)
	in.Listings = e.spill.listings()
	e.queue <- earlyJob{in, r.Benchmark}
}

// wait waits for the pages of the results added and returns them, with
// the first error; when stop is true, the pages not written yet are
// not written.
func (e *earlyPages) wait(stop bool) ([]*site.Tasks, error) {
	if stop {
		e.cancel()
	}
	close(e.queue)
	<-e.done
	e.cancel()
	return e.tasks, e.err
}

// sitePaths returns the paths of sums, relative to the site folder, as
// paths relative to the output folder.
func sitePaths(sums []report.FileSum) []string {
	out := make([]string, len(sums))
	for i, s := range sums {
		out[i] = "site/" + s.Path
	}
	return out
}
