package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// explainSimulated says, before anything is recorded, what cannot be:
// requests to the simulated provider "sim" are answered only while
// "finrepro demo" builds a bundle, so judges that are simulated cannot
// grade new outputs. It fails when a missing request itself goes to sim,
// since recording would fail on it.
func explainSimulated(w io.Writer, calls []results.Call, misses []replay.Miss) error {
	set := map[string]bool{}
	for _, c := range calls {
		if c.Label.Role == results.RoleJudge && c.Prompt.Provider == "sim" {
			set[c.Label.Benchmark+": "+c.Label.Name] = true
		}
	}
	n := 0
	for _, m := range misses {
		if m.Provider == "sim" {
			n++
		}
	}
	if len(set) == 0 && n == 0 {
		return nil
	}
	judges := slices.Sorted(maps.Keys(set))
	fmt.Fprintf(w, "This bundle's judges are simulated (provider sim): %s.\n", strings.Join(firstN(judges, 6), "; "))
	fmt.Fprintln(w, "The simulator answers only while \"finrepro demo\" builds a bundle, so a simulated judge cannot grade")
	fmt.Fprintln(w, "new outputs, and a request to sim cannot be recorded. To grow a leaderboard with real judges, make a")
	fmt.Fprintln(w, "bundle of your own whose configurations name real providers:")
	fmt.Fprintln(w, "  finrepro bundle create --out mine --from @demo --inputs BENCHMARK=DIR   (DIR: inputs naming real judges)")
	fmt.Fprintln(w, "  finrepro system add mine --benchmark BENCHMARK --name SYSTEM --provider P --model M")
	fmt.Fprintln(w, "FinDeepForecast has no judges: a system added there records with no simulated call (README, \"Adding your own agent\").")
	if n > 0 {
		return fmt.Errorf("%d of the %d missing requests go to the simulated provider sim; nothing was recorded", n, len(misses))
	}
	return nil
}

// printLateSystems warns about every system whose predictions were all
// recorded after their tasks' deadlines (FinDeepForecast's temporal
// isolation audit): a system recorded today on past tasks, typically.
func printLateSystems(w io.Writer, res []*analysis.Result) {
	for _, r := range res {
		t := r.Table("isolation_audit")
		if t == nil {
			continue
		}
		cm, cn, cl := t.Col("method"), t.Col("predictions"), t.Col("late")
		if cm < 0 || cn < 0 || cl < 0 {
			continue
		}
		for _, row := range t.Rows {
			n, late := row[cn].Num, row[cl].Num
			if n > 0 && late == n {
				fmt.Fprintf(w, "warning: %s: every prediction of %q (%d of %d) was recorded after its task's deadline: all are late and flagged by the temporal isolation audit (see the late_policy knob); a forecast counts only when recorded before the task's deadline.\n",
					r.Title, row[cm].Text, int(late), int(n))
			}
		}
	}
}
