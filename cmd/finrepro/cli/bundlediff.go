package cli

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/results"
)

const bundleDiffDoc = `Compare two bundles (folders, .tar.zst archives or @demo): which input and
published files differ, which systems and judges each benchmark has in one
and not the other, which exchanges of the caches differ (added, removed, or
another response under the same key), and which published cells would
change: every cell of a published table whose computed value in B differs
from the one in A, with its verdict under the default tolerance. Both
bundles are verified and replayed offline; requests missing from a cache
are counted, not fatal.`

func runBundleDiff(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("bundle diff", "bundle diff A B", bundleDiffDoc)
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 2 {
		return usageErr("bundle diff: want two bundles A and B")
	}
	var sides [2]*diffSide
	for i := range sides {
		arg := fset.Arg(i)
		if arg == builtinDemo {
			arg = ""
		}
		s, err := openSession(ctx, env, bundleArg{path: arg}, nil, nil)
		if err != nil {
			return err
		}
		defer s.close()
		d := &diffSide{s: s, calls: &callLog{next: s.client}}
		if _, d.res, err = collectAll(ctx, s.bundle, s.benches, d.calls, nil, true, nil, nil); err != nil {
			return err
		}
		if d.comps, err = compareAll(s.bundle, d.res, -1); err != nil {
			return err
		}
		if d.exact, err = compareAll(s.bundle, d.res, 0); err != nil {
			return err
		}
		sides[i] = d
	}
	a, b := sides[0], sides[1]
	w := env.Stdout
	fmt.Fprintf(w, "A: %s (%s)\nB: %s (%s)\n\n", fset.Arg(0), a.s.bundle.Manifest.Name, fset.Arg(1), b.s.bundle.Manifest.Name)

	var files, cacheFiles []results.Change
	for _, c := range results.DiffFiles(a.s.bundle.Manifest.Files, b.s.bundle.Manifest.Files) {
		if strings.HasPrefix(c.Path, results.CacheDir+"/") {
			cacheFiles = append(cacheFiles, c)
		} else {
			files = append(files, c)
		}
	}
	fmt.Fprintf(w, "Files (inputs, published tables, aliases): %d differ\n", len(files))
	for _, c := range files {
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintln(w)

	fmt.Fprintln(w, "Systems and judges:")
	same := true
	for _, bench := range unionBenchmarks(a, b) {
		for _, role := range []results.Role{results.RoleSystem, results.RoleJudge} {
			na, nb := a.names(bench, role), b.names(bench, role)
			for _, n := range na {
				if !slices.Contains(nb, n) {
					fmt.Fprintf(w, "  %s: %s %q only in A\n", bench, role, n)
					same = false
				}
			}
			for _, n := range nb {
				if !slices.Contains(na, n) {
					fmt.Fprintf(w, "  %s: %s %q only in B\n", bench, role, n)
					same = false
				}
			}
		}
	}
	if same {
		fmt.Fprintln(w, "  the same in both")
	}
	fmt.Fprintln(w)

	added, removed, changed, err := diffStores(a.s.store, b.s.store)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Exchanges: %d only in A, %d only in B, %d with another response (cache files: %d differ)\n", len(removed), len(added), len(changed), len(cacheFiles))
	for _, l := range [][2]any{{"only in A", removed}, {"only in B", added}, {"changed", changed}} {
		ks := l[1].([]string)
		for i, k := range ks {
			if i == 10 {
				fmt.Fprintf(w, "  ... and %d more %s\n", len(ks)-10, l[0])
				break
			}
			fmt.Fprintf(w, "  %s: %s\n", l[0], k)
		}
	}
	fmt.Fprintln(w)

	cells := diffCells(a, b)
	fmt.Fprintf(w, "Published cells that would change from A to B: %d\n", len(cells))
	for _, c := range cells {
		fmt.Fprintf(w, "  %s\n", c)
	}
	for _, d := range sides {
		for _, r := range d.res {
			if r.Missing > 0 {
				fmt.Fprintf(w, "note: %s has %d calls not in its cache (%s)\n", r.Benchmark, r.Missing, d.s.bundle.Manifest.Name)
			}
		}
	}
	return nil
}

// A diffSide is one bundle of a diff, replayed.
type diffSide struct {
	s     *session
	calls *callLog
	res   []*analysis.Result
	comps []analysis.Comparison // under the default tolerance
	exact []analysis.Comparison // tolerance 0: every cell not equal to the published one
}

// names lists the names of the given role that benchmark bench called,
// with, for systems, those its headline ranking names (FinResearchBench
// II's products write no calls of their own), sorted.
func (d *diffSide) names(bench string, role results.Role) []string {
	set := map[string]bool{}
	for _, c := range d.calls.all() {
		if c.Label.Benchmark == bench && c.Label.Role == role {
			set[c.Label.Name] = true
		}
	}
	if role == results.RoleSystem {
		for _, r := range d.res {
			if r.Benchmark == bench {
				for _, n := range r.Ranking {
					set[n] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(set))
}

func unionBenchmarks(a, b *diffSide) []string {
	var out []string
	for _, n := range benchmarkNames() {
		if a.s.bundle.Has(n) || b.s.bundle.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// diffStores lists the keys only in b (added), only in a (removed) and in
// both with other responses (changed), each as "provider model key".
func diffStores(a, b *cache.Store) (added, removed, changed []string, err error) {
	ka, err := a.Keys()
	if err != nil {
		return nil, nil, nil, err
	}
	kb, err := b.Keys()
	if err != nil {
		return nil, nil, nil, err
	}
	inA := map[cache.Key]bool{}
	for _, k := range ka {
		inA[k] = true
	}
	inB := map[cache.Key]bool{}
	for _, k := range kb {
		inB[k] = true
	}
	describe := func(s *cache.Store, k cache.Key) string {
		x, err := s.Get(k)
		if err != nil {
			return k.String() + " (unreadable: " + err.Error() + ")"
		}
		return fmt.Sprintf("%s %s %s", x.Meta.Provider, x.Meta.Model, k.Str())
	}
	for _, k := range ka {
		if !inB[k] {
			removed = append(removed, describe(a, k))
			continue
		}
		ra, _, err1 := a.GetResponse(k)
		rb, _, err2 := b.GetResponse(k)
		if err1 != nil || err2 != nil || !bytes.Equal(ra, rb) {
			changed = append(changed, describe(b, k))
		}
	}
	for _, k := range kb {
		if !inA[k] {
			added = append(added, describe(b, k))
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	slices.Sort(changed)
	return added, removed, changed, nil
}

// diffCells lists the published cells whose computed value differs
// between a and b. A cell missing from a tolerance-0 comparison equals
// the published value exactly.
func diffCells(a, b *diffSide) []string {
	type cellKey struct{ bench, table, row, col string }
	type cellVal struct {
		published, computed string
	}
	index := func(cs []analysis.Comparison) (map[cellKey]cellVal, map[[2]string]string) {
		cells := map[cellKey]cellVal{}
		verdicts := map[[2]string]string{}
		for _, c := range cs {
			verdicts[[2]string{c.Benchmark, c.Table}] = c.Verdict
			for _, d := range c.Cells {
				cells[cellKey{c.Benchmark, c.Table, d.Row, d.Column}] = cellVal{d.Published, d.Computed}
			}
		}
		return cells, verdicts
	}
	ca, _ := index(a.exact)
	cb, _ := index(b.exact)
	ta, va := index(a.comps)
	tb, vb := index(b.comps)
	keys := map[cellKey]bool{}
	for k := range ca {
		keys[k] = true
	}
	for k := range cb {
		keys[k] = true
	}
	var out []string
	for k := range keys {
		x, okA := ca[k]
		y, okB := cb[k]
		if okA && okB && x.computed == y.computed {
			continue
		}
		pub := x.published + y.published
		if okA && okB {
			pub = x.published
		}
		av, bv := x.computed, y.computed
		if !okA {
			av = pub
		}
		if !okB {
			bv = pub
		}
		verdict := func(t map[cellKey]cellVal) string {
			if _, bad := t[k]; bad {
				return analysis.Differs
			}
			return analysis.Reproduced
		}
		out = append(out, fmt.Sprintf("%s %s %s / %s: published %s; A %s (%s), B %s (%s)",
			k.bench, k.table, k.row, k.col, pub, av, verdict(ta), bv, verdict(tb)))
	}
	for t, v := range vb {
		if w, ok := va[t]; ok && w != v {
			out = append(out, fmt.Sprintf("%s %s: verdict %s in A, %s in B", t[0], t[1], w, v))
		}
	}
	slices.Sort(out)
	return out
}

// A callLog answers calls through next and keeps every call it was
// asked, in order of arrival.
type callLog struct {
	next  results.Answerer
	mu    sync.Mutex
	calls []results.Call
}

// Answer logs calls and answers them through next.
func (l *callLog) Answer(ctx context.Context, calls []results.Call) []results.Reply {
	l.mu.Lock()
	l.calls = append(l.calls, calls...)
	l.mu.Unlock()
	return l.next.Answer(ctx, calls)
}

func (l *callLog) all() []results.Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}
