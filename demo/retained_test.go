package demo

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"unsafe"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/cache"
	"github.com/finrepro/finrepro/replay"
	"github.com/finrepro/finrepro/results"
)

// A sizer adds up the bytes reachable from a value: every pointer's
// target, slice's backing array, string's bytes and map's entries once,
// however often they are referred to. It is an estimate (a map's buckets,
// an allocation's rounding up to its size class are left out), made the
// same way for every benchmark, whatever the garbage collector is doing.
type sizer struct {
	seen map[seen]bool
	// skip tells a type whose values are not counted (the inputs).
	skip func(reflect.Type) bool
	n    int64
}

// A seen is memory counted: where it starts, as what type, how long.
type seen struct {
	at uintptr
	t  reflect.Type
	n  int
}

// once reports whether the memory at p, as type t of length n, is counted
// for the first time.
func (s *sizer) once(p unsafe.Pointer, t reflect.Type, n int) bool {
	if p == nil {
		return false
	}
	key := seen{uintptr(p), t, n}
	if s.seen[key] {
		return false
	}
	s.seen[key] = true
	return true
}

// walk adds what v refers to; v itself is counted by its container.
func (s *sizer) walk(v reflect.Value) {
	if s.skip(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || !s.once(v.UnsafePointer(), v.Type(), 0) {
			return
		}
		e := v.Elem()
		if s.skip(e.Type()) {
			return
		}
		s.n += int64(e.Type().Size())
		s.walk(e)
	case reflect.String:
		if v.Len() > 0 && s.once(unsafe.Pointer(unsafe.StringData(v.String())), nil, v.Len()) {
			s.n += int64(v.Len())
		}
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 {
			return
		}
		if s.once(v.UnsafePointer(), v.Type(), v.Cap()) {
			s.n += int64(v.Cap()) * int64(v.Type().Elem().Size())
			for i := range v.Len() {
				s.walk(v.Index(i))
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			s.walk(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			s.walk(v.Field(i))
		}
	case reflect.Interface:
		if !v.IsNil() {
			e := v.Elem()
			if e.Kind() != reflect.Pointer { // boxed: the value is allocated
				s.n += int64(e.Type().Size())
			}
			s.walk(e)
		}
	case reflect.Map:
		if v.IsNil() || !s.once(v.UnsafePointer(), v.Type(), -1) {
			return
		}
		s.n += int64(v.Len()) * int64(v.Type().Key().Size()+v.Type().Elem().Size())
		for it := v.MapRange(); it.Next(); {
			s.walk(it.Key())
			s.walk(it.Value())
		}
	}
}

// isInputs tells the benchmarks' loaded inputs, which a collection refers
// to but does not make.
func isInputs(t reflect.Type) bool {
	return t.Name() == "Inputs"
}

// retainedPerItem is, by benchmark, the most bytes a collection of the
// small demo may hold beyond its inputs, per item it lists (a graded item
// of FinDeepResearch's reports, a system's forecast, a judge's labels of
// a report, an ICBCBench answer). Measured: icbcbench 774 (about 540 of
// them its tasks, which it points into the inputs for), findeepresearch
// 13 (an item's score index, marks and numeric value, 7 bytes, and its
// report's share), findeepforecast 128 (its predictions, 104 bytes each,
// with their exchanges' keys), finresearchbench2 7; the bounds leave about a
// third more. A
// collection that keeps its replies' texts in memory, not in the run's
// TextStore, holds several times these (FinDeepResearch 281, forecast
// 694 with a TextStore in memory; icbcbench 1,990 with its details'
// texts in memory).
var retainedPerItem = map[string]int64{
	"icbcbench":         1030,
	"findeepresearch":   17,
	"findeepforecast":   170,
	"finresearchbench2": 10,
}

// retainedWithInputs is, by benchmark, the most bytes per item a
// collection of the small demo may hold with its inputs, for the
// benchmark whose inputs' texts go to the run's TextStore as they are
// loaded. Measured: finresearchbench2 16 (25 when its rubrics' and
// reports' texts were kept in memory); the bound leaves about a third
// more.
var retainedWithInputs = map[string]int64{
	"finresearchbench2": 21,
}

// TestRetainedCollections builds the small demo, collects every
// benchmark from it as reproduce does (offline, with a TextStore in a
// file) and checks that what each collection holds beyond its inputs,
// per item it lists, stays under its bound: what a run holds while it
// scores a benchmark grows with the bundle by this much per item.
func TestRetainedCollections(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	if _, err := Build(context.Background(), dir, Options{Scale: Small, Seed: 1}, All(), nil); err != nil {
		t.Fatal(err)
	}
	b, err := results.OpenBundle(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.Open(b.CachePath(), cache.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	client := replay.New(store, replay.Config{Mode: replay.Offline})
	for _, g := range All() {
		bm := g.Benchmark()
		t.Run(bm.Name(), func(t *testing.T) {
			texts, err := newFileTexts(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer texts.close()
			c, err := bm.Collect(context.Background(), analysis.Input{Bundle: b, Answer: client, Texts: texts})
			if err != nil {
				t.Fatal(err)
			}
			items, err := bm.(analysis.ItemLister).Items(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for range items.Rows {
				n++
			}
			if n == 0 {
				t.Fatal("no items")
			}
			s := &sizer{seen: map[seen]bool{}, skip: isInputs}
			s.walk(reflect.ValueOf(&c).Elem())
			per := s.n / int64(n)
			t.Logf("%d bytes beyond the inputs for %d items: %d per item", s.n, n, per)
			if max := retainedPerItem[bm.Name()]; per > max {
				t.Errorf("the collection holds %d bytes per item beyond its inputs, more than %d", per, max)
			}
			all := &sizer{seen: map[seen]bool{}, skip: func(reflect.Type) bool { return false }}
			all.walk(reflect.ValueOf(&c).Elem())
			t.Logf("with its inputs: %d bytes, %d per item", all.n, all.n/int64(n))
			if max, ok := retainedWithInputs[bm.Name()]; ok && all.n/int64(n) > max {
				t.Errorf("the collection holds %d bytes per item with its inputs, more than %d", all.n/int64(n), max)
			}
		})
	}
}
