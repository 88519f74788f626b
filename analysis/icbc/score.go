package icbc

import (
	"math"

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

// score computes system si's scores over the given objective and
// subjective task indices (a task may repeat, as in a bootstrap
// resample).
func (r *run) score(si int, obj, sub []int) trackScore {
	var t trackScore
	sys := &r.systems[si]
	var n, c, nt, ct float64
	for _, i := range obj {
		out := &r.objRes[si][i]
		if out.missing {
			continue
		}
		n++
		if r.obj[i].TextOnly() {
			nt++
		}
		if out.correct {
			c++
			if r.obj[i].TextOnly() {
				ct++
			}
		}
	}
	t.objAll, t.objText = pct(c, n), pct(ct, nt)
	var eSum, eN, pSum, pN, cSum, cN, sup, jud, sSum, sN float64
	for _, i := range sub {
		out := &r.subRes[si][i]
		if !math.IsNaN(out.expert) {
			eSum += out.expert
			eN++
			if out.expert > 0 {
				pSum += out.expert
				pN++
			}
		}
		if out.judged >= 0 {
			share := 0.0 // tasks without judged citations score 0
			if out.judged > 0 {
				share = float64(out.support) / float64(out.judged)
			}
			cSum += share
			cN++
			sup += float64(out.support)
			jud += float64(out.judged)
		}
		if src := r.source[si][i]; !math.IsNaN(src) {
			sSum += src
			sN++
		}
	}
	t.expertAll = nanDiv(eSum, eN)
	t.expertPo = nanDiv(pSum, pN)
	if eN > 0 && pN == 0 {
		t.expertPo = 0
	}
	t.expert = t.expertAll
	if r.o.positive {
		t.expert = t.expertPo
	}
	t.citation, t.source = math.NaN(), math.NaN()
	if sys.Citation {
		t.citation = 100 * nanDiv(cSum, cN)
		if r.o.pooled {
			t.citation = 100 * nanDiv(sup, jud)
			if cN > 0 && jud == 0 {
				t.citation = 0
			}
		}
	}
	if sys.Source {
		t.source = 100 * nanDiv(sSum, sN)
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
	os := make([][]float64, ns)
	var b1, b2, b3, b4 []int
	for range r.o.reps {
		b1, b2, b3, b4 = draw(eo, b1), draw(es, b2), draw(zo, b3), draw(zs, b4)
		for si := range r.systems {
			en, zh := r.score(si, b1, b2).overall, r.score(si, b3, b4).overall
			if d := en - zh; !math.IsNaN(d) {
				ds[si] = append(ds[si], d)
				os[si] = append(os[si], (en+zh)/2)
			}
		}
	}
	for si := range r.systems {
		if len(ds[si]) == 0 {
			continue
		}
		delta[si] = quantiles(ds[si])
		overall[si] = quantiles(os[si])
	}
	return
}

func quantiles(x []float64) interval {
	sortFloats(x)
	return interval{stats.Quantile(x, 0.025), stats.Quantile(x, 0.975)}
}
