package analysis

import (
	"iter"
	"math"
	"strconv"
)

// Items are a benchmark's per-item records: one row per scored unit (an
// answer, a graded item, a judge's label), with the ids a reader needs to
// recompute the benchmark's tables from them alone. Rows come in a fixed
// order that depends only on the inputs and settings.
type Items struct {
	Fields []Field
	// Rows yields every row in order: one value per field in canonical
	// text (NumText for numbers, BoolText for booleans, the text itself
	// for strings); an empty number or boolean is null (not applicable or
	// undefined). A yielded slice is valid until the next; Rows may be
	// ranged over more than once, also concurrently. Rows are generated,
	// not stored: a full-scale benchmark has hundreds of thousands.
	Rows iter.Seq[[]string]
}

// A FieldKind is the type of an item field's values.
type FieldKind int

// Kinds of item fields.
const (
	TextField FieldKind = iota // a string
	NumField                   // a number, or null
	BoolField                  // true, false or null
)

// A Field is one column of the item records.
type Field struct {
	Name string
	Kind FieldKind
	// Doc says what the field holds, for docs/outputs.md and READMEs.
	Doc string
}

// NumText is the canonical text of a number field: the shortest decimal
// that reads back to x, or "" (null) for NaN and infinities.
func NumText(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	if x == 0 {
		return "0" // never "-0"
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}

// IntText is the canonical text of an integer number field.
func IntText(n int) string { return strconv.Itoa(n) }

// BoolText is the canonical text of a boolean field.
func BoolText(b bool) string { return strconv.FormatBool(b) }

// An ItemLister is a Benchmark that lists its per-item records. Items
// reads a collection of the benchmark's Collect under settings s, as
// Score does; neither it nor the rows it yields may modify the
// collection.
type ItemLister interface {
	Items(c Collection, s Settings) (*Items, error)
}
