package scores

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var synthOpt = Options{TaskCol: "id", ClusterCol: "base", GroupCols: []string{"language", "theme"}}

func loadSynthetic(t testing.TB) *Matrix {
	t.Helper()
	f, err := os.Open("testdata/synthetic.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := Parse("testdata/synthetic.csv", f, synthOpt)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameMatrix reports how a and b differ, "" when they hold the same
// tasks, systems, scores (bit for bit, NaN for NaN), clusters and groups.
func sameMatrix(a, b *Matrix) string {
	switch {
	case !slices.Equal(a.Tasks, b.Tasks):
		return "tasks differ"
	case !slices.Equal(a.Systems, b.Systems):
		return "systems differ"
	case !slices.Equal(a.Cluster, b.Cluster):
		return "clusters differ"
	case len(a.Groups) != len(b.Groups):
		return "groups differ"
	}
	for g := range a.Groups {
		if a.Groups[g].Name != b.Groups[g].Name || !slices.Equal(a.Groups[g].Values, b.Groups[g].Values) {
			return "group " + a.Groups[g].Name + " differs"
		}
	}
	for s := range a.Scores {
		for t := range a.Scores[s] {
			x, y := a.Scores[s][t], b.Scores[s][t]
			if math.Float64bits(x) != math.Float64bits(y) && !(math.IsNaN(x) && math.IsNaN(y)) {
				return "score of " + a.Systems[s] + " on " + a.Tasks[t] + " differs"
			}
		}
	}
	return ""
}

// toJSONL writes m as wide JSON Lines with null for a missing score.
func toJSONL(t *testing.T, m *Matrix) []byte {
	var b bytes.Buffer
	for i, id := range m.Tasks {
		obj := map[string]any{"id": id, "base": m.Cluster[i]}
		for _, g := range m.Groups {
			obj[g.Name] = g.Values[i]
		}
		for s, sys := range m.Systems {
			if v := m.Scores[s][i]; math.IsNaN(v) {
				obj[sys] = nil
			} else {
				obj[sys] = v
			}
		}
		line, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// TestFormats checks that the wide CSV, the long CSV and wide JSON Lines
// of the synthetic matrix parse to the same matrix.
func TestFormats(t *testing.T) {
	m := loadSynthetic(t)
	if len(m.Tasks) != 40 || len(m.Systems) != 4 || m.Systems[0] != "Alpha (synthetic)" {
		t.Fatalf("parsed %d tasks, systems %v", len(m.Tasks), m.Systems)
	}
	if !math.IsNaN(m.Scores[2][0]) || m.Scores[0][0] != 77.5 { // systems sorted: Alpha, Beta, Delta, Gamma
		t.Fatalf("Delta on task 0 = %v (want missing), Alpha %v (want 77.5)", m.Scores[2][0], m.Scores[0][0])
	}
	var long bytes.Buffer
	if err := writeLong(&long, m); err != nil {
		t.Fatal(err)
	}
	l, err := Parse("long.csv", &long, Options{TaskCol: "task", ClusterCol: "cluster", GroupCols: synthOpt.GroupCols})
	if err != nil {
		t.Fatal(err)
	}
	if d := sameMatrix(m, l); d != "" {
		t.Errorf("long CSV: %s", d)
	}
	j, err := Parse("wide.jsonl", bytes.NewReader(toJSONL(t, m)), synthOpt)
	if err != nil {
		t.Fatal(err)
	}
	if d := sameMatrix(m, j); d != "" {
		t.Errorf("JSONL: %s", d)
	}
	// long JSON Lines, with a numeric task identifier
	lj := `{"id": 1, "base": "a", "language": "EN", "theme": "x", "system": "S", "score": 0.5}
{"id": 1, "base": "a", "language": "EN", "theme": "x", "system": "T", "score": null}
{"id": 2, "base": "b", "language": "ZH", "theme": "x", "system": "S", "score": 1}
`
	k, err := Parse("long.jsonl", strings.NewReader(lj), synthOpt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(k.Tasks, []string{"1", "2"}) || !slices.Equal(k.Systems, []string{"S", "T"}) || k.Scores[0][1] != 1 || !math.IsNaN(k.Scores[1][1]) {
		t.Errorf("long JSONL parsed to %+v", k)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, file, in string
		opt            Options
		want           string
	}{
		{"no task column", "m.csv", "task_id,A\n1,2\n", Options{}, `m.csv:1: field "task": no such column in the header`},
		{"not a number", "m.csv", "task,A,B\nt1,0.5,0.7\nt2,0.5,high\n", Options{}, `m.csv:3: field "B": score "high" is not a finite number`},
		{"infinite", "m.csv", "task,A\nt1,Inf\n", Options{}, `m.csv:2: field "A": score "Inf" is not a finite number`},
		{"NaN text", "m.csv", "task,A\nt1,NaN\n", Options{}, `m.csv:2: field "A": score "NaN" is not a finite number`},
		{"repeated task", "m.csv", "task,A\nt1,1\nt2,1\nt1,2\n", Options{}, `m.csv:4: field "task": task "t1" repeats line 2`},
		{"empty task", "m.csv", "task,A\n,1\n", Options{}, `m.csv:2: field "task": empty task identifier`},
		{"short row", "m.csv", "task,A,B\nt1,1\n", Options{}, `m.csv:2: field "column 1": wrong number of fields`},
		{"repeated column", "m.csv", "task,A,A\nt1,1,2\n", Options{}, `m.csv:1: field "A": column name repeats`},
		{"no rows", "m.csv", "task,A\n", Options{}, `m.csv:1: no task rows after the header`},
		{"empty", "m.csv", "", Options{}, `m.csv:1: empty file`},
		{"no systems", "m.csv", "task\nt1\n", Options{}, `m.csv:1: no system columns`},
		{"empty cluster", "m.csv", "task,c,A\nt1,,1\n", Options{ClusterCol: "c"}, `m.csv:2: field "c": empty cluster for task "t1"`},
		{"long repeat", "m.csv", "task,system,score\nt1,A,1\nt1,A,2\n", Options{}, `m.csv:3: field "score": second score of system "A" on task "t1"`},
		{"long cluster change", "m.csv", "task,c,system,score\nt1,x,A,1\nt1,y,B,2\n", Options{ClusterCol: "c"}, `m.csv:3: field "c": task "t1" has cluster "y" here and "x" on line 2`},
		{"long extra column", "m.csv", "task,system,score,note\nt1,A,1,x\n", Options{}, `m.csv:1: field "note": unexpected column in long format (task, system, score, group and cluster columns)`},
		{"jsonl not object", "m.jsonl", "{\"task\": \"a\", \"A\": 1}\n[1]\n", Options{}, `m.jsonl:2: not a JSON object: json: cannot unmarshal array into Go value of type map[string]interface {}`},
		{"jsonl null", "m.jsonl", "null\n", Options{}, `m.jsonl:1: not a JSON object: null`},
		{"jsonl string score", "m.jsonl", "{\"task\": \"a\", \"A\": \"1\"}\n", Options{}, `m.jsonl:1: field "A": score is not a number or null`},
		{"jsonl no task", "m.jsonl", "{\"task\": \"a\", \"A\": 1}\n\n{\"A\": 2}\n", Options{}, `m.jsonl:3: field "task": missing`},
		{"jsonl two values", "m.jsonl", "{\"task\": \"a\", \"A\": 1} {}\n", Options{}, `m.jsonl:1: more than one JSON value on the line`},
		{"jsonl huge number", "m.jsonl", "{\"task\": \"a\", \"A\": 1e999}\n", Options{}, `m.jsonl:1: field "A": score 1e999 is not a finite number`},
		{"jsonl long system", "m.jsonl", "{\"task\": \"a\", \"system\": 3, \"score\": 1}\n", Options{}, `m.jsonl:1: field "system": want a non-empty string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.file, strings.NewReader(tc.in), tc.opt)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v, want a *ParseError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	var h strings.Builder
	h.WriteString("task")
	for i := range MaxSystems + 1 {
		h.WriteString(",s" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strings.Repeat("0", i/26))
	}
	_, err := Parse("wide.csv", strings.NewReader(h.String()+"\n"), Options{})
	if err == nil || !strings.Contains(err.Error(), "wide.csv:1: more than 1000 systems") {
		t.Errorf("1001 systems: %v", err)
	}
}

func TestParseMissing(t *testing.T) {
	// empty and NA are missing, a BOM and spaces around numbers are fine
	m, err := Parse("m.csv", strings.NewReader("\uFEFFtask,A,B\nt1, 0.5 ,NA\nt2,,1\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Scores[0][0] != 0.5 || !math.IsNaN(m.Scores[1][0]) || !math.IsNaN(m.Scores[0][1]) || m.Scores[1][1] != 1 {
		t.Errorf("scores %v", m.Scores)
	}
	if !slices.Equal(m.Cluster, m.Tasks) {
		t.Errorf("no cluster column: clusters %v, want the tasks", m.Cluster)
	}
}

func TestParsePublished(t *testing.T) {
	p, err := ParsePublished("pub.csv", strings.NewReader("system,score\nA,73.2\nB,\nC,0.125\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 2 || p[0] != (Published{"A", 73.2, 0.05}) || p[1].System != "C" || math.Abs(p[1].Tolerance-0.0005) > 1e-15 {
		t.Errorf("published %+v", p)
	}
	_, err = ParsePublished("pub.csv", strings.NewReader("system,score\nA,1\nA,2\n"))
	if err == nil || err.Error() != `pub.csv:3: field "system": system "A" repeats line 2` {
		t.Errorf("repeat: %v", err)
	}
	_, err = ParsePublished("pub.csv", strings.NewReader("system,score\nA,x\n"))
	if err == nil || err.Error() != `pub.csv:2: field "score": score "x" is not a finite number` {
		t.Errorf("bad number: %v", err)
	}
}

// FuzzParse checks that Parse never panics and that whatever it accepts
// round-trips: writeLong then Parse gives the same matrix.
func FuzzParse(f *testing.F) {
	f.Add("m.csv", "task,A,B\nt1,0.5,\nt2,1,0\n", "", "")
	f.Add("m.csv", "task,c,g,system,score\nt1,x,EN,A,1\nt1,x,EN,B,NA\nt2,y,ZH,A,0.25\n", "c", "g")
	f.Add("m.jsonl", "{\"task\": \"a\", \"c\": 1, \"A\": 1, \"B\": null}\n{\"task\": 2, \"c\": 1, \"A\": -3e2}\n", "c", "")
	f.Add("m.jsonl", "{\"task\": \"a\", \"system\": \"S\", \"score\": 1}\n", "", "")
	f.Add("m.csv", "task,\"a,b\",\"c\"\"d\"\n\"t\n1\",1,2\n", "", "")
	f.Fuzz(func(t *testing.T, name, in, cluster, group string) {
		opt := Options{ClusterCol: cluster}
		if group != "" {
			opt.GroupCols = []string{group}
		}
		m, err := Parse(name, strings.NewReader(in), opt)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if len(m.Systems) == 0 || len(m.Tasks) == 0 {
			t.Fatal("accepted a matrix without tasks or systems")
		}
		for _, g := range m.Groups {
			switch g.Name {
			case "task", "cluster", "system", "score":
				return // writeLong cannot name such a group apart
			}
		}
		var b bytes.Buffer
		if err := writeLong(&b, m); err != nil {
			t.Fatal(err)
		}
		back, err := Parse("long.csv", &b, Options{TaskCol: "task", ClusterCol: "cluster", GroupCols: opt.GroupCols})
		if err != nil {
			t.Fatalf("reading back writeLong: %v\n%s", err, b.String())
		}
		m.File = back.File
		if d := sameMatrix(m, back); d != "" {
			t.Fatalf("round trip: %s", d)
		}
	})
}

// writeLong writes m in long CSV format (task, cluster when it has its
// column, groups, system, score), one line per cell with NA for a
// missing score, tasks in order and systems sorted: Parse reads it back
// to the same matrix with Options{TaskCol: "task", ClusterCol: "cluster",
// GroupCols: the group names}, unless a group is named task, cluster,
// system or score.
func writeLong(w io.Writer, m *Matrix) error {
	cw := csv.NewWriter(w)
	head := []string{"task", "cluster"}
	for _, g := range m.Groups {
		head = append(head, g.Name)
	}
	head = append(head, "system", "score")
	if err := cw.Write(head); err != nil {
		return err
	}
	for t, id := range m.Tasks {
		for s, sys := range m.Systems {
			v := "NA"
			if x := m.Scores[s][t]; !math.IsNaN(x) {
				v = strconv.FormatFloat(x, 'g', -1, 64)
			}
			rec := []string{id, m.Cluster[t]}
			for _, g := range m.Groups {
				rec = append(rec, g.Values[t])
			}
			rec = append(rec, sys, v)
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
