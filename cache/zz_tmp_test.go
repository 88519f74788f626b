package cache

import (
	"testing"
)

func BenchmarkZZOpenJudge(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		s, err := Open("/dev/shm/exp/cj", Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
