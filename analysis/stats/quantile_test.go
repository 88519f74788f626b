package stats

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// FuzzQuantileUnsorted checks QuantileUnsorted against Quantile of the sorted
// values, bit for bit, on values read from the fuzzer's bytes (few
// distinct ones when small, so that ties are common).
func FuzzQuantileUnsorted(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, 0.025)
	f.Add([]byte{0, 0, 0, 0, 1, 1, 200}, 0.975)
	f.Add([]byte{7}, 0.5)
	f.Add([]byte{}, 0.5)
	f.Add([]byte{3, 255, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0}, 0.5)         // -0
	f.Add([]byte{3, 255, 1, 0, 0, 0, 0, 0, 0xf8, 0x7f, 1, 0, 2}, 0.975) // NaN
	f.Fuzz(func(t *testing.T, b []byte, q float64) {
		if !(q >= 0 && q <= 1) {
			return
		}
		var x []float64
		for len(b) > 0 {
			if b[0] == 255 && len(b) >= 9 { // a full float64
				x = append(x, math.Float64frombits(binary.LittleEndian.Uint64(b[1:9])))
				b = b[9:]
				continue
			}
			x = append(x, float64(b[0]%16)/4)
			b = b[1:]
		}
		want := slices.Clone(x)
		slices.Sort(want)
		w := Quantile(want, q)
		got := QuantileUnsorted(slices.Clone(x), q)
		if math.Float64bits(got) != math.Float64bits(w) && !(math.IsNaN(got) && math.IsNaN(w)) {
			t.Fatalf("QuantileUnsorted(%v, %v) = %v, want %v", x, q, got, w)
		}
	})
}

func TestSelectKth(t *testing.T) {
	for n := 1; n < 40; n++ {
		for k := range n {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64((i*7919 + n) % 5)
			}
			want := slices.Clone(x)
			slices.Sort(want)
			selectKth(x, k)
			if x[k] != want[k] || slices.Max(x[:k+1]) > x[k] || (k+1 < n && slices.Min(x[k+1:]) < x[k]) {
				t.Fatalf("n %d k %d: %v", n, k, x)
			}
		}
	}
}
