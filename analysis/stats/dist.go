package stats

import "math"

// NormalQuantile returns the p-quantile of the standard normal
// distribution (1.959964 for p = 0.975), for 0 < p < 1.
func NormalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// StudentTCDF returns P(T <= t) for Student's t distribution with df
// degrees of freedom (df > 0), from the regularized incomplete beta
// function: P(|T| > |t|) = I_x(df/2, 1/2) with x = df/(df+t²).
func StudentTCDF(t, df float64) float64 {
	x := df / (df + t*t)
	tail := 0.5 * incBeta(df/2, 0.5, x)
	if t > 0 {
		return 1 - tail
	}
	return tail
}

// StudentTQuantile returns the p-quantile of Student's t distribution
// with df degrees of freedom (2.228139 for p = 0.975, df = 10), for
// 0 < p < 1 and df > 0, by bisection of StudentTCDF to full precision.
func StudentTQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for StudentTCDF(hi, df) < p && hi < 1e300 {
		lo, hi = hi, hi*2
	}
	for range 200 {
		m := lo + (hi-lo)/2
		if m == lo || m == hi {
			break
		}
		if StudentTCDF(m, df) < p {
			lo = m
		} else {
			hi = m
		}
	}
	return lo + (hi-lo)/2
}

// incBeta is the regularized incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (3rd ed., section 6.4), used
// directly for x < (a+1)/(a+b+2) and through the symmetry
// I_x(a,b) = 1 - I_{1-x}(b,a) otherwise, where it converges fast.
func incBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

// betaCF evaluates the continued fraction of incBeta by the modified
// Lentz method.
func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	// step is one term of the modified Lentz method: it updates d and c
	// by the partial numerator aa and returns the factor of h.
	step := func(aa float64) float64 {
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		return d * c
	}
	for m := 1; m <= 10000; m++ {
		fm := float64(m)
		m2 := 2 * fm
		h *= step(fm * (b - fm) * x / ((qam + m2) * (a + m2)))
		del := step(-(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2)))
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
