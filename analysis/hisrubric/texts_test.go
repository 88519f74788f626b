package hisrubric

import (
	"context"
	"reflect"
	"testing"

	"github.com/finrepro/finrepro/analysis"
	"github.com/finrepro/finrepro/analysis/texttest"
)

// TestTextsOutOfTheCollection checks that a collection given a
// TextStore keeps its reports' and items' texts there, not in itself,
// and that the result, details and item records are those of a run
// that keeps them in memory.
func TestTextsOutOfTheCollection(t *testing.T) {
	b := writeInputs(t, fixtureConfig(), fixtureStructure(), fixtureItems(), fixtureCompanies(), fixtureTruth())
	ctx := context.Background()
	run := func(texts analysis.TextStore) (*analysis.Result, []analysis.Detail, [][]string, *collection) {
		in := analysis.Input{Bundle: b, Answer: &fixtureAnswerer{}, Texts: texts}
		c, err := Benchmark{}.Collect(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Benchmark{}.Score(ctx, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		items, err := Benchmark{}.Items(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]string
		for r := range items.Rows {
			rows = append(rows, append([]string(nil), r...))
		}
		return res, res.AllDetails(), rows, c.(*collection)
	}
	store := &texttest.Store{}
	res, det, rows, col := run(store)
	memRes, memDet, memRows, _ := run(nil)
	res.LazyDetails, memRes.LazyDetails = nil, nil
	if !reflect.DeepEqual(res, memRes) {
		t.Error("results differ with the texts in a store")
	}
	if !reflect.DeepEqual(det, memDet) {
		t.Error("details differ with the texts in a store")
	}
	if !reflect.DeepEqual(rows, memRows) {
		t.Error("item records differ with the texts in a store")
	}
	if len(det) == 0 || store.Puts == 0 || store.Gets == 0 {
		t.Fatalf("%d details, %d puts, %d gets: the fixture does not exercise the store", len(det), store.Puts, store.Gets)
	}
	answers := 0
	for _, rep := range col.reports {
		if rep.texts != nil {
			t.Errorf("%s %d: the collection still holds %d item texts", rep.company.ID, rep.sys, len(rep.texts))
		}
		if rep.present && rep.check.Tables != nil {
			t.Errorf("%s %d: the collection still holds the report's tables", rep.company.ID, rep.sys)
		}
		if rep.present {
			for i, s := range store.Get(rep.itemTexts) {
				if i%textsPer == answerText && s != "" {
					answers++
				}
			}
		}
	}
	if answers == 0 {
		t.Error("no answer in the store")
	}
}
