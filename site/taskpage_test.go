package site

import (
	"bytes"
	"strings"
	"testing"

	"github.com/finrepro/finrepro/analysis"
)

// TestTaskPage checks that appendTask writes the bytes the task templates
// write (with the body in place of its marker), for plain and hostile
// inputs, synthetic or not, with questions empty, cut or whole.
func TestTaskPage(t *testing.T) {
	long := analysis.Detail{Task: "long <task> & 'q'+1", System: "sys \"x\"", Question: strings.Repeat("Why <b>? & ", 1<<17), Output: "out"}
	empty := analysis.Detail{Task: "no question", System: "sys"}
	for _, c := range []struct {
		name string
		in   Input
	}{
		{"plain", fixture(false)},
		{"evil", fixture(true)},
		{"synthetic", func() Input {
			in := fixture(true)
			in.Provenance.Synthetic = true
			r := *in.Results[0]
			r.Details = append([]analysis.Detail{long, empty}, r.Details...)
			r.Title = "Bench <&> 'title'"
			in.Results[0] = &r
			return in
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := newSite(c.in)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, p := range s.pages() {
				if p.Task == nil {
					continue
				}
				n++
				var tmpl bytes.Buffer
				if err := pageTemplates[p.Kind].ExecuteTemplate(&tmpl, "layout", p); err != nil {
					t.Fatal(err)
				}
				want := bytes.Replace(tmpl.Bytes(), []byte(partMarker), p.Task.appendBody(nil), 1)
				if got := p.appendTask(nil); !bytes.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("%s: differs from the template at byte %d:\ngot  %q\nwant %q", p.Path, i,
						got[max(i-80, 0):min(i+80, len(got))], want[max(i-80, 0):min(i+80, len(want))])
				}
			}
			if n == 0 {
				t.Fatal("no task pages")
			}
		})
	}
}
