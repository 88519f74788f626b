package forecast

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/finrepro/finrepro/analysis/uncertainty"
	"github.com/finrepro/finrepro/results"
)

// Late policies: what happens to a prediction the isolation audit flags.
const (
	LateWrong   = "wrong"   // scored as incorrect (default): accuracy = correct / resolved tasks, as the protocol says
	LateExclude = "exclude" // left out of the system's scores, which rewards late answers
)

// Zero rules: how a recurrent task with ground truth 0 is scored.
const (
	ZeroAbsolute = "absolute" // |yhat| < eps_k (eps read as an absolute tolerance)
	ZeroExact    = "exact"    // yhat == 0
	ZeroExclude  = "exclude"  // not scored
)

// Options are the scoring settings the knobs control.
type Options struct {
	// Scale multiplies every tolerance eps_k.
	Scale float64
	// LatePolicy is LateExclude or LateWrong.
	LatePolicy string
	// ZeroRule is ZeroAbsolute, ZeroExact or ZeroExclude.
	ZeroRule string
	// ValidityWeeks is how long after t_e a task may stay pending before
	// it is void.
	ValidityWeeks int
	// Cluster is the unit the clustered statistics resample (ClusterTask,
	// ClusterCompany, ClusterIndicator or ClusterWeek) and ClusterReps
	// their resamples (uncertainty.go).
	Cluster     string
	ClusterReps int
	// Pairs are the pairs of systems compared on request (the pairs
	// knob).
	Pairs [][2]string
}

// DefaultOptions are the paper's settings.
func DefaultOptions() Options {
	return Options{Scale: 1, LatePolicy: LateWrong, ZeroRule: ZeroAbsolute, ValidityWeeks: 2, Cluster: ClusterTask, ClusterReps: uncertainty.DefaultReps}
}

// A Status is where a task is in its lifecycle at the evaluation time.
type Status int

// Task states.
const (
	Resolved Status = iota // ground truth known within the validity window: scored
	Pending                // not yet known, window still open: not scored
	Void                   // not known within the window: excluded from every score
)

// String returns "resolved", "pending" or "void".
func (s Status) String() string {
	return [...]string{"resolved", "pending", "void"}[s]
}

// StatusAt returns t's state at asOf with a validity window of weeks
// weeks after t_e.
func (t *Task) StatusAt(asOf time.Time, weeks int) Status {
	end := t.te.Add(time.Duration(weeks) * week)
	switch {
	case t.Resolved() && !t.tr.After(end) && !t.tr.After(asOf):
		return Resolved
	case !asOf.Before(end):
		return Void
	}
	return Pending
}

// A Prediction is one system's reply to one task, parsed and audited. It
// keeps no part of the reply's text (its strings are copies) and is
// small: a collection holds one per (task, system), 161,504 at 8x the
// full demo.
type Prediction struct {
	Answer string
	// Invalid says why the answer could not be read; empty when valid.
	Invalid string
	Value   float64 // recurrent forecast, in the task's unit
	// sec and nsec are when the prediction was made (Unix time), when
	// timed is set; see Recorded.
	sec  int64
	nsec int32
	// Undated counts cited sources without a readable publication time.
	Undated int32
	// via and key are the exchange that gave the prediction, when hasCall
	// is set, for the drill-down (see collection.call).
	via int32
	// Missing is set when the call had no reply; nothing else is then set.
	Missing bool
	Yes     bool // non-recurrent forecast
	// Late is set when the prediction was recorded after t_d.
	Late bool
	// Leaked is set when the prediction cites sources published after
	// t_d (the collection keeps them: see collection.leaks).
	Leaked  bool
	timed   bool
	hasCall bool
	key     [32]byte
}

// Recorded is when the prediction was made; zero when unknown.
func (p *Prediction) Recorded() time.Time {
	if !p.timed {
		return time.Time{}
	}
	return time.Unix(p.sec, int64(p.nsec)).UTC()
}

// Flagged reports whether the isolation audit flags p.
func (p *Prediction) Flagged() bool { return p.Late || p.Leaked }

// parse fills p, a zero Prediction, from reply r to task t and returns
// the sources it cites that were published after t_d.
func (p *Prediction) parse(t *Task, r results.Reply, logged time.Time, hasLog bool) (leaks []Evidence) {
	if r.Err != nil {
		p.Missing = true
		return nil
	}
	var at time.Time
	switch {
	case hasLog:
		at, p.timed = logged, true
	case r.RecordedAt != "":
		if rt, err := parseTime(r.RecordedAt); err == nil {
			at, p.timed = rt, true
		}
	}
	p.sec, p.nsec = at.Unix(), int32(at.Nanosecond())
	p.Late = !at.IsZero() && at.After(t.td)
	f, err := ParseReply(r.Text)
	for _, e := range f.Evidence {
		switch {
		case e.Time.IsZero():
			p.Undated++
		case e.Time.After(t.td):
			leaks = append(leaks, Evidence{URL: strings.Clone(e.URL), Published: strings.Clone(e.Published), Time: e.Time})
		}
	}
	p.Leaked = len(leaks) > 0
	if err != nil {
		p.Invalid = err.Error()
		return leaks
	}
	p.Answer = strings.Clone(f.Answer)
	if t.Kind == Recurrent {
		n, err := ParseNumber(f.Answer)
		if err != nil {
			p.Invalid = err.Error()
			return leaks
		}
		p.Value = n.In(t.Scale)
	} else {
		if p.Yes, err = ParseBinary(f.Answer); err != nil {
			p.Invalid = err.Error()
		}
	}
	return leaks
}

// Outcomes of scoring one prediction.
const (
	notScored int8 = -1
	wrong     int8 = 0
	correct   int8 = 1
)

// score returns the outcome of p, a prediction for task t, under opt with tolerances scaled by
// scale (on top of opt.Scale), given the task's status.
func score(t *Task, p *Prediction, st Status, opt Options, scale float64) int8 {
	switch {
	case p.Missing || st != Resolved:
		return notScored
	case p.Flagged() && opt.LatePolicy == LateExclude:
		return notScored
	case p.Flagged():
		return wrong
	case t.Kind == Recurrent && t.y == 0 && opt.ZeroRule == ZeroExclude:
		return notScored
	case p.Invalid != "":
		return wrong
	}
	if t.Kind == NonRecurrent {
		return b2o(p.Yes == t.yes)
	}
	eps := t.eps * opt.Scale * scale
	if t.y == 0 {
		if opt.ZeroRule == ZeroExact {
			return b2o(p.Value == 0)
		}
		return b2o(math.Abs(p.Value) < eps)
	}
	return b2o(math.Abs((p.Value-t.y)/t.y) < eps)
}

func b2o(ok bool) int8 {
	if ok {
		return correct
	}
	return wrong
}

// verdict explains the outcome of p, a prediction for task t, for the drill-down pages.
func verdict(t *Task, p *Prediction, st Status, opt Options, o int8) (summary, reason string) {
	switch {
	case p.Missing:
		return "missing", "no reply recorded"
	case st != Resolved:
		return st.String(), "task " + st.String() + ": not scored"
	case p.Flagged():
		why := "prediction recorded after the deadline"
		if !p.Late {
			why = "cites evidence published after the deadline"
		}
		if o == notScored {
			return "excluded", why
		}
		return "wrong", why + " (counted wrong)"
	case o == notScored:
		return "excluded", "ground truth is 0 and the zero rule excludes it"
	case p.Invalid != "":
		return "invalid", p.Invalid
	}
	s := "wrong"
	if o == correct {
		s = "correct"
	}
	if t.Kind == NonRecurrent {
		return s, fmt.Sprintf("forecast %s, outcome %s", yesNo(p.Yes), yesNo(t.yes))
	}
	eps := t.eps * opt.Scale
	if t.y == 0 {
		return s, fmt.Sprintf("forecast %s, outcome 0 (%s zero rule, eps %s)", fmtNum(p.Value), opt.ZeroRule, fmtNum(eps))
	}
	rel := math.Abs((p.Value - t.y) / t.y)
	return s, fmt.Sprintf("forecast %s, outcome %s: relative error %.4g vs eps %s", fmtNum(p.Value), fmtNum(t.y), rel, fmtNum(eps))
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

func fmtNum(x float64) string { return strconv.FormatFloat(x, 'g', 8, 64) }
