package analysis

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// weighted is a tiny benchmark over fixed scores: the "w" knob weights
// the second score component, so its ranking depends on the setting. The
// "extra" knob changes the calls: it adds system E to the collection.
// The "reps" knob is a resample count that Score only records in scored,
// with the value of "w". collects counts Collect calls.
type weighted struct {
	collects *atomic.Int32
	scored   *sync.Map
}

type toyScore struct {
	name string
	a, b float64
}

func (weighted) Name() string  { return "toy" }
func (weighted) Title() string { return "Toy" }
func (weighted) Knobs() []Knob {
	return []Knob{{Name: "w", Default: "0", Sweep: []string{"1", "10"}}, {Name: "extra", Default: "no", Calls: true}, {Name: "reps", Default: "100", Resamples: true}}
}

func (b weighted) Collect(ctx context.Context, in Input) (Collection, error) {
	b.collects.Add(1)
	// system: (a, b); score = a + w*b.
	// w=0: A 3, B 2, C 1, D 0          -> A B C D
	// w=1: A 3, B 2.5, C 1.2, D 0.9    -> A B C D
	// w=10: A 3, B 7, C 3, D 9         -> D B A C (A and C tie at 3: listed by name, sharing rank =3)
	data := []toyScore{{"A", 3, 0}, {"B", 2, 0.5}, {"C", 1, 0.2}, {"D", 0, 0.9}}
	if in.Settings.Get("extra", "no") == "yes" {
		data = append(data, toyScore{"E", 100, 0})
	}
	return data, nil
}

func (b weighted) Score(ctx context.Context, c Collection, s Settings) (*Result, error) {
	if b.scored != nil {
		b.scored.Store("w="+s.Get("w", "0")+" reps="+s.Get("reps", "100"), true)
	}
	w := map[string]float64{"0": 0, "1": 1, "10": 10}[s.Get("w", "0")]
	r := &Result{Benchmark: "toy", Scores: map[string]float64{}}
	var ss []toyScore
	for _, d := range c.([]toyScore) {
		ss = append(ss, toyScore{d.name, d.a + w*d.b, 0})
	}
	slices.SortStableFunc(ss, func(x, y toyScore) int {
		return cmp.Or(cmp.Compare(y.a, x.a), strings.Compare(x.name, y.name))
	})
	for _, s := range ss {
		r.Ranking = append(r.Ranking, s.name)
		r.Scores[s.name] = s.a
	}
	return r, nil
}

// TestSweepCollects checks that variants of knobs only Score reads reuse
// the baseline's collection and that a knob marked Calls collects again.
func TestSweepCollects(t *testing.T) {
	b := weighted{collects: new(atomic.Int32)}
	knobs := b.Knobs()
	knobs[1].Sweep = []string{"yes"}
	sr, err := Sweep(context.Background(), b, Input{}, knobs)
	if err != nil {
		t.Fatal(err)
	}
	if n := b.collects.Load(); n != 2 {
		t.Errorf("%d collects, want 2 (baseline and extra=yes)", n)
	}
	if got := sr.Variants[2].Ranking; !slices.Equal(got, []string{"E", "A", "B", "C", "D"}) {
		t.Errorf("extra=yes ranking %v", got)
	}
}

func TestSweep(t *testing.T) {
	b := weighted{collects: new(atomic.Int32)}
	sr, err := Sweep(context.Background(), b, Input{}, b.Knobs())
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Variants) != 2 {
		t.Fatalf("%d variants, want 2", len(sr.Variants))
	}
	if v := sr.Variants[0]; v.Rho != 1 || v.Tau != 1 || len(v.Moved) != 0 {
		t.Errorf("w=1: rho %v tau %v moved %v; want identical ranking", v.Rho, v.Tau, v.Moved)
	}
	// w=10 ranks D 1, B 2, A =3, C =3 (A and C tie at 3) against A 1, B 2,
	// C 3, D 4. Spearman with average ranks: x = (1 2 3 4), y = (3.5 2 3.5
	// 1) for A B C D; centred (-1.5 -.5 .5 1.5) and (1 -.5 1 -1.5): sxy =
	// -3, sxx = 5, syy = 4.5, rho = -3/sqrt(22.5) = -0.632456. Tau-b
	// pairs: AB disc, AC tied in y only, AD disc, BC conc, BD disc, CD
	// disc: (1 - 4)/sqrt(5*6) = -0.547723. Moved: A 1->=3 and D 4->1; C
	// keeps rank 3, now shared.
	v := sr.Variants[1]
	if d := v.Rho - (-3 / math.Sqrt(22.5)); d > 1e-9 || d < -1e-9 {
		t.Errorf("w=10 rho = %v, want -0.632456", v.Rho)
	}
	if d := v.Tau - (-3 / math.Sqrt(30)); d > 1e-9 || d < -1e-9 {
		t.Errorf("w=10 tau = %v, want -0.547723", v.Tau)
	}
	if strings.Join(v.Moved, "; ") != "A 1->=3; D 4->1" {
		t.Errorf("w=10 moved %v", v.Moved)
	}
	vt, ct := sr.Tables()
	if len(vt.Rows) != 2 || len(ct.Rows) != 4 || len(ct.Columns) != 3 {
		t.Fatalf("tables %dx%d and %dx%d", len(vt.Rows), len(vt.Columns), len(ct.Rows), len(ct.Columns))
	}
	if got := ct.Rows[3][2]; got.Num != -3 { // D: 1 - 4
		t.Errorf("rank change of D under w=10 = %v, want -3", got.Num)
	}
	if got := ct.Rows[2][2]; got.Num != 0 { // C: 3 - 3, shared now
		t.Errorf("rank change of C under w=10 = %v, want 0", got.Num)
	}
	if got := vt.Rows[1][vt.Col("ranking")].Text; got != "D > B > A = C" {
		t.Errorf("w=10 ranking %q, want D > B > A = C", got)
	}
	// w=10 scores, a + 10b: D 0+9 = 9, B 2+5 = 7, A 3, C 1+2 = 3
	if got := vt.Rows[1][vt.Col("scores")].Text; got != "9.00, 7.00, 3.00, 3.00" {
		t.Errorf("w=10 scores %q, want 9.00, 7.00, 3.00, 3.00", got)
	}
}

// TestSweepSkipsResamples checks that variants are scored with every
// Resamples knob at 0, except a variant of that knob itself, and the
// baseline with its own value.
func TestSweepSkipsResamples(t *testing.T) {
	b := weighted{collects: new(atomic.Int32), scored: new(sync.Map)}
	knobs := b.Knobs()
	knobs[0].Sweep = []string{"1"}
	knobs[2].Sweep = []string{"7"}
	if _, err := Sweep(context.Background(), b, Input{Settings: Settings{"reps": "50"}}, knobs); err != nil {
		t.Fatal(err)
	}
	var got []string
	b.scored.Range(func(k, _ any) bool { got = append(got, k.(string)); return true })
	slices.Sort(got)
	if want := []string{"w=0 reps=50", "w=0 reps=7", "w=1 reps=0"}; !slices.Equal(got, want) {
		t.Errorf("scored %q, want %q", got, want)
	}
}
