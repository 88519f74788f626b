package hisrubric

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadReply checks that every reply readReply accepts is the Reply
// encoding/json reads from it, and that ParseReply agrees with
// encoding/json on every reply.
func FuzzReadReply(f *testing.F) {
	pts := 6.5
	good, _ := json.Marshal(Reply{Items: []ReplyItem{
		{ID: "a", Verdict: "correct", Reason: "<b>\"x\"</b> & \u2028 é\n"},
		{ID: "b", Claims: []string{"one", "two \\ three"}, Criterion: []Point{{Point: "p", Max: 4}, {Point: "q", Max: 1e-7}}},
		{ID: "c", Covered: []bool{true, false}, Points: &pts},
	}})
	for _, s := range []string{
		string(good),
		"Here:\n```json\n" + string(good) + "\n```\nDone.",
		`{"items":[{"id":"a","verdict":"correct","covered":[true],"points":3}]}`,
		"```json\n{\"items\":null}\n```",
		`{"items":[]}`, `{"items":[{}]}`, `{ "items" : [ { "id" : "a" , "points" : -0.5e+1 } ] } `,
		`{"items":[{"id":"a","ID":"b"}]}`, `{"items":[{"id":"a","id":"b"}]}`, `{"Items":[{"id":"a"}]}`,
		`{"items":[{"id":"\u00e9\ud83d\ude00\/\t"}]}`, `{"items":[{"id":"a","points":1e400}]}`,
		`{"items":[{"id":"a","extra":{"x":[1,2]}}]}`, `{"items":[{"id":"a"}],"note":"x"}`,
		`{"items":[{"id":"a","claims":null}]}`, `{"items":[{"id":01}]}`, `{"items":[{"id":"a"}]} }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
		if i < 0 || j < i {
			return
		}
		var want Reply
		werr := json.Unmarshal([]byte(s[i:j+1]), &want)
		if r, ok := readReply(s[i : j+1]); ok && (werr != nil || !reflect.DeepEqual(*r, want)) {
			t.Fatalf("readReply(%q) = %+v; encoding/json %+v, %v", s, *r, want, werr)
		}
		got, err := ParseReply(s)
		if (err == nil) != (werr == nil && want.Items != nil) || err == nil && !reflect.DeepEqual(*got, want) {
			t.Fatalf("ParseReply(%q) = %+v, %v; encoding/json %+v, %v", s, got, err, want, werr)
		}
	})
}

// BenchmarkParseReply times readReply and encoding/json on a 60-item
// grading reply, the size of a company's batch.
func BenchmarkParseReply(b *testing.B) {
	var r Reply
	for i := range 60 {
		pts := float64(i % 11)
		r.Items = append(r.Items, ReplyItem{ID: fmt.Sprintf("S%d.%d", i/10, i%10), Points: &pts,
			Reason: "The prediction states the revenue of 1,721 million USD and the margin, but misses the segment split."})
	}
	js, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	s := string(js)
	b.Run("readReply", func(b *testing.B) {
		for b.Loop() {
			if _, ok := readReply(s); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var r Reply
			if err := json.Unmarshal(js, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
