package forecast

import (
	"fmt"
	"math"
	"strconv"
	"testing"
)

// refVerdict is verdict as it was before it built its reasons without
// fmt, kept as the reference FuzzVerdictMatchesRef compares it with.
func refVerdict(p *Prediction, st Status, opt Options, o int8) (summary, reason string) {
	t := p.Task
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

func FuzzVerdictMatchesRef(f *testing.F) {
	f.Add(12.5, 10.0, 0.05, 1.0, true, false, true, uint8(0), int8(1))
	f.Add(0.0, 0.0, 0.1, 2.0, false, true, true, uint8(1), int8(0))
	f.Add(-1e-300, 3e300, 1e-9, 0.5, true, true, false, uint8(2), int8(-1))
	f.Add(math.Inf(1), 7.0, 0.05, 1.0, false, false, true, uint8(0), int8(0))
	f.Add(math.NaN(), -0.0, math.NaN(), 1.0, false, false, true, uint8(3), int8(1))
	f.Add(0.123456789, 0.1234, 99999.5, 1e-7, false, false, true, uint8(4), int8(1))
	f.Fuzz(func(t *testing.T, value, y, eps, scale float64, pyes, tyes, recurrent bool, flags uint8, o int8) {
		task := &Task{Kind: NonRecurrent, y: y, yes: tyes, eps: eps}
		if recurrent {
			task.Kind = Recurrent
		}
		p := &Prediction{Task: task, Value: value, Yes: pyes, Missing: flags&8 != 0, Late: flags&16 != 0}
		if flags&32 != 0 {
			p.Invalid = "not a number"
		}
		opt := DefaultOptions()
		opt.Scale = scale
		opt.ZeroRule = []string{ZeroAbsolute, ZeroExact, ZeroExclude, "x%sy"}[flags%4]
		st := Status(int(flags>>6) % 3)
		s, r := verdict(p, st, opt, o)
		rs, rr := refVerdict(p, st, opt, o)
		if s != rs || r != rr {
			t.Fatalf("verdict = %q %q, want %q %q", s, r, rs, rr)
		}
	})
}

// FuzzQuoteMatchesFmt checks that problems' strconv.Quote of a system
// name is the %q it replaced.
func FuzzQuoteMatchesFmt(f *testing.F) {
	for _, s := range []string{"GPT-5 (T+S)", "", "a\"b\\c\n", "\xff\u2028é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := strconv.Quote(s), fmt.Sprintf("%q", s); got != want {
			t.Fatalf("strconv.Quote(%q) = %s, want %s", s, got, want)
		}
	})
}
