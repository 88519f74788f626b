package forecast

import (
	"math"
	"strconv"

	"github.com/finrepro/finrepro/analysis/stats"
	"github.com/finrepro/finrepro/analysis/uncertainty"
)

// Values of the cluster knob: the unit the clustered statistics of the
// overall table resample.
const (
	ClusterTask      = "task"      // every task its own cluster
	ClusterCompany   = "company"   // the task's entity: a company or an economy
	ClusterIndicator = "indicator" // the task's metric; a task without one is its own cluster
	ClusterWeek      = "week"      // the week of release
)

// clusterLabel is task ti's cluster under the cluster knob.
func (b *board) clusterLabel(ti int) string {
	t := b.in.Tasks[ti]
	switch b.opt.Cluster {
	case ClusterCompany:
		return "entity " + t.Entity
	case ClusterIndicator:
		if t.Metric != "" {
			return "metric " + t.Metric
		}
	case ClusterWeek:
		return "week " + strconv.Itoa(t.Week)
	}
	return "task " + t.ID
}

// clusterUnits names the clusters of each knob value in notes.
var clusterUnits = map[string]string{ClusterTask: "tasks", ClusterCompany: "companies and economies", ClusterIndicator: "indicators", ClusterWeek: "weeks"}

// board computes the clustered statistics of the accuracy ranking: each
// task is an item scoring 100 when correct and 0 when wrong (a task not
// scored for a system is missing for it), clustered by the cluster knob.
func (b *board) board(ranking []int) *uncertainty.Board {
	nt := len(b.in.Tasks)
	labels := make([]string, nt)
	for ti := range labels {
		labels[ti] = b.clusterLabel(ti)
	}
	cluster, _ := stats.ClusterIndex(labels)
	names := make([]string, len(ranking))
	scores := make([][]float64, len(ranking))
	for k, s := range ranking {
		names[k] = b.in.Config.Systems[s].Name
		y := make([]float64, nt)
		for ti, o := range b.out[s] {
			switch o {
			case correct:
				y[ti] = 100
			case wrong:
				y[ti] = 0
			default:
				y[ti] = math.NaN()
			}
		}
		scores[k] = y
	}
	return uncertainty.New(names, scores, cluster, uncertainty.Config{Reps: b.opt.ClusterReps, Unit: clusterUnits[b.opt.Cluster], Decimals: 1, Points: "points", Requested: b.opt.Pairs})
}
