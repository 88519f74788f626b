package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/scores"
	"github.com/finrepro/finrepro/report"
	"github.com/finrepro/finrepro/site"
)

const scoresDoc = `Read a released per-task score matrix and print its leaderboard with
clustered intervals, paired comparisons of adjacent systems (Holm-adjusted),
rank intervals, tie groups, group breakdowns and, with --published, the
comparison with published means; --pair A,B adds the paired comparison of
any two systems. No bundle and no API call is needed.

FILE is CSV (a header row first) or, when it ends in .jsonl or .ndjson, JSON
Lines. Either holds one task per row with one column per system, or one score
per row with columns system and score. A missing score is an empty cell, NA
or null; each system's mean is over its answered tasks, and a second mean is
over the tasks every system answered. --cluster-col names the unit that was
sampled (company, query, base task of a translated pair); without it every
task is its own cluster. With --items BENCHMARK, FILE is the items.jsonl that
reproduce wrote for FinDeepResearch (one score per company and system: the
report accuracy) or FinDeepForecast (100 or 0 per task and system), and the
means are that benchmark's headline means. --published is a CSV file with a header row, the
system in the first column and its published mean in the second.

With --out DIR the tables are also written as DIR/xlsx/scores.xlsx (and
DIR/xlsx/all.xlsx), DIR/csv/scores/*.csv, DIR/json/scores/*.json,
DIR/latex/scores/*.tex and DIR/SHA256SUMS; DIR must be a folder of its own,
not the output folder of "finrepro reproduce". Every resampling is seeded, so
two runs give the same bytes. The statistics' conventions are in
docs/scores.md.`

func runScores(ctx context.Context, env *Env, args []string) error {
	fset := env.newFlags("scores", "scores FILE [flags]", scoresDoc)
	taskCol := fset.String("task-col", "task", "task identifier `COLUMN`")
	groupCols := fset.StringArray("group-col", nil, "`COLUMN` to break means down by, such as language or theme (repeatable)")
	clusterCol := fset.String("cluster-col", "", "cluster `COLUMN`: tasks sharing its value are resampled together")
	published := fset.String("published", "", "CSV `FILE` of published means (system, mean) to compare with")
	out := fset.String("out", "", "also write CSV, JSON, LaTeX, XLSX and SHA256SUMS into `DIR`")
	force := fset.Bool("force", false, "write into a non-empty --out folder that finrepro did not write (no file there is removed)")
	reps := fset.Int("reps", 10000, "bootstrap resamples and sampled sign patterns")
	seed := fset.Uint64("seed", 1, "seed of every resampling")
	synthetic := fset.Bool("synthetic", false, "label every output as synthetic data")
	items := fset.String("items", "", "FILE is the items.jsonl of reproduce's `BENCHMARK` (findeepresearch or findeepforecast), one score per task and system")
	pairs := fset.StringArray("pair", nil, "also compare two systems, `SYSTEM_A,SYSTEM_B` (repeatable; the requested_pairs table)")
	if err := parse(fset, args); err != nil {
		return err
	}
	if fset.NArg() != 1 {
		return usageErr("want exactly one FILE")
	}
	if *reps < 1 {
		return usageErr("--reps must be at least 1")
	}
	file := fset.Arg(0)
	var requested [][2]string
	for _, p := range *pairs {
		a, b, ok := strings.Cut(p, ",")
		if !ok || a == "" || b == "" || strings.Contains(b, ",") {
			return usageErr("--pair %q: want SYSTEM_A,SYSTEM_B", p)
		}
		requested = append(requested, [2]string{a, b})
	}
	opt := scores.Options{TaskCol: *taskCol, GroupCols: *groupCols, ClusterCol: *clusterCol}
	var m *scores.Matrix
	var err error
	if *items != "" {
		if !slices.Contains(scores.ItemBenchmarks, *items) {
			return usageErr("--items %q: want one of %s (the others' headlines are not means over tasks: docs/scores.md)", *items, strings.Join(scores.ItemBenchmarks, ", "))
		}
		if !fset.Changed("task-col") {
			opt.TaskCol = scores.ItemTaskCol(*items)
		}
		m, err = readItemsMatrix(file, *items, opt)
	} else {
		m, err = readMatrix(file, opt)
	}
	if err != nil {
		return err
	}
	cfg := scores.Config{Reps: *reps, Seed: *seed, Synthetic: *synthetic, Pairs: requested}
	if *published != "" {
		f, err := os.Open(*published)
		if err != nil {
			return err
		}
		cfg.Published, err = scores.ParsePublished(*published, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	res, err := scores.Analyse(m, cfg)
	if err != nil {
		return err
	}
	if *synthetic {
		fmt.Fprintln(env.Stdout, "SYNTHETIC DATA: these scores are labelled synthetic; they show how finrepro works, not how any system performs.")
	}
	width := terminalWidth(env)
	// the terminal shows narrowed tables; the files the full ones
	for i, t := range scores.Terminal(res) {
		if i > 0 {
			fmt.Fprintln(env.Stdout)
		}
		if err := report.WriteTerminal(env.Stdout, t, width); err != nil {
			return err
		}
	}
	if *out == "" {
		return nil
	}
	if err := checkScoresOut(*out); err != nil {
		return err
	}
	folder, err := claimOutputFolder(*out, *force)
	if err != nil {
		return err
	}
	prov := report.Provenance{Bundle: filepath.Base(file), Producer: "finrepro scores", Version: Version, Synthetic: *synthetic,
		Settings: [][2]string{{"reps", fmt.Sprint(*reps)}, {"seed", fmt.Sprint(*seed)}, {"task-col", opt.TaskCol}, {"items", *items},
			{"cluster-col", *clusterCol}, {"group-col", strings.Join(*groupCols, ",")}}}
	all := []*analysis.Result{res}
	// the same leaderboard as a site page, linking the files it writes
	names, err := writeTablesAndSite(folder, all, site.Input{Results: all, Provenance: prov, Downloads: report.Files(all, prov)}, prov, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nWrote %d files to %s.\n", len(names)+1, *out)
	return nil
}

// readMatrix opens and parses a score matrix.
func readMatrix(file string, opt scores.Options) (*scores.Matrix, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scores.Parse(file, f, opt)
}

// readItemsMatrix opens and parses a benchmark's items export.
func readItemsMatrix(file, benchmark string, opt scores.Options) (*scores.Matrix, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scores.ParseItems(file, f, benchmark, opt)
}

// checkScoresOut refuses an output folder that holds files "finrepro
// scores" did not write there (a reproduce run's workbooks or tables,
// which come with its site), because writing would replace
// xlsx/all.xlsx and the site, and pruning would remove the rest.
func checkScoresOut(out string) error {
	ours := func(rel string) bool {
		switch {
		case rel == "xlsx/"+scores.Benchmark+".xlsx", rel == "xlsx/all.xlsx":
			return true
		case strings.HasPrefix(rel, "site/"):
			// a reproduce run's site comes with its benchmarks' tables,
			// which are not ours
			return true
		}
		for _, d := range []string{"csv", "json", "latex"} {
			if strings.HasPrefix(rel, d+"/"+scores.Benchmark+"/") {
				return true
			}
		}
		return false
	}
	for _, d := range outputDirs {
		root := filepath.Join(out, d)
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p == root && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if e.IsDir() {
				return nil
			}
			rel, err := filepath.Rel(out, p)
			if err != nil {
				return err
			}
			if !ours(filepath.ToSlash(rel)) {
				return usageErr("--out %s holds %s, which finrepro scores did not write; give a folder of its own", out, filepath.ToSlash(rel))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
