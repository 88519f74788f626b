package icbc

import (
	"math"
	"slices"

	"github.com/finrepro/finrepro/analysis/stats"
)

// A trackScore is one system's scores on one language track, in points.
// NaN means undefined (nothing scored).
type trackScore struct {
	objAll, objText             float64
	expert, expertAll, expertPo float64
	citation, source            float64 // NaN when the system has no such component
	subjective, overall         float64
}

// track returns the indices of the objective and subjective tasks of
// language l.
func (r *run) track(l string) (obj, sub []int) {
	for i, o := range r.obj {
		if o.Language == l {
			obj = append(obj, i)
		}
	}
	for i, s := range r.sub {
		if s.Language == l {
			sub = append(sub, i)
		}
	}
	return obj, sub
}

func pct(num, den float64) float64 {
	if den == 0 {
		return math.NaN()
	}
	return 100 * num / den
}

// An objCell is one answer's part in the sums of score: judged, correct,
// judged text-only, correct text-only (each 0 or 1).
type objCell struct{ n, c, nt, ct float64 }

// A subCell is one report's part in the sums of score; a part that does
// not apply is 0 (adding 0 leaves a sum unchanged).
type subCell struct {
	e, eN    float64 // expert score, 1 when scored
	p, pN    float64 // expert score and 1 when above 0
	share    float64 // supported / judged claims
	cN       float64 // 1 when citations were evaluated
	sup, jud float64 // supported and judged claims
	src, sN  float64 // S_t, 1 when evaluated
}

// prepare computes every output's cells under the settings, the source
// score S_t included: the mean over dated references of authority x
// exp(-alpha x age in days) at the reference date; 0 with none.
func (r *run) prepare() {
	r.objCells = make([][]objCell, len(r.systems))
	r.subCells = make([][]subCell, len(r.systems))
	for si := range r.systems {
		r.objCells[si] = make([]objCell, len(r.obj))
		for ti, out := range r.objRes[si] {
			if out.missing {
				continue
			}
			x := &r.objCells[si][ti]
			text := r.obj[ti].TextOnly()
			x.n = 1
			if text {
				x.nt = 1
			}
			if out.correct {
				x.c = 1
				if text {
					x.ct = 1
				}
			}
		}
		r.subCells[si] = make([]subCell, len(r.sub))
		for ti, out := range r.subRes[si] {
			x := &r.subCells[si][ti]
			if !math.IsNaN(out.expert) {
				x.e, x.eN = out.expert, 1
				if out.expert > 0 {
					x.p, x.pN = out.expert, 1
				}
			}
			if out.judged >= 0 {
				if out.judged > 0 { // tasks without judged citations score 0
					x.share = float64(out.support) / float64(out.judged)
				}
				x.cN, x.sup, x.jud = 1, float64(out.support), float64(out.judged)
			}
			if out.sourced {
				sum := 0.0
				for _, ref := range out.refs {
					sum += r.o.tiers[ref.tier-1] * math.Exp(-r.o.alpha*ref.age)
				}
				if len(out.refs) > 0 {
					sum /= float64(len(out.refs))
				}
				x.src, x.sN = sum, 1
			}
		}
	}
}

// score computes system si's scores over the given objective and
// subjective task indices.
func (r *run) score(si int, obj, sub []int) trackScore {
	var o objCell
	oc := r.objCells[si]
	for _, i := range obj {
		x := &oc[i]
		o.n += x.n
		o.c += x.c
		o.nt += x.nt
		o.ct += x.ct
	}
	var s subCell
	sc := r.subCells[si]
	for _, i := range sub {
		x := &sc[i]
		s.e += x.e
		s.eN += x.eN
		s.p += x.p
		s.pN += x.pN
		s.share += x.share
		s.cN += x.cN
		s.sup += x.sup
		s.jud += x.jud
		s.src += x.src
		s.sN += x.sN
	}
	return r.finish(si, &o, &s)
}

// finish computes system si's scores from the sums of its cells.
func (r *run) finish(si int, o *objCell, s *subCell) trackScore {
	var t trackScore
	sys := &r.systems[si]
	t.objAll, t.objText = pct(o.c, o.n), pct(o.ct, o.nt)
	t.expertAll = nanDiv(s.e, s.eN)
	t.expertPo = nanDiv(s.p, s.pN)
	if s.eN > 0 && s.pN == 0 {
		t.expertPo = 0
	}
	t.expert = t.expertAll
	if r.o.positive {
		t.expert = t.expertPo
	}
	t.citation, t.source = math.NaN(), math.NaN()
	if sys.Citation {
		t.citation = 100 * nanDiv(s.share, s.cN)
		if r.o.pooled {
			t.citation = 100 * nanDiv(s.sup, s.jud)
			if s.cN > 0 && s.jud == 0 {
				t.citation = 0
			}
		}
	}
	if sys.Source {
		t.source = 100 * nanDiv(s.src, s.sN)
	}
	w := r.o.weights
	t.subjective = w.Expert * t.expert
	if !math.IsNaN(t.citation) {
		t.subjective += w.Citation * t.citation
	}
	if !math.IsNaN(t.source) {
		t.subjective += w.Source * t.source
	}
	t.overall = (t.objAll + t.subjective) / 2
	return t
}

func nanDiv(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// interval is a bootstrap percentile interval.
type interval struct{ lo, hi float64 }

// chosen returns the expert and citation sums of x that the settings
// average (see finish): each as a sum and the count it is divided by.
func (r *run) chosen(x *subCell) (ex, exN, cit, citN float64) {
	ex, exN, cit, citN = x.e, x.eN, x.share, x.cN
	if r.o.positive {
		ex, exN = x.p, x.pN
	}
	if r.o.pooled {
		cit, citN = x.sup, x.jud
	}
	return ex, exN, cit, citN
}

// bootstrap resamples tasks: every replicate draws, with replacement, the
// objective and subjective tasks of each language once, the same draw for
// every system (paired across systems). It returns per system the
// intervals of the EN - ZH overall delta and of the mean overall.
func (r *run) bootstrap() (delta, overall []interval) {
	ns := len(r.systems)
	delta, overall = make([]interval, ns), make([]interval, ns)
	for i := range delta {
		delta[i] = interval{math.NaN(), math.NaN()}
		overall[i] = interval{math.NaN(), math.NaN()}
	}
	if r.o.reps == 0 {
		return
	}
	eo, es := r.track("en")
	zo, zs := r.track("zh")
	rng := stats.NewRand(r.o.seed)
	draw := func(ix []int, buf []int) []int {
		buf = buf[:0]
		for range ix {
			buf = append(buf, ix[rng.IntN(len(ix))])
		}
		return buf
	}
	ds := make([][]float64, ns)
	ms := make([][]float64, ns)
	var b1, b2, b3, b4 []int
	for range r.o.reps {
		b1, b2, b3, b4 = draw(eo, b1), draw(es, b2), draw(zo, b3), draw(zs, b4)
		for si := range ns {
			en, zh := r.score(si, b1, b2).overall, r.score(si, b3, b4).overall
			if d := en - zh; !math.IsNaN(d) {
				ds[si] = append(ds[si], d)
				ms[si] = append(ms[si], (en+zh)/2)
			}
		}
	}
	for si := range r.systems {
		if len(ds[si]) == 0 {
			continue
		}
		delta[si] = quantiles(ds[si])
		overall[si] = quantiles(ms[si])
	}
	return
}

// quantiles returns the 2.5% and 97.5% quantiles of x, sorting it.
func quantiles(x []float64) interval {
	slices.Sort(x)
	return interval{stats.Quantile(x, 0.025), stats.Quantile(x, 0.975)}
}
